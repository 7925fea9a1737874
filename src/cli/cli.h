/* tumbler, the command-line tool: what the command files share.
 *
 * One process runs one command (or, with no command, the interactive
 * shell, which runs many).  Every command is a function from its argv to
 * an exit status; the status table below is the tool's contract with the
 * scripts that call it and is documented in docs/cli.md.  The tool uses
 * only the public headers of libtumbler. */
#ifndef TB_CLI_H
#define TB_CLI_H

#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <tumbler/tumbler.h>

/* Exit statuses.  Server-side errors (ZooKeeper codes -1..-127) exit with
 * the code's absolute value (101: no node, 110: node exists ...), so a
 * script can tell them apart; the ones below never collide with those. */
enum {
    CLI_OK = 0,
    CLI_CONFLICT = 1,     /* lock: not acquired now (-n) or within -w */
    CLI_USAGE = 64,       /* EX_USAGE: bad command line */
    CLI_DATAERR = 65,     /* EX_DATAERR: lock: PATH holds nodes of another
                             layout (TB_EFOREIGNLOCK) */
    CLI_NOINPUT = 66,     /* EX_NOINPUT: an input file cannot be read */
    CLI_UNREACHABLE = 69, /* EX_UNAVAILABLE: no server answered */
    CLI_SOFTWARE = 70,    /* EX_SOFTWARE: unexpected client error */
    CLI_OSERR = 71,       /* EX_OSERR: fork, pipe, memory */
    CLI_LOST = 75,        /* lock or leadership lost while CMD ran */
    CLI_NOEXEC = 126,     /* CMD found but not executable */
    CLI_NOTFOUND = 127,   /* CMD not found */
};

/* A credential to add to every session (-a SCHEME:CRED, addauth). */
struct cli_auth {
    struct cli_auth *next;
    char *scheme;
    char *cred;
};

/* The state of one tumbler process.  At all times `c` is NULL or a
 * started handle whose session was established once. */
struct cli {
    char *hosts;            /* connection string (owned) */
    int session_timeout_ms; /* requested of the server */
    int connect_timeout_ms; /* how long to wait for the first session */
    int json_default;       /* --json before the command */
    int json;               /* this command prints JSON */
    int verbose;            /* library log to stderr */
    int shell;              /* inside the interactive shell */
    int errexit;            /* -e: a script stops at a failed command */
    struct cli_auth *auth;
    int tls;                /* --tls, or implied by a --tls-* file */
    const char *tls_ca;     /* --tls-ca FILE (argv or environment) */
    const char *tls_cert;   /* --tls-cert FILE */
    const char *tls_key;    /* --tls-key FILE */
    int tls_no_verify_host; /* --tls-no-verify-host */
    struct tb_client *c;
    pthread_mutex_t mu; /* guards `tried`: written on the I/O thread */
    char tried[2048];   /* connection failures seen while connecting */
    size_t tried_len;
    int quit;        /* the shell is to end: quit, exit */
    int quit_status; /* with quit: exit N's N, else -1 (the usual status) */
    /* The terminal's ^C or ^\ killed CMD, which had the terminal: passed
     * on to tumbler's own group once done (cli_child_pass_signal). */
    int pass_signal;
};

/* An option of a table-driven command.  Its letter is also where
 * struct cli_args keeps its value; 'h' and 'J' (--help, --json) are the
 * prologue's. */
enum cli_opt_kind {
    CLI_FLAG,     /* takes no value */
    CLI_STR,      /* any text */
    CLI_VERSION,  /* a version to match: -1 (any) .. INT32_MAX */
    CLI_POSITIVE, /* 1 .. INT64_MAX */
    CLI_NATURAL,  /* 0 .. INT64_MAX */
};
struct cli_opt {
    char letter;
    const char *name; /* the long form, --name */
    int kind;         /* enum cli_opt_kind */
    const char *arg;  /* the value's name in --help ("N", "FILE") */
    const char *help; /* its --help text; '\n' continues it below */
    /* A number that does not parse or is out of range is a usage error:
     * "bad WHAT 'VALUE'HINT" ("bad priority 'x' (0..999)"). */
    const char *what;
    const char *hint;
};

enum { CLI_MAX_OPTS = 16 };

/* A table-driven command's command line once the prologue read it. */
struct cli_args {
    int argc; /* the operands after the options */
    char **argv;
    const char *val[128]; /* by letter: the value given ("" for a flag),
                             NULL if the option was not given */
    int64_t num[128];     /* by letter: a number option's value, -1 if not
                             given (ZooKeeper's "none", and "any version") */
};

