/* tumbler lock PATH -- CMD: a distributed flock(1).  tumbler elect PATH --
 * CMD: run CMD only while this process leads.
 *
 * The options and exit statuses are flock's: CMD's status (128+N if a
 * signal N ended it); 1, or -E's code, when the lock cannot be had at once
 * (-n) or within -w seconds.  What flock never needs: if the lock (or the
 * leadership) is lost while CMD runs, CMD's process group gets SIGTERM,
 * SIGKILL after the grace period, and tumbler exits with 75 (CLI_LOST); if
 * it is found lost only when released after CMD ended, CMD's work may not
 * have been exclusive, so that too exits with 75.  See docs/cli.md for the
 * table.
 *
 * Without CMD, as etcdctl's lock and elect: hold (lead) until interrupted,
 * for a script that does its work meanwhile; elect -l watches an election
 * without joining it and prints each new leader. */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/child.h"
#include "cli/hold.h"

struct lock_opts {
    struct hold h;
    int64_t wait_ms; /* -1: for ever */
    int conflict;    /* -E */
    int64_t grace_ms;
    int verbose;
    const char *shell_cmd; /* -c */
    char **argv;           /* CMD ARGS, NULL-ended; NULL: hold until a signal */
    int listen;            /* elect -l: observe, do not take part */
};

enum {
    OPT_SEM = 256,
    OPT_NONFAIR,
    OPT_LOST_DISC,
    OPT_DATA,
    OPT_VERBOSE,
    OPT_LOCK_DELAY,
};

