/* The interactive shell: tumbler with no command.
 *
 * On a terminal it reads lines with GNU readline (editing, history kept in
 * ~/.tumbler_history or $TUMBLER_HISTFILE, completion of command names and
 * of paths from the live tree).  Readline runs in its callback form so the
 * main thread can wait on the terminal and on the event pipe at once:
 * watch events and session state changes print as they come, above the
 * line being edited, and ^C clears that line instead of ending the shell.
 *
 * From a pipe or a file it runs one command per line, no prompt, and exits
 * with the status of the last command that failed (0 if none did), or with
 * -e stops at the first one, as sh -e would.  Lines are split into words by
 * words.c; '#' starts a comment line.  The shell's own commands, connect and
 * quit, are entries of the command table like the others, so help lists what
 * the shell runs. */
#include <ctype.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "cli/cli.h"

/* readline's callbacks take no context pointer. */
static struct cli *g_cli;
static char *g_line;
static int g_have_line;
static int g_interactive;   /* a terminal: prompt, session changes */
static int g_was_suspended; /* "connected" is news only after this */

/* ---- running one line ---- */

/* Returns -1 to leave the shell, else the command's status. */
static int run_line(struct cli *cli, const char *line)
{
    char **argv;
    int argc, rv;

    while (isspace((unsigned char)*line))
        line++;
    if (*line == '\0' || *line == '#')
        return CLI_OK;
    if ((argc = cli_words_split(line, &argv)) < 0) {
        fprintf(stderr, "tumbler: unterminated quote\n");
        return CLI_USAGE;
    }
    rv = argc > 0 ? cli_run(cli, argc, argv) : CLI_OK;
    cli_words_free(argv, argc);
    fflush(stdout);
    return cli->quit ? -1 : rv;
}

/* ---- the shell's own commands ---- */

static int exec_connect(struct cli *cli, const struct cli_cmd *cmd,
                        const struct cli_args *a)
{
    char *hosts;

    (void)cmd;
    cli_disconnect(cli);
    if (a->argc > 0) {
        if ((hosts = strdup(a->argv[0])) == NULL)
            return CLI_OSERR;
        free(cli->hosts);
        cli->hosts = hosts;
    }
    return cli_connect(cli);
}

const struct cli_spec cli_cmd_connect = {
    .cmd = {.name = "connect",
            .usage = "connect [HOSTS]",
            .summary = "Open a new session, on HOSTS or on the same servers.",
            .flags = CLI_SHELL_ONLY},
    .exec = exec_connect,
    .max_args = 1,
    .arity = "expected at most one HOSTS",
};

static int exec_quit(struct cli *cli, const struct cli_cmd *cmd,
                     const struct cli_args *a)
{
    (void)cmd;
    (void)a;
    cli->quit = 1;
    cli->quit_status = -1;
    return CLI_OK;
}

const struct cli_spec cli_cmd_quit = {
    .cmd = {.name = "quit",
            .usage = "quit",
            .summary = "Leave the shell (as ^D does).",
            .flags = CLI_SHELL_ONLY},
    .exec = exec_quit,
    .arity = "no arguments expected",
};

/* exit N, as sh's: a script's status is N, whatever failed before. */
static int exec_exit(struct cli *cli, const struct cli_cmd *cmd,
                     const struct cli_args *a)
{
    int64_t n = -1;

    if (a->argc > 0 && (cli_parse_i64(a->argv[0], &n) != 0 || n < 0 || n > 255))
        return cli_usage(cli, cmd, "bad status '%s' (0..255)", a->argv[0]);
    cli->quit = 1;
    cli->quit_status = (int)n;
    return CLI_OK;
}

const struct cli_spec cli_cmd_exit = {
    .cmd = {.name = "exit",
            .usage = "exit [N]",
            .summary = "Leave the shell (as ^D does), with status N if given.",
            .flags = CLI_SHELL_ONLY},
    .exec = exec_exit,
    .max_args = 1,
    .arity = "expected at most one status",
};