/* A command.  `run` reads its argv and returns the exit status. */
struct cli_cmd {
    const char *name;
    int (*run)(struct cli *cli, const struct cli_cmd *cmd, int argc,
               char **argv);
    const char *usage;   /* after "tumbler [GLOBAL] " */
    const char *summary; /* one line */
    const char *help;    /* the options, one per line */
    int flags;           /* CLI_NO_SHELL | CLI_NO_JSON | ... */
    const char *notes;   /* after the options; may be NULL */
};
enum {
    CLI_NO_SHELL = 1,    /* not offered inside the shell */
    CLI_NO_JSON = 2,     /* takes no --json */
    CLI_PATH = 4,        /* cli_spec: the first operand is a path
                            (cli_check_path) */
    CLI_CONNECT = 8,     /* cli_spec: connect before exec */
    CLI_SHELL_ONLY = 16, /* offered inside the shell only */
};

/* A table-driven command: `cmd` with `run` and `help` NULL.  The prologue
 * in commands.c reads the options of `opts`, -h and --json, checks the
 * operand count (`arity` is the usage error otherwise), an absolute path
 * as the first operand if any (CLI_PATH), connects (CLI_CONNECT), then
 * calls `exec`, so a new command is one entry and one function.  A command
 * with checks of its own that must come before any connection leaves
 * CLI_CONNECT out and calls cli_connect after them.  (lock, elect and
 * locks still read their argv in `run`.) */
struct cli_spec {
    struct cli_cmd cmd;
    int (*exec)(struct cli *cli, const struct cli_cmd *cmd,
                const struct cli_args *a);
    const struct cli_opt *opts; /* ended by a zero letter, at most
                                   CLI_MAX_OPTS; NULL: none */
    int min_args, max_args;     /* operands */
    const char *arity;          /* the usage error for another count */
};
/* The operands of a command of one PATH. */
#define CLI_ONE_PATH .min_args = 1, .max_args = 1, .arity = "expected one PATH"

/* commands.c */
const struct cli_cmd *cli_find(const char *name);
/* The table entry of a table-driven command, else NULL. */
const struct cli_spec *cli_spec_of(const struct cli_cmd *cmd);
/* Whether this process runs `cmd`: the shell runs no CLI_NO_SHELL
 * command, a one-shot tumbler no CLI_SHELL_ONLY one. */
int cli_offered(const struct cli *cli, const struct cli_cmd *cmd);
/* The commands this process runs; outside the shell, with the usage and
 * the global options. */