static const struct option lock_lo[] = {
    {"wait", required_argument, NULL, 'w'},
    {"timeout", required_argument, NULL, 'w'},
    {"nonblock", no_argument, NULL, 'n'},
    {"no-wait", no_argument, NULL, 'n'},
    {"conflict-exit-code", required_argument, NULL, 'E'},
    {"shared", no_argument, NULL, 's'},
    {"exclusive", no_argument, NULL, 'x'},
    {"semaphore", required_argument, NULL, OPT_SEM},
    {"non-fair", no_argument, NULL, OPT_NONFAIR},
    {"command", required_argument, NULL, 'c'},
    {"kill-after", required_argument, NULL, 'k'},
    {"lost-on-disconnect", no_argument, NULL, OPT_LOST_DISC},
    {"data", required_argument, NULL, OPT_DATA},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"lock-delay", required_argument, NULL, OPT_LOCK_DELAY},
    {"listen", no_argument, NULL, 'l'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

/* How long past elect's deadline its first try may take (a connection
 * that went down meanwhile). */
enum { ELECT_TRY_MS = 10000 };

/* One option; returns 0, or the status to exit with (-1: --help done). */
static int lock_opt(struct cli *cli, const struct cli_cmd *cmd,
                    struct lock_opts *o, int ch, char **argv)
{
    int64_t v;
    int is_elect = o->h.kind == HOLD_ELECT;

    switch (ch) {
    case 'w':
        if (cli_parse_seconds(optarg, &o->wait_ms) != 0 ||
            o->wait_ms > INT32_MAX)
            return cli_usage(cli, cmd, "bad -w '%s' (seconds)", optarg);
        return 0;
    case 'n':
        if (is_elect)
            break;
        o->wait_ms = 0;
        return 0;
    case 'E':
        if (cli_parse_i64(optarg, &v) != 0 || v < 0 || v > 255)
            return cli_usage(cli, cmd, "bad -E '%s' (0..255)", optarg);
        o->conflict = (int)v;
        return 0;
    case 's':
    case 'x':
        if (is_elect)
            break;
        if (o->h.kind != HOLD_MUTEX)
            return cli_usage(cli, cmd,
                             "-s, -x and --semaphore exclude "
                             "each other");
        o->h.kind = ch == 's' ? HOLD_READ : HOLD_WRITE;
        return 0;
    case OPT_SEM:
        if (is_elect)
            break;
        if (cli_parse_i64(optarg, &v) != 0 || v < 1 || v > 1000000)
            return cli_usage(cli, cmd, "bad --semaphore '%s' (1..1000000)",
                             optarg);
        if (o->h.kind != HOLD_MUTEX)
            return cli_usage(cli, cmd,
                             "-s, -x and --semaphore exclude "
                             "each other");
        o->h.kind = HOLD_SEM;
        o->h.max_leases = (int)v;
        return 0;
    case OPT_NONFAIR:
        o->h.nonfair = 1;
        return 0;
    case OPT_LOCK_DELAY:
        if (is_elect)
            break;
        if (cli_parse_seconds(optarg, &v) != 0 || v < 1 || v > INT32_MAX)
            return cli_usage(cli, cmd, "bad --lock-delay '%s' (seconds > 0)",
                             optarg);
        o->h.lock_delay_ms = (int)v;
        return 0;
    case 'c':
        o->shell_cmd = optarg;
        return 0;
    case 'k':
        if (cli_parse_seconds(optarg, &o->grace_ms) != 0 ||
            o->grace_ms > 3600000)
            return cli_usage(cli, cmd, "bad --kill-after '%s' (seconds)",
                             optarg);
        return 0;
    case OPT_LOST_DISC:
        o->h.lost_on_disconnect = 1;
        return 0;
    case OPT_DATA:
        o->h.value = optarg;
        return 0;
    case OPT_VERBOSE:
        o->verbose = 1;
        return 0;
    case 'l':
        if (!is_elect)
            break;
        o->listen = 1;
        return 0;
    case 'h':
        return cli_help(cli, cmd) - 1;
    case '?':
    case ':':
        return cli_opt_end(cli, cmd, ch, argv);
    default:
        break;
    }
    return cli_opt_end(cli, cmd, '?', argv);
}

/* PATH [--] CMD [ARGS], or PATH -c CMDSTRING (flock's form too), or PATH
 * alone: hold until interrupted (elect -l: observe). */
static int lock_operands(struct cli *cli, const struct cli_cmd *cmd,
                         struct lock_opts *o, int argc, char **argv)
{
    static char sh[] = "/bin/sh", dash_c[] = "-c";
    static char *shv[4];
    int i = optind;

    if (o->h.lock_delay_ms > 0 && (o->h.kind != HOLD_MUTEX || o->h.nonfair))
        return cli_usage(cli, cmd, "--lock-delay is for the fair mutex");
    if (i >= argc)
        return cli_usage(cli, cmd, "expected PATH");
    o->h.path = argv[i++];
    if (i < argc &&
        (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--command") == 0)) {
        if (i + 2 != argc || o->shell_cmd != NULL)
            return cli_usage(cli, cmd, "-c takes one command string");
        o->shell_cmd = argv[i + 1];
        i = argc;
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (o->shell_cmd != NULL) {
        if (i < argc)
            return cli_usage(cli, cmd, "both -c and a command given");
        shv[0] = sh;
        shv[1] = dash_c;
        shv[2] = (char *)o->shell_cmd;
        shv[3] = NULL;
        o->argv = shv;
    } else if (i < argc) {
        o->argv = argv + i;
    }
    if (o->listen && o->argv != NULL)
        return cli_usage(cli, cmd, "-l observes: it runs no command");
    if (o->h.nonfair && (o->h.kind == HOLD_READ || o->h.kind == HOLD_WRITE ||
                         o->h.kind == HOLD_SEM))
        return cli_usage(cli, cmd, "--non-fair is for the plain mutex only");
    /* elect -l only reads PATH; the others make their nodes there. */
    return o->listen ? cli_check_path(cli, cmd, o->h.path)
                     : cli_check_recipe_path(cli, cmd, o->h.path);
}

static int parse_lock(struct cli *cli, const struct cli_cmd *cmd, int argc,
                      char **argv, struct lock_opts *o)
{
    int ch, rv;
    const char *shortopts =
        o->h.kind == HOLD_ELECT ? "+:w:E:c:k:lh" : "+:w:nE:sxc:k:h";

    o->wait_ms = -1;
    o->conflict = CLI_CONFLICT;
    o->grace_ms = 10000;
    cli_opt_reset();
    while ((ch = getopt_long(argc, argv, shortopts, lock_lo, NULL)) != -1)
        if ((rv = lock_opt(cli, cmd, o, ch, argv)) != 0)
            return rv;
    return lock_operands(cli, cmd, o, argc, argv);
}

/* Waits for the acquisition.  -1 once held (*token), else the status to
 * exit with (which -E may make 0). */
static int acquire(struct cli *cli, struct lock_opts *o, int64_t *token)
{
    int64_t deadline = o->wait_ms >= 0 ? cli_now_ms() + o->wait_ms : -1;
    const char *what = o->h.kind == HOLD_ELECT ? "elect" : "lock";
    struct cli_msg *m;
    int rc, sig, ev, timeout;

    if ((rc = hold_start(&o->h, o->wait_ms < 0 ? -1 : (int)o->wait_ms)) != 0)
        return cli_fail(cli, what, o->h.path, rc);
    for (;;) {
        int give_up = 0;
        timeout = -1;
        /* The election has no timeout of its own.  At the deadline (at
         * once for -w 0) the candidate gives up, as lock's -w does, but
         * only once it has tried: it leads, or waits behind another. */
        if (o->h.kind == HOLD_ELECT && deadline >= 0) {
            int64_t left = deadline - cli_now_ms();
            if (left <= 0) {
                give_up = hold_tried(&o->h) || -left >= ELECT_TRY_MS;
                left = give_up ? 0 : 10;
            }
            timeout = (int)left;
        }
        ev = cli_ev_wait(-1, timeout, &sig);
        if (ev == CLI_EV_SIGNAL && sig != SIGCHLD)
            return 128 + sig; /* the caller cancels */
        while ((m = cli_ev_take()) != NULL) {
            int kind = m->kind, code = m->code;
            if (kind == CLI_MSG_ACQUIRED)
                *token = strtoll(m->text, NULL, 10);
            else if (kind == CLI_MSG_TEXT && o->verbose)
                fprintf(stderr, "tumbler: %s\n", m->text);
            free(m);
            if (kind != CLI_MSG_ACQUIRED)
                continue;
            if (code == TB_ETIMEDOUT)
                return o->conflict;
            return code == 0 ? -1 : cli_fail(cli, what, o->h.path, code);
        }
        if (give_up)
            return o->conflict; /* the caller leaves the election */
    }
}

/* Gives the hold back once CMD ended with `status` (or, without CMD, once
 * interrupted); the status to exit with. */
static int release(struct lock_opts *o, int status)
{
    int rc = hold_release(&o->h);

    if (rc == TB_ELOCKLOST && o->argv == NULL) {
        fprintf(stderr, "tumbler: %s was lost before it was released\n",
                o->h.path);
        return CLI_LOST;
    }
    if (rc == TB_ELOCKLOST) {
        fprintf(stderr,
                "tumbler: %s was lost before it was released: %s "
                "(status %d) may not have run alone\n",
                o->h.path, o->argv[0], status);
        return CLI_LOST;
    }
    if (rc != 0) /* the session's end removes the node anyway */
        fprintf(stderr,
                "tumbler: releasing %s: %s; it goes with the "
                "session\n",
                o->h.path, tb_strerror(rc));
    return status;
}

/* CMD's variables, each allocated to its length (PATH has no short
 * limit); NULL-ended.  -1 when out of memory, else how many. */
static int lock_env(struct cli *cli, struct lock_opts *o, int64_t token,
                    char **env)
{
    char t[32], *node = NULL;
    int n = 0, i, rc, tls;

    snprintf(t, sizeof t, "%" PRId64, token);
    env[n++] = cli_env_str("TUMBLER_LOCK_PATH", o->h.path);
    env[n++] = cli_env_str("TUMBLER_LOCK_TOKEN", t);
    env[n++] = cli_env_str("TUMBLER_SERVERS", cli->hosts);
    /* Without a node of its own (semaphore, election), an outer lock's
     * must not reach CMD either: CMD would take it for this one's. */
    rc = hold_node(&o->h, &node);
    env[n++] = rc == 0            ? cli_env_str("TUMBLER_LOCK_NODE", node)
               : rc == TB_ENONODE ? strdup("TUMBLER_LOCK_NODE")
                                  : NULL;
    free(node);
    tls = cli_tls_env(cli, env + n);
    n += tls > 0 ? tls : 0;
    env[n] = NULL;
    for (i = 0; i < n && env[i] != NULL; i++)
        ;
    if (i == n && tls >= 0)
        return n;
    for (i = 0; i < n; i++)
        free(env[i]);
    return -1;
}

static int run_held(struct cli *cli, struct lock_opts *o, int64_t token,
                    int64_t waited_ms)
{
    char *env[5 + CLI_TLS_ENV];
    struct cli_hold_check check = {hold_check, &o->h};
    struct cli_supervise s;
    struct cli_child ch;
    int n, status;

    if ((n = lock_env(cli, o, token, env)) < 0)
        return cli_notice_err(CLI_OSERR, "out of memory");
    if (o->verbose)
        cli_notice("%s %s (token %" PRId64 ") after %.3f s; running %s",
                   o->h.kind == HOLD_ELECT ? "leading" : "holding", o->h.path,
                   token, waited_ms / 1000.0, o->argv[0]);
    status = cli_child_spawn(o->argv, env, &check, &ch);
    while (n > 0)
        free(env[--n]);
    if (status != 0)
        return status;
    memset(&s, 0, sizeof s);
    s.what = o->argv[0];
    s.grace_ms = (int)o->grace_ms;
    status = cli_child_supervise(&s, &ch);
    if (s.lost)
        return CLI_LOST;
    if (!cli->shell)
        cli->pass_signal = ch.tty_signal;
    return release(o, status);
}

/* "holding PATH (token N)" ("leading" for elect), or with --json
 * {"path", "token", "node"}, flushed: a script reading it knows that the
 * hold is had from now on. */
static void print_held(struct cli *cli, struct lock_opts *o, int64_t token)
{
    char *node = NULL;
    struct jw w;

    if (!cli->json) {
        printf("%s %s (token %" PRId64 ")\n",
               o->h.kind == HOLD_ELECT ? "leading" : "holding", o->h.path,
               token);
        fflush(stdout);
        return;
    }
    jw_init(&w, stdout);
    jw_obj(&w);
    jw_key(&w, "path");
    jw_str(&w, o->h.path);
    jw_key(&w, "token");
    jw_int(&w, token);
    jw_key(&w, "node");
    jw_str(&w, hold_node(&o->h, &node) == 0 ? node : NULL);
    jw_end_obj(&w);
    jw_done(&w);
    free(node);
}

/* Without CMD (etcdctl lock's way): holds until SIGINT, SIGQUIT, SIGTERM
 * or SIGHUP, then releases: status 0, or 75 if the hold was lost meanwhile.
 * The hold's notices go to stderr as they come. */
static int hold_until_signal(struct cli *cli, struct lock_opts *o,
                             int64_t token)
{
    struct cli_msg *m;
    int sig, lost = 0;

    print_held(cli, o, token);
    while (!lost) {
        if (cli_ev_wait(-1, -1, &sig) == CLI_EV_SIGNAL) {
            if (sig == SIGINT || sig == SIGQUIT || sig == SIGTERM ||
                sig == SIGHUP)
                break;
            continue;
        }
        while ((m = cli_ev_take()) != NULL) {
            if (m->kind == CLI_MSG_LOST || m->kind == CLI_MSG_TEXT)
                cli_notice("%s", m->text);
            lost |= m->kind == CLI_MSG_LOST;
            free(m);
        }
    }
    return lost ? CLI_LOST : release(o, CLI_OK);
}

/* ---- elect -l: watching an election without joining it ---- */

/* The leader as the tree shows it, read as tumbler locks reads it: the
 * lowest "-latch-" node under PATH (the fair election), else PATH itself
 * while it is ephemeral (the non-fair one).  token 0: no leader. */
struct leader {
    char *node;      /* its path, malloc'd however long PATH is */
    int64_t token;   /* czxid of the node: the leader's fencing token */
    int64_t session; /* its ephemeralOwner */
    char *data;      /* its data (the owner); tb_free */
    size_t len;
};

/* The node that leads if anyone does: the lowest latch, else PATH
 * (*node malloc'd). */
static int leading_node(struct cli *cli, const char *path, char **node)
{
    struct tb_strings ch;
    const char *best = NULL, *seq, *best_seq = NULL;
    int32_t i;
    int rc = tb_get_children_sync(cli->c, path, NULL, NULL, &ch);

    if (rc != 0)
        return rc;
    /* Sequence suffixes all have ten digits: as strings they sort as
     * numbers do. */
    for (i = 0; i < ch.count; i++) {
        seq = strstr(ch.v[i], "-latch-");
        if (seq != NULL && (best_seq == NULL || strcmp(seq, best_seq) < 0)) {
            best = ch.v[i];
            best_seq = seq;
        }
    }
    *node = best != NULL ? cli_path_join(path, best) : strdup(path);
    tb_strings_free(&ch);
    return *node != NULL ? 0 : TB_ENOMEM;
}

static int read_leader(struct cli *cli, const char *path, struct leader *l)
{
    struct tb_stat st;
    int rc;

    tb_free(l->data);
    free(l->node);
    memset(l, 0, sizeof *l);
    rc = leading_node(cli, path, &l->node);
    if (rc == 0)
        rc = tb_get_data_sync(cli->c, l->node, NULL, NULL, &l->data, &l->len,
                              &st);
    if (rc == TB_ENONODE) /* none; if one just left, an event follows */
        return 0;
    if (rc == 0 && st.ephemeral_owner != 0) {
        l->token = st.czxid;
        l->session = st.ephemeral_owner;
    }
    return rc;
}

static void print_leader(struct cli *cli, const char *path,
                         const struct leader *l)
{
    const char *o = l->data;
    size_t n = l->data != NULL ? l->len : 0;
    char small[128], *text;
    struct jw w;

    /* The non-fair node's data starts with its owner's "_c_<uuid>". */
    if (n >= 39 && memcmp(o, "_c_", 3) == 0) {
        o += 39 + (n > 39 && o[39] == '-');
        n -= (size_t)(o - l->data);
    }
    if (!cli->json) {
        if (l->token == 0) {
            printf("no leader\n");
        } else {
            /* All of it (small if malloc fails: then cut). */
            text = n < sizeof small ? NULL : malloc(n + 1);
            printf("leader %s (token %" PRId64 ")\n",
                   text != NULL ? cli_text_str(o, n, text, n + 1)
                                : cli_text_str(o, n, small, sizeof small),
                   l->token);
            free(text);
        }
        fflush(stdout);
        return;
    }
    jw_init(&w, stdout);
    jw_obj(&w);
    jw_key(&w, "path");
    jw_str(&w, path);
    jw_key(&w, "leader");
    if (l->token == 0) {
        jw_null(&w);
    } else {
        jw_obj(&w);
        jw_key(&w, "owner");
        jw_strn(&w, o, n);
        jw_key(&w, "token");
        jw_int(&w, l->token);
        jw_key(&w, "session");
        jw_session(&w, l->session);
        jw_key(&w, "node");
        jw_str(&w, l->node);
        jw_end_obj(&w);
    }
    jw_end_obj(&w);
    jw_done(&w);
}

/* Waits for a change at PATH (the persistent watch's events, or a new
 * connection, after which events may have been missed).  -1 when the
 * leader must be read again, else the status to exit with. */
static int await_change(void)
{
    struct cli_msg *m;
    int sig, rv = CLI_OK, again = 0;

    for (;;) {
        if (cli_ev_wait(-1, -1, &sig) == CLI_EV_SIGNAL) {
            if (sig == SIGINT || sig == SIGQUIT || sig == SIGTERM ||
                sig == SIGHUP)
                return CLI_OK;
            continue;
        }
        while ((m = cli_ev_take()) != NULL) {
            if (m->kind == CLI_MSG_END) {
                fprintf(stderr, "tumbler: %s\n", m->text);
                rv = cli_status(m->code);
            }
            again |=
                m->kind == CLI_MSG_TEXT ||
                (m->kind == CLI_MSG_STATE && m->code == TB_SESSION_CONNECTED);
            free(m);
        }
        if (rv != CLI_OK)
            return rv;
        if (again)
            return -1;
    }
}

/* elect -l (etcdctl elect -l): prints the leader, then every new one as
 * it changes, until interrupted (0) or the session ends. */
static int observe(struct cli *cli, const char *path)
{
    struct leader l = {0};
    int64_t shown = -1;
    int rc;

    if ((rc = cli_connect(cli)) != 0)
        return rc;
    rc = tb_add_watch_sync(cli->c, path, TB_ADDWATCH_PERSISTENT, cli_watch_cb,
                           &cli_watch_text);
    if (rc != 0)
        return cli_fail(cli, "elect", path, rc);
    do {
        if ((rc = read_leader(cli, path, &l)) != 0) {
            rc = cli_fail(cli, "elect", path, rc);
            break;
        }
        if (l.token != shown) {
            print_leader(cli, path, &l);
            /* A reader gone (elect -l | head -n1) ends it at its next
             * line, or it would write into the void for ever. */
            if ((rc = cli_out_check("elect")) != 0)
                break;
        }
        shown = l.token;
    } while ((rc = await_change()) < 0);
    tb_free(l.data);
    free(l.node);
    cli_disconnect(cli);
    return rc;
}

static int run_lock_common(struct cli *cli, const struct cli_cmd *cmd, int argc,
                           char **argv, int kind)
{
    struct lock_opts o;
    int64_t token = 0, start;
    int rv;

    memset(&o, 0, sizeof o);
    o.h.kind = kind;
    if ((rv = parse_lock(cli, cmd, argc, argv, &o)) != 0)
        return rv < 0 ? CLI_OK : rv;
    if (o.listen)
        return observe(cli, o.h.path);
    (void)cli_ev_pass_on(SIGUSR1);
    (void)cli_ev_pass_on(SIGUSR2);
    if ((rv = cli_connect(cli)) != 0)
        return rv;
    if ((rv = hold_new(&o.h, cli->c)) != 0)
        return cli_fail(cli, cmd->name, o.h.path, rv);
    start = cli_now_ms();
    rv = acquire(cli, &o, &token);
    if (rv < 0 && o.argv == NULL)
        rv = hold_until_signal(cli, &o, token);
    else if (rv < 0)
        rv = run_held(cli, &o, token, cli_now_ms() - start);
    else if (o.verbose && rv == o.conflict)
        fprintf(stderr, "tumbler: %s: not acquired\n", o.h.path);
    hold_free(&o.h);
    cli_disconnect(cli); /* closing the session removes any node left */
    return rv;
}

static int run_lock(struct cli *cli, const struct cli_cmd *cmd, int argc,
                    char **argv)
{
    return run_lock_common(cli, cmd, argc, argv, HOLD_MUTEX);
}

static int run_elect(struct cli *cli, const struct cli_cmd *cmd, int argc,
                     char **argv)
{
    return run_lock_common(cli, cmd, argc, argv, HOLD_ELECT);
}

#define LOCK_COMMON_HELP                                                       \
    "  -w, --wait S        give up after S seconds (fractions allowed)\n"      \
    "  -E, --conflict-exit-code N\n"                                           \
    "                      exit with N (0..255), not 1, when not acquired\n"   \
    "      --non-fair      one ephemeral node every waiter races for\n"        \
    "                      (wakes them all: for low contention)\n"             \
    "  -c, --command STR   run STR with /bin/sh -c\n"                          \
    "  -k, --kill-after S  once lost, SIGKILL CMD's group S seconds after\n"   \
    "                      SIGTERM (default 10)\n"                             \
    "      --lost-on-disconnect\n"                                             \
    "                      a dropped connection counts as lost at once\n"      \
    "                      (default: only once the session has expired)\n"     \
    "      --data TEXT     data of the node (default HOST:PID)\n"              \
    "      --verbose       say when it was acquired and what runs\n"

#define LOCK_NOTES                                                             \
    "Exit status: CMD's (128+N if signal N ended it); 1, or -E's, when not\n"  \
    "acquired in time; 75 if lost while CMD ran (CMD is terminated); 65\n"     \
    "(lock) PATH holds nodes of another layout, named on stderr; 69\n"         \
    "no server reachable; 126/127 CMD not executable / not found; 64 usage.\n" \
    "CMD's environment: TUMBLER_LOCK_PATH, TUMBLER_LOCK_TOKEN (the fencing\n"  \
    "token), TUMBLER_LOCK_NODE, TUMBLER_SERVERS.  CMD runs in a process\n"     \
    "group of its own: SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1 and "         \
    "SIGUSR2\n"                                                                \
    "sent to tumbler are passed on to that group (one ignored when tumbler\n"  \
    "started stays ignored, in CMD too); what CMD leaves running in it is\n"   \
    "stopped (SIGTERM, SIGKILL after -k) before the release, as are its\n"     \
    "processes that left the group once orphaned (tumbler is their\n"          \
    "subreaper); the group dies with tumbler (not a process that left it).\n"  \
    "Without CMD: prints \"holding PATH (token N)\" (\"leading\" for elect)\n" \
    "and holds until SIGINT, SIGQUIT, SIGTERM or SIGHUP (status 0).\n"

const struct cli_cmd cli_cmd_lock = {
    "lock",
    run_lock,
    "lock [-w S] [-n] [-E N] [-s|-x|--semaphore N] [--non-fair] "
    "[--lock-delay S] PATH "
    "[[--] CMD [ARG...]]",
    "Run CMD holding the lock PATH (a distributed flock), or just hold it.",
    "  -n, --nonblock      fail at once if the lock is taken\n"
    "  -s, --shared        a read lock (read-write layout): shared with\n"
    "                      other --shared holders, excluded by --exclusive\n"
    "  -x, --exclusive     the write lock of the read-write layout\n"
    "      --semaphore N   one of N leases of a counting semaphore\n"
    "                      (every user of PATH must give the same N)\n"

    "                      Without -s, -x, --semaphore: a fair "
    "mutex.\n"
    "      --lock-delay S  if the last holder died holding the lock, wait\n"
    "                      S seconds more before CMD runs (fair "
    "mutex)\n" LOCK_COMMON_HELP,
    CLI_NO_SHELL | CLI_NO_JSON,
    LOCK_NOTES};

const struct cli_cmd cli_cmd_elect = {
    "elect",
    run_elect,
    "elect [-w S] [-E N] [--non-fair] PATH [[--] CMD [ARG...]] | elect -l "
    "PATH",
    "Run CMD only while leading the election at PATH; -l shows its leaders.",
    "  -l, --listen        take no part: print the leader (\"leader OWNER\n"
    "                      (token N)\" or \"no leader\"), then each new one,\n"
    "                      until interrupted\n" LOCK_COMMON_HELP,
    CLI_NO_SHELL | CLI_NO_JSON,
    LOCK_NOTES};