void cli_shell_message(struct cli *cli, const struct cli_msg *m)
{
    if (m->kind == CLI_MSG_TEXT) {
        printf("%s\n", m->text);
    } else if (m->kind == CLI_MSG_END) { /* not data: --json's stays JSON */
        fflush(stdout);
        fprintf(stderr, "tumbler: %s\n", m->text);
    } else if (m->kind == CLI_MSG_STATE) {
        if (g_interactive && m->code != TB_SESSION_CLOSED &&
            m->code != TB_SESSION_CONNECTING &&
            (m->code != TB_SESSION_CONNECTED || g_was_suspended))
            printf("[session %s]\n", m->text);
        g_was_suspended = m->code == TB_SESSION_SUSPENDED;
        if (m->code == TB_SESSION_EXPIRED ||
            m->code == TB_SESSION_AUTH_FAILED) {
            fprintf(stderr,
                    "tumbler: session %s; the next command "
                    "opens a new one\n",
                    m->text);
            cli_disconnect(cli);
        }
    }
    /* CLI_MSG_WATCH, CLI_MSG_WATCH_END: of a watch command that has
     * ended (its count reached), nothing to tell any more. */
}

/* Prints queued events.  An expired session is dropped here, so the next
 * command starts a new one (credentials from addauth are replayed). */
static void print_messages(struct cli *cli)
{
    struct cli_msg *m;

    while ((m = cli_ev_take()) != NULL) {
        cli_shell_message(cli, m);
        free(m);
    }
    fflush(stdout);
}

/* ---- scripts on stdin ---- */

/* Goes on after a failed command, as sh does, unless -e; exits with the
 * status of the last command that failed, so a caller sees any failure. */
/* Waits for the script's next line, printing what comes meanwhile (a
 * watch's events), or for SIGINT, SIGTERM or SIGHUP: 128 + the signal
 * (the handlers only queue it, and a read they restart would wait for
 * the writer of a pipe for ever), else 0. */
static int next_line_or_signal(struct cli *cli)
{
    int sig, ev;

    while ((ev = cli_ev_wait(STDIN_FILENO, -1, &sig)) != CLI_EV_FD) {
        if (ev == CLI_EV_SIGNAL && sig != SIGCHLD)
            return 128 + sig;
        if (ev == CLI_EV_MSG)
            print_messages(cli);
    }
    return 0;
}

static int run_script(struct cli *cli)
{
    char *line = NULL;
    size_t cap = 0;
    int failed = CLI_OK, rv, sig;

    /* Unbuffered, so that what poll says of stdin is what getline reads
     * next: a signal is acted on between lines, also while the script's
     * writer is slow. */
    setvbuf(stdin, NULL, _IONBF, 0);
    while ((sig = next_line_or_signal(cli)) == 0 &&
           getline(&line, &cap, stdin) > 0) {
        line[strcspn(line, "\n")] = '\0';
        (void)cli_ev_stop_taken();
        rv = run_line(cli, line);
        print_messages(cli);
        /* A signal the command took (a watch, a walk, a connect that
         * waited) ends the script as one between lines does. */
        if ((sig = cli_ev_stop_taken()) != 0) {
            sig += 128;
            break;
        }
        if (rv < 0) {
            if (cli->quit_status >= 0)
                failed = cli->quit_status;
            break;
        }
        if (rv != CLI_OK) {
            failed = rv;
            if (cli->errexit)
                break;
        }
    }
    free(line);
    return sig != 0 ? sig : failed;
}

/* ---- the terminal ---- */

static char *completion_cmd(const char *text, int state)
{
    static int i;
    int n;
    const struct cli_cmd *const *v = cli_commands(&n);

    if (state == 0)
        i = 0;
    while (i < n) {
        const struct cli_cmd *c = v[i++];
        if (cli_offered(g_cli, c) && strncmp(c->name, text, strlen(text)) == 0)
            return strdup(c->name);
    }
    return NULL;
}

static char *completion_path(const char *text, int state)
{
    static struct tb_strings ch;
    static int32_t i;
    static char *dir; /* the parent, however long */
    static const char *base;

    if (state == 0) {
        const char *slash = strrchr(text, '/');
        tb_strings_free(&ch);
        memset(&ch, 0, sizeof ch);
        i = 0;
        free(dir);
        dir = NULL;
        if (slash == NULL || g_cli->c == NULL)
            return NULL;
        dir = strndup(text, slash == text ? 1 : (size_t)(slash - text));
        if (dir == NULL)
            return NULL;
        base = slash + 1;
        if (tb_get_children_sync(g_cli->c, dir, NULL, NULL, &ch) != 0)
            memset(&ch, 0, sizeof ch);
    }
    while (i < ch.count) {
        const char *name = ch.v[i++];
        if (strncmp(name, base, strlen(base)) == 0)
            return cli_path_join(dir, name);
    }
    return NULL;
}