void cli_print_overview(const struct cli *cli, FILE *f);
const struct cli_cmd *const *cli_commands(int *count);
int cli_run(struct cli *cli, int argc, char **argv);
int cli_help(struct cli *cli, const struct cli_cmd *cmd);
/* Reports a bad command line ("tumbler ls: ..."), returns CLI_USAGE. */
int cli_usage(struct cli *cli, const struct cli_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Resets getopt for a new argv (getopt_long is used with opterr = 0, a
 * leading ':' in the short options and the messages below). */
void cli_opt_reset(void);
/* getopt_long for a command's options, --json taken here. */
int cli_getopt(struct cli *cli, int argc, char **argv, const char *opts,
               const struct option *lo);
/* At an option the command does not take itself: -h prints its help
 * (status 0); what getopt_long refused ('?', ':') is a usage error. */
int cli_opt_end(struct cli *cli, const struct cli_cmd *cmd, int ch,
                char **argv);
/* Shared long options: --help ('h') and --json ('J'). */
#define CLI_COMMON_LONGOPTS                                                    \
    {"help", no_argument, NULL, 'h'},                                          \
    {                                                                          \
        "json", no_argument, NULL, 'J'                                         \
    }

/* conn.c */
/* Connects if not connected yet: 0, or the exit status after printing
 * which servers were tried. */
int cli_connect(struct cli *cli);
void cli_disconnect(struct cli *cli);
int cli_auth_add(struct cli *cli, const char *scheme, const char *cred);
/* The TUMBLER_TLS* variables that give a tumbler inside CMD (lock, elect)
 * this process's TLS set-up, as TUMBLER_SERVERS gives it the servers: up
 * to CLI_TLS_ENV strings, malloc'd, written to `env`; returns how many
 * (none without TLS), or -1 out of memory (then none is left). */
enum { CLI_TLS_ENV = 5 };
int cli_tls_env(const struct cli *cli, char **env);
/* "NAME=value", malloc'd however long the value (NULL: out of memory). */
char *cli_env_str(const char *name, const char *value);
void cli_auth_free(struct cli *cli);

/* out.c: errors and the shared output forms */
/* Maps a TB_E* code to an exit status (see the enum above). */
int cli_status(int rc);
/* Prints "tumbler: WHAT WHERE: message (ENAME)" (and a JSON error object
 * on stdout with --json); returns cli_status(rc). */
int cli_fail(struct cli *cli, const char *what, const char *where, int rc);
/* The same with a message of its own ("tumbler: MESSAGE"). */
int cli_fail_msg(struct cli *cli, const char *what, const char *where, int rc,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* An error as --json prints it, on stdout:
 *   {"error": {"command", "path", "servers", "code", "name", "message",
 *              "attempts": [...]}}
 * each key present when its field is set. */
struct cli_error {
    const char *command;
    const char *path;     /* NULL: none */
    const char *servers;  /* connecting: the servers tried; NULL: none */
    int rc;               /* TB_E* */
    const char *message;  /* NULL: tb_strerror(rc) */
    const char *attempts; /* lines, "  TEXT\n" each; NULL: none */
    size_t attempts_len;
};
/* Prints it with --json, else nothing. */
void cli_json_error(const struct cli *cli, const struct cli_error *e);
struct jw;
/* As cli_fail, but with --json the error goes into the object open in `w`
 * as its key "error" (ls -R: after the nodes listed so far), so that the
 * output stays one JSON document. */
int cli_fail_in(struct cli *cli, struct jw *w, const char *what,
                const char *where, int rc);
/* Prints a message for a local failure; returns `status`. */
/* A line on stderr ("tumbler: ..."), written only if stderr takes it at
 * once, else dropped: said while a lock is held, where a reader of stderr
 * that stalls (a hung logger, a full pipe) must never keep tumbler from
 * acting on the lock, nor keep the library's thread from its pings. */
void cli_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cli_err's, said as cli_notice says it: an error met while holding. */
int cli_notice_err(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int cli_err(struct cli *cli, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cli_print_stat(FILE *f, const struct tb_stat *st);
/* A node's data as `get` prints it: the bytes as stored, a newline after
 * them unless they end with one, then the stat if `with_stat`; --json:
 * {"path", "data" (or "data_base64"), "stat"}. */
void cli_print_data(const struct cli *cli, const char *path, const char *value,
                    size_t len, const struct tb_stat *st, int with_stat);
/* What a command that prints nothing prints with --json: {"path": PATH,
 * KEY: true} (no "path" if NULL). */
void cli_print_done(const struct cli *cli, const char *path, const char *key);
/* A session id ("0x1000002a3b40000"), the one form of text and JSON (see
 * jw_session). */
enum { CLI_SESSION_LEN = 19 };
const char *cli_session_str(int64_t id, char buf[CLI_SESSION_LEN]);
const char *cli_perms_str(int32_t perms, char buf[6]);
/* Formats ms since the epoch as local time. */
void cli_time_str(int64_t ms, char *buf, size_t cap);
/* Bytes of a node's data (a lock's owner) for a line of text, safe for a
 * terminal: each control character (C0, DEL, C1) and each byte that is no
 * part of a UTF-8 character as '?', cut between characters to at most
 * cap - 1 bytes (at most n: buf needs no more than n + 1); "-" when there
 * are none (p NULL or n 0).  cap >= 2; returns buf. */
const char *cli_text_str(const char *p, size_t n, char *buf, size_t cap);
/* A walk of the tree (ls -R, deleteall, setacl -R) asks this between two
 * nodes, so that ^C, timeout(1)'s SIGTERM or a reader gone away (ls -R |
 * head) ends it at once, not after the whole tree.  0 to go on, else the
 * exit status once said why: 128+N for a caught signal N, CLI_OSERR when
 * stdout cannot be written (quietly for EPIPE, as SIGPIPE would end a
 * process that did not ignore it). */
int cli_walk_stop(struct cli *cli, const char *what);
/* Flushes stdout and tells whether everything written to it so far went
 * out: 0, else CLI_OSERR once said why, on stderr as "WHAT: " (nothing
 * when NULL) "cannot write the output: ...", quietly when its reader went
 * away (EPIPE).  SIGPIPE is ignored, so a command printing line after line
 * (watch, top -b, elect -l) asks this after each, or it would never learn
 * that `| head` is gone. */
int cli_out_check(const char *what);
/* A strict decimal parser: 0 or -1. */
int cli_parse_i64(const char *s, int64_t *out);
/* Seconds with an optional fraction ("2.5") into ms: 0 or -1. */
int cli_parse_seconds(const char *s, int64_t *ms);
/* Reads FILE ("-": stdin) into *out (malloc'd, with a NUL after its *len
 * bytes): 0, or the exit status once it said why (66 unreadable, 64 more
 * than `max` bytes). */
int cli_read_file(struct cli *cli, const char *name, size_t max, char **out,
                  size_t *len);
/* Checks a path operand by ZooKeeper's rules (absolute; no empty, '.'
 * or '..' component; no '/' at the end; no control or special
 * character): 0, or the usage error's status once it said which rule
 * the path breaks.  Every command checks its paths with these, before
 * connecting. */
int cli_check_path(struct cli *cli, const struct cli_cmd *cmd,
                   const char *path);
/* The same for create -s: PATH with the server's suffix ("/jobs/" too). */
int cli_check_seq_path(struct cli *cli, const struct cli_cmd *cmd,
                       const char *path);
/* The same for a recipe's PATH (lock, elect, queue, counter, barrier),
 * which makes nodes at or below it: not "/" either. */
int cli_check_recipe_path(struct cli *cli, const struct cli_cmd *cmd,
                          const char *path);
/* "DIR/NAME" ("/NAME" when DIR is "/"), malloc'd however long DIR is
 * (NULL: out of memory): a child's path, never cut. */
char *cli_path_join(const char *dir, const char *name);
/* For a command that reads its argv itself (locks): its one argument after
 * its options, an absolute path: checked,
 * then connected.  0 or the command's exit code. */
int cli_path_arg(struct cli *cli, const struct cli_cmd *cmd, int argc,
                 char **argv);

/* json.c: a small streaming JSON writer */
struct jw {
    FILE *f;
    int depth;
    unsigned char need_comma[32];
};
void jw_init(struct jw *w, FILE *f);
void jw_obj(struct jw *w);
void jw_end_obj(struct jw *w);
void jw_arr(struct jw *w);
void jw_end_arr(struct jw *w);
void jw_key(struct jw *w, const char *k);
void jw_str(struct jw *w, const char *s);
void jw_strn(struct jw *w, const char *s, size_t n);
void jw_int(struct jw *w, int64_t v);
void jw_double(struct jw *w, double v); /* finite */
void jw_null(struct jw *w);
void jw_bool(struct jw *w, int v);
void jw_hex(struct jw *w, int64_t v); /* "0x..." string */
/* A session id as cli_session_str writes it in text. */
void jw_session(struct jw *w, int64_t id);
/* Ends the top-level value with a newline and flushes. */
void jw_done(struct jw *w);
/* The one object a command prints on stdout: opened, with "path" first
 * unless `path` is NULL; jw_finish closes it, as jw_end_obj + jw_done. */
void jw_begin(struct jw *w, const char *path);
void jw_finish(struct jw *w);
void jw_stat(struct jw *w, const struct tb_stat *st);
/* Bytes as "data" when they are printable UTF-8, else as "data_base64". */
void jw_data(struct jw *w, const char *v, size_t len);
/* The length of the UTF-8 character at s (n bytes there), or 0 if none
 * starts there: a byte that starts none, or one cut short, overlong, a
 * surrogate, beyond U+10FFFF, or NUL. */
size_t cli_utf8_len(const char *s, size_t n);

/* events.c: the one place where signals and other threads reach the main
 * thread.  Signal handlers and callbacks on the library's I/O thread only
 * queue a message and write a byte to a pipe; the main thread waits on it. */
enum cli_msg_kind {
    CLI_MSG_TEXT = 1,  /* a line to print (watch events) */
    CLI_MSG_LOST,      /* a lock or leadership was lost */
    CLI_MSG_STATE,     /* session state change; `code` is the state */
    CLI_MSG_END,       /* a watcher got its final call */
    CLI_MSG_ACQUIRED,  /* an acquisition ended: `code` rc, text the token */
    CLI_MSG_WATCH,     /* an event of the watch command's own watch */
    CLI_MSG_WATCH_END, /* that watch got its final call */
};
struct cli_msg {
    struct cli_msg *next;
    int kind;
    int code;
    char text[];
};
enum { CLI_EV_TIMEOUT = 0, CLI_EV_SIGNAL, CLI_EV_MSG, CLI_EV_FD };
/* Installs the handlers of SIGINT, SIGTERM, SIGHUP (unless ignored on
 * entry), SIGCHLD; 0 or -1. */
int cli_ev_init(void);
/* Routes one more signal through the pipe; 0 or -1. */
int cli_ev_catch(int sig);
/* The same for a signal to pass on to a command, unless it was ignored
 * when tumbler started: it then stays ignored. */
int cli_ev_pass_on(int sig);
/* Whether `sig` was ignored when tumbler started (async-signal-safe). */
int cli_ev_ignored(int sig);
/* Thread-safe: queues a message and wakes the main thread. */
void cli_ev_post(int kind, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Waits up to `timeout_ms` (-1: no limit) for a signal, a message, or
 * `fd` (-1: none) readable.  Signals come first; *sig is set for them. */
int cli_ev_wait(int fd, int timeout_ms, int *sig);
/* Takes the oldest queued message (free() it), or NULL. */
struct cli_msg *cli_ev_take(void);
/* Signals seen and not yet taken by cli_ev_wait, without waiting. */
int cli_ev_pending_signal(void);
/* The last SIGINT, SIGTERM or SIGHUP taken since the last call, or 0. */
int cli_ev_stop_taken(void);
/* Blocks (how=SIG_BLOCK) or unblocks the handled signals in this thread,
 * so that threads created meanwhile never run the handlers. */
void cli_ev_mask(int how);
/* The monotonic clock, in ms: what waits and deadlines are measured on. */
int64_t cli_now_ms(void);

/* watchev.c: watch callbacks that print through the message queue */
void cli_watch_cb(struct tb_client *c, const struct tb_event *ev, void *data);
/* A watcher context; `json` picks the line format.  The watch command's
 * own watch posts CLI_MSG_WATCH and CLI_MSG_WATCH_END (`own`), so that it
 * counts and ends on its events only, not on those of a get -w set
 * earlier in the shell (CLI_MSG_TEXT, CLI_MSG_END). */
struct cli_watch {
    int json;
    int own;
};
extern struct cli_watch cli_watch_text, cli_watch_json;
/* Waits for the next watch event line and prints it (one-shot -w outside
 * the shell).  Returns 0, or 128+signal when interrupted. */
int cli_wait_event(struct cli *cli);

/* The commands, each defined next to its code. */
extern const struct cli_spec cli_cmd_ls, cli_cmd_get, cli_cmd_stat,
    cli_cmd_create, cli_cmd_set, cli_cmd_delete, cli_cmd_deleteall,
    cli_cmd_sync, cli_cmd_getacl, cli_cmd_setacl, cli_cmd_addauth,
    cli_cmd_whoami, cli_cmd_watch, cli_cmd_get_ephemerals,
    cli_cmd_get_all_children_number, cli_cmd_removewatches, cli_cmd_setquota,
    cli_cmd_listquota, cli_cmd_delquota;
extern const struct cli_cmd cli_cmd_lock, cli_cmd_elect, cli_cmd_locks;
/* The other recipes: cmd_barrier.c, cmd_queue.c, cmd_counter.c. */
extern const struct cli_spec cli_cmd_barrier, cli_cmd_queue, cli_cmd_counter,
    cli_cmd_check_token;
/* cmd_top.c: the live view of the locks. */
extern const struct cli_spec cli_cmd_top;
/* cmd_status.c: each server's srvr, and whether one leads. */
extern const struct cli_spec cli_cmd_status;
/* cmd_config.c: the members, and changing them. */
extern const struct cli_spec cli_cmd_config, cli_cmd_reconfig;
/* shell.c */
extern const struct cli_spec cli_cmd_connect, cli_cmd_quit, cli_cmd_exit;

/* words.c: splits a line with sh-like quoting; returns the word count
 * (*out NULL-ended, free with cli_words_free) or -1 on an unterminated
 * quote or out of memory. */
int cli_words_split(const char *line, char ***out);
void cli_words_free(char **v, int n);

/* cmd_acl.c: parses "SCHEME:ID:PERMS[,...]" in place (the entries point
 * into `buf`); *out is malloc'd.  0 or -1. */
int cli_acl_parse(char *buf, struct tb_acl_entry **out, int32_t *count);
/* An ACL operand, parsed: `list` points into `buf`, both owned. */
struct cli_acl {
    char *buf;
    struct tb_acl_list list;
};
/* Parses `text` (a usage error if it is no ACL): 0 or the exit status. */
int cli_acl_arg(struct cli *cli, const struct cli_cmd *cmd, const char *text,
                struct cli_acl *out);
void cli_acl_free(struct cli_acl *a);

/* shell.c */
int cli_shell(struct cli *cli);
/* What the shell does with a queued message between commands: prints
 * events of -w watches and session changes, and drops an expired session
 * (cli->c NULL then: the next command opens a new one).  For a command
 * that takes messages itself (watch) while the shell runs it. */
void cli_shell_message(struct cli *cli, const struct cli_msg *m);

#endif