static char **complete(const char *text, int start, int end)
{
    (void)end;
    rl_attempted_completion_over = 1; /* never complete file names */
    if (start == 0)
        return rl_completion_matches(text, completion_cmd);
    if (text[0] == '/') {
        rl_completion_append_character = '\0';
        return rl_completion_matches(text, completion_path);
    }
    return NULL;
}

/* Removing the handler here, inside it, is what stops readline from
 * drawing a fresh prompt before the command has run. */
static void on_line(char *line)
{
    g_line = line;
    g_have_line = 1;
    rl_callback_handler_remove();
}

static void make_prompt(struct cli *cli, char *buf, size_t cap)
{
    const char *st = cli->c ? tb_session_state_name(tb_client_state(cli->c))
                            : "not connected";
    snprintf(buf, cap, "[tumbler %s %s] ", cli->hosts, st);
}

/* Prints queued events above the line being edited, then redraws it. */
static void print_above(struct cli *cli)
{
    char *saved = rl_copy_text(0, rl_end);
    int point = rl_point;

    rl_save_prompt();
    rl_replace_line("", 0);
    rl_redisplay();
    print_messages(cli);
    rl_restore_prompt();
    rl_replace_line(saved ? saved : "", 0);
    rl_point = point;
    rl_forced_update_display();
    free(saved);
}

static char *history_path(void)
{
    const char *h = getenv("TUMBLER_HISTFILE"), *home = getenv("HOME");
    char *p;

    if (h != NULL)
        return *h ? strdup(h) : NULL;
    if (home == NULL || (p = malloc(strlen(home) + 20)) == NULL)
        return NULL;
    sprintf(p, "%s/.tumbler_history", home);
    return p;
}

/* Handles one wake-up; returns 1 when the shell must end. */
static int step(struct cli *cli, char *prompt, size_t cap)
{
    int sig, ev = cli_ev_wait(STDIN_FILENO, -1, &sig);

    if (ev == CLI_EV_FD) {
        rl_callback_read_char();
    } else if (ev == CLI_EV_MSG) {
        print_above(cli);
    } else if (ev == CLI_EV_SIGNAL && sig == SIGINT) {
        /* Like bash: drop the line, fresh prompt. */
        rl_replace_line("", 0);
        rl_crlf();
        rl_on_new_line();
        rl_redisplay();
    } else if (ev == CLI_EV_SIGNAL && sig != SIGCHLD) {
        putchar('\n');
        return 128 + sig;
    }
    if (!g_have_line)
        return 0;
    g_have_line = 0;
    if (g_line == NULL) { /* ^D */
        putchar('\n');
        return 1;
    }
    if (*g_line != '\0')
        add_history(g_line);
    (void)cli_ev_stop_taken();
    if (run_line(cli, g_line) < 0) {
        free(g_line);
        return 1;
    }
    free(g_line);
    /* ^C ends the command alone; SIGTERM or SIGHUP it took, the shell */
    if ((sig = cli_ev_stop_taken()) == SIGTERM || sig == SIGHUP)
        return 128 + sig;
    print_messages(cli);
    make_prompt(cli, prompt, cap);
    rl_callback_handler_install(prompt, on_line);
    return 0;
}

static int run_terminal(struct cli *cli)
{
    char prompt[512], *hist = history_path();
    int rv;

    g_cli = cli;
    rl_readline_name = "tumbler";
    rl_catch_signals = 0; /* ours go through the event pipe */
    (void)cli_ev_catch(SIGQUIT); /* ^\ too: readline's modes restored */
    rl_attempted_completion_function = complete;
    using_history();
    stifle_history(1000);
    if (hist != NULL)
        (void)read_history(hist);
    printf("tumbler shell on %s; 'help' lists the commands, ^D leaves.\n",
           cli->hosts);
    (void)cli_connect(cli);
    print_messages(cli);
    make_prompt(cli, prompt, sizeof prompt);
    rl_callback_handler_install(prompt, on_line);
    while ((rv = step(cli, prompt, sizeof prompt)) == 0)
        ;
    rl_callback_handler_remove();
    if (hist != NULL)
        (void)write_history(hist);
    free(hist);
    if (rv > 1) /* SIGTERM, SIGHUP: 128 + the signal, as a shell's */
        return rv;
    return cli->quit && cli->quit_status >= 0 ? cli->quit_status : CLI_OK;
}

int cli_shell(struct cli *cli)
{
    if (isatty(STDIN_FILENO)) {
        g_interactive = 1;
        return run_terminal(cli);
    }
    return run_script(cli);
}
