/* Error reporting and the output forms several commands share: the exit
 * status of an error code, the error line (text on stderr, and an object
 * on stdout with --json so a script reading stdout sees the failure), the
 * Stat block in zkCli's layout, and number parsing. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/path.h"

int cli_status(int rc)
{
    if (rc == 0)
        return CLI_OK;
    switch (rc) {
    case TB_ECONNECTIONLOSS:
    case TB_ETIMEDOUT:
    case TB_ECLOSING:
        return CLI_UNREACHABLE;
    case TB_ELOCKLOST:
        return CLI_LOST;
    case TB_EFOREIGNLOCK: /* what PATH holds is no lock of ours to wait for */
        return CLI_DATAERR;
    case TB_ENOMEM:
        return CLI_OSERR;
    case TB_ESYSTEM: /* 1 would read as "lock not acquired" */
        return CLI_SOFTWARE;
    case TB_ETOOBIG: /* a request larger than any may be: what the command
                        line asked for (data, an ACL) cannot be sent */
        return CLI_USAGE;
    default:
        break;
    }
    if (rc < 0 && rc >= -127)
        return -rc;
    return CLI_SOFTWARE;
}

/* "attempts": one string per line of `e->attempts` ("  TEXT\n" each). */
static void json_attempts(struct jw *w, const struct cli_error *e)
{
    const char *p = e->attempts, *end = p + e->attempts_len, *nl;

    jw_key(w, "attempts");
    jw_arr(w);
    for (; p < end; p = nl + 1) {
        if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
            nl = end;
        while (p < nl && *p == ' ')
            p++;
        jw_strn(w, p, (size_t)(nl - p));
    }
    jw_end_arr(w);
}

/* "error": {...}, a key of the object open in `w`. */
static void json_error_key(struct jw *w, const struct cli_error *e)
{
    jw_key(w, "error");
    jw_obj(w);
    jw_key(w, "command");
    jw_str(w, e->command);
    if (e->path != NULL) {
        jw_key(w, "path");
        jw_str(w, e->path);
    }
    if (e->servers != NULL) {
        jw_key(w, "servers");
        jw_str(w, e->servers);
    }
    jw_key(w, "code");
    jw_int(w, e->rc);
    jw_key(w, "name");
    jw_str(w, tb_errname(e->rc));
    jw_key(w, "message");
    jw_str(w, e->message != NULL ? e->message : tb_strerror(e->rc));
    if (e->attempts != NULL)
        json_attempts(w, e);
    jw_end_obj(w);
}

void cli_json_error(const struct cli *cli, const struct cli_error *e)
{
    struct jw w;

    if (!cli->json)
        return;
    jw_begin(&w, NULL);
    json_error_key(&w, e);
    jw_finish(&w);
}

static void say_fail(const char *what, const char *where, int rc)
{
    fprintf(stderr, "tumbler: %s%s%s: %s (%s)\n", what, where ? " " : "",
            where ? where : "", tb_strerror(rc), tb_errname(rc));
}

int cli_fail(struct cli *cli, const char *what, const char *where, int rc)
{
    struct cli_error e = {.command = what, .path = where, .rc = rc};

    say_fail(what, where, rc);
    cli_json_error(cli, &e);
    return cli_status(rc);
}

int cli_fail_in(struct cli *cli, struct jw *w, const char *what,
                const char *where, int rc)
{
    struct cli_error e = {.command = what, .path = where, .rc = rc};

    say_fail(what, where, rc);
    if (cli->json)
        json_error_key(w, &e);
    return cli_status(rc);
}

int cli_fail_msg(struct cli *cli, const char *what, const char *where, int rc,
                 const char *fmt, ...)
{
    struct cli_error e = {.command = what, .path = where, .rc = rc};
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "tumbler: %s\n", msg);
    e.message = msg;
    cli_json_error(cli, &e);
    return cli_status(rc);
}

void cli_print_done(const struct cli *cli, const char *path, const char *key)
{
    struct jw w;

    if (!cli->json)
        return;
    jw_begin(&w, path);
    jw_key(&w, key);
    jw_bool(&w, 1);
    jw_finish(&w);
}

int cli_err(struct cli *cli, int status, const char *fmt, ...)
{
    va_list ap;

    (void)cli;
    fputs("tumbler: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return status;
}

static void vnotice(const char *fmt, va_list ap)
    __attribute__((format(printf, 1, 0)));
static void vnotice(const char *fmt, va_list ap)
{
    struct pollfd p = {STDERR_FILENO, POLLOUT, 0};
    sigset_t ttou, old;
    char buf[1024];
    int n;

    memcpy(buf, "tumbler: ", 9);
    n = vsnprintf(buf + 9, sizeof buf - 10, fmt, ap);
    if (n < 0)
        return;
    n = 9 + (n < (int)sizeof buf - 10 ? n : (int)sizeof buf - 11);
    buf[n++] = '\n';
    /* SIGTTOU blocked: from the background of a terminal with tostop,
     * the line goes out rather than stopping tumbler, or, caught while CMD
     * runs (child.c), restarting the write for ever. */
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    pthread_sigmask(SIG_BLOCK, &ttou, &old);
    if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT))
        (void)!write(STDERR_FILENO, buf, (size_t)n);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void cli_notice(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vnotice(fmt, ap);
    va_end(ap);
}

int cli_notice_err(int status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vnotice(fmt, ap);
    va_end(ap);
    return status;
}

void cli_time_str(int64_t ms, char *buf, size_t cap)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    if (localtime_r(&t, &tm) == NULL ||
        strftime(buf, cap, "%a %b %d %H:%M:%S %Z %Y", &tm) == 0)
        snprintf(buf, cap, "%lld", (long long)ms);
}

/* What tumbler locks, top and elect -l show of an owner: the data of a
 * node anyone may have written, so no byte of it may drive the terminal. */
const char *cli_text_str(const char *p, size_t n, char *buf, size_t cap)
{
    size_t i = 0, o = 0, k;

    if (p == NULL || n == 0) {
        snprintf(buf, cap, "-");
        return buf;
    }
    while (i < n) {
        const unsigned char *u = (const unsigned char *)p + i;

        k = cli_utf8_len(p + i, n - i);
        if (k == 0 || u[0] < 0x20 || u[0] == 0x7f ||
            (k == 2 && u[0] == 0xc2 && u[1] < 0xa0)) { /* C1: U+0080-9F */
            if (o + 1 >= cap)
                break;
            buf[o++] = '?';
            i += k ? k : 1;
        } else {
            if (o + k >= cap)
                break;
            memcpy(buf + o, p + i, k);
            o += k;
            i += k;
        }
    }
    buf[o] = '\0';
    return buf;
}

/* As ZooKeeper writes session ids in its logs, zkCli's stat and the four
 * letter words (Long.toHexString), so an id can be searched for as is. */
const char *cli_session_str(int64_t id, char buf[CLI_SESSION_LEN])
{
    snprintf(buf, CLI_SESSION_LEN, "0x%llx", (unsigned long long)id);
    return buf;
}

/* The layout of zkCli's stat, so that eyes and scripts used to it work. */
void cli_print_stat(FILE *f, const struct tb_stat *st)
{
    char ct[64], mt[64], owner[CLI_SESSION_LEN];

    cli_time_str(st->ctime, ct, sizeof ct);
    cli_time_str(st->mtime, mt, sizeof mt);
    fprintf(f,
            "cZxid = 0x%llx\nctime = %s\nmZxid = 0x%llx\nmtime = %s\n"
            "pZxid = 0x%llx\ncversion = %d\ndataVersion = %d\n"
            "aclVersion = %d\nephemeralOwner = %s\ndataLength = %d\n"
            "numChildren = %d\n",
            (unsigned long long)st->czxid, ct, (unsigned long long)st->mzxid,
            mt, (unsigned long long)st->pzxid, st->cversion, st->version,
            st->aversion, cli_session_str(st->ephemeral_owner, owner),
            st->data_length, st->num_children);
}

void cli_print_data(const struct cli *cli, const char *path, const char *value,
                    size_t len, const struct tb_stat *st, int with_stat)
{
    if (cli->json) {
        struct jw w;
        jw_begin(&w, path);
        jw_data(&w, value, len);
        jw_key(&w, "stat");
        jw_stat(&w, st);
        jw_finish(&w);
        return;
    }
    /* as zkCli prints it */
    if (value != NULL && len > 0) {
        fwrite(value, 1, len, stdout);
        if (value[len - 1] != '\n')
            putchar('\n');
    }
    if (with_stat)
        cli_print_stat(stdout, st);
    fflush(stdout);
}

/* zkCli's letters, in its order. */
const char *cli_perms_str(int32_t perms, char buf[6])
{
    char *p = buf;

    if (perms & TB_PERM_CREATE)
        *p++ = 'c';
    if (perms & TB_PERM_DELETE)
        *p++ = 'd';
    if (perms & TB_PERM_READ)
        *p++ = 'r';
    if (perms & TB_PERM_WRITE)
        *p++ = 'w';
    if (perms & TB_PERM_ADMIN)
        *p++ = 'a';
    *p = '\0';
    return buf;
}

int cli_walk_stop(struct cli *cli, const char *what)
{
    int sig;

    (void)cli;
    while ((sig = cli_ev_pending_signal()) != 0)
        if (sig != SIGCHLD) {
            fprintf(stderr, "tumbler: %s: stopped by signal %d (%s)\n", what,
                    sig, strsignal(sig));
            return 128 + sig;
        }
    return cli_out_check(what);
}

/* Whether standard output's reader went away: from then on a pipe or a
 * socket without one polls POLLERR or POLLHUP. */
static int reader_gone(void)
{
    struct pollfd p = {STDOUT_FILENO, POLLOUT, 0};

    return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

int cli_out_check(const char *what)
{
    struct stat st;
    int err;

    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    /* The write that failed may be an earlier one, its errno long gone:
     * glibc drops what it could not write, so this fflush had nothing
     * left to write and succeeded.  Ask the descriptor itself then. */
    err = errno;
    if (err == 0 && reader_gone())
        err = EPIPE;
    /* A write of nothing writes nothing to a file or a device, and may
     * fail as the last one did (/dev/full: ENOSPC), saying why.  Not to a
     * socket, to which it could send an empty datagram, nor to a pipe,
     * whose failure is the reader gone, asked above. */
    if (err == 0 &&
        (fstat(STDOUT_FILENO, &st) != 0 ||
         !(S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode))) &&
        write(STDOUT_FILENO, "", 0) < 0)
        err = errno;
    if (err != EPIPE)
        fprintf(stderr, "tumbler: %s%scannot write the output: %s\n",
                what != NULL ? what : "", what != NULL ? ": " : "",
                err != 0 ? strerror(err) : "write error");
    return CLI_OSERR;
}

int cli_parse_i64(const char *s, int64_t *out)
{
    char *end;
    long long v;

    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int cli_parse_seconds(const char *s, int64_t *ms)
{
    char *end;
    double v;

    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v >= 0) || v > 1e9)
        return -1;
    *ms = (int64_t)(v * 1000.0 + 0.5);
    return 0;
}

int cli_read_file(struct cli *cli, const char *name, size_t max, char **out,
                  size_t *len)
{
    FILE *f;
    struct stat st, in;
    char *buf;
    size_t n;
    int bad;

    /* The shell's commands come from stdin: reading data from it there
     * would take the lines after the command as its data. */
    if (strcmp(name, "-") == 0 && cli->shell)
        return cli_err(cli, CLI_USAGE,
                       "-f -: standard input is where the shell reads its "
                       "commands; give a FILE");
    f = strcmp(name, "-") == 0 ? stdin : fopen(name, "rb");
    if (f == NULL)
        return cli_err(cli, CLI_NOINPUT, "cannot open %s: %m", name);
    /* ... nor by another name (/dev/stdin, /proc/self/fd/0) */
    if (cli->shell && f != stdin && fstat(fileno(f), &st) == 0 &&
        fstat(STDIN_FILENO, &in) == 0 && st.st_dev == in.st_dev &&
        st.st_ino == in.st_ino) {
        fclose(f);
        return cli_err(cli, CLI_USAGE,
                       "-f %s: that is standard input, where the shell reads "
                       "its commands; give another FILE",
                       name);
    }
    if ((buf = malloc(max + 1)) == NULL) {
        if (f != stdin)
            fclose(f);
        return CLI_OSERR;
    }
    n = fread(buf, 1, max + 1, f);
    bad = ferror(f);
    if (f != stdin)
        fclose(f);
    if (bad || n > max) {
        free(buf);
        return bad ? cli_err(cli, CLI_NOINPUT, "cannot read %s", name)
                   : cli_err(cli, CLI_USAGE, "%s is larger than %zu bytes",
                             name, max);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

/* Why tb_path_validate refused `p`, for the message: the rule it breaks,
 * in the order that function checks them. */
static const char *path_fault(const char *p)
{
    size_t n = strlen(p), i, len;

    if (p[0] != '/')
        return "is not an absolute path";
    if (p[n - 1] == '/')
        return "ends with '/'";
    for (i = 1; i < n; i += len + 1) {
        len = strcspn(p + i, "/");
        if (len == 0)
            return "has an empty component ('//')";
        if (len <= 2 && strncmp(p + i, "..", len) == 0)
            return len == 1 ? "has a '.' component" : "has a '..' component";
    }
    return "has a character a path may not have (a control or special "
           "character, one beyond U+FFFF, or bytes that are not UTF-8)";
}

/* The rules are ZooKeeper's, as the client library and the server apply
 * them: tb_path_validate, the one check of them, in the libtumbler that
 * tumbler links.  Checked before any connection, a bad path is a usage
 * error (64) naming it, not a request the library refuses (8) nor a
 * recipe's EINVAL (70).  `seq`: a sequential create's path, which the
 * server's suffix completes, so "/parent/" is one. */
static int check_path(struct cli *cli, const struct cli_cmd *cmd,
                      const char *path, int seq)
{
    size_t n = path != NULL ? strlen(path) : 0;
    char *full = NULL;
    const char *checked = path != NULL ? path : "";
    int rc;

    /* With a stand-in suffix, as the library checks it. */
    if (seq && n > 0 && path[n - 1] == '/') {
        if ((full = malloc(n + 2)) == NULL)
            return cli_err(cli, CLI_OSERR, "out of memory");
        memcpy(full, path, n);
        memcpy(full + n, "1", 2);
        checked = full;
    }
    rc = tb_path_validate(tb_str_c(checked)) == 0
             ? 0
             : cli_usage(cli, cmd, "'%s' %s", path != NULL ? path : "",
                         path_fault(checked));
    free(full);
    return rc;
}

int cli_check_path(struct cli *cli, const struct cli_cmd *cmd, const char *path)
{
    return check_path(cli, cmd, path, 0);
}

int cli_check_seq_path(struct cli *cli, const struct cli_cmd *cmd,
                       const char *path)
{
    return check_path(cli, cmd, path, 1);
}

char *cli_path_join(const char *dir, const char *name)
{
    size_t dl = strcmp(dir, "/") != 0 ? strlen(dir) : 0, nl = strlen(name);
    char *s = malloc(dl + nl + 2);

    if (s == NULL)
        return NULL;
    memcpy(s, dir, dl);
    s[dl] = '/';
    memcpy(s + dl + 1, name, nl + 1);
    return s;
}

int cli_check_recipe_path(struct cli *cli, const struct cli_cmd *cmd,
                          const char *path)
{
    int rc = check_path(cli, cmd, path, 0);

    if (rc == 0 && strcmp(path, "/") == 0)
        return cli_usage(cli, cmd, "'/' is the root: %s needs a path below it",
                         cmd->name);
    return rc;
}

int cli_path_arg(struct cli *cli, const struct cli_cmd *cmd, int argc,
                 char **argv)
{
    int rc;

    if (argc - optind != 1)
        return cli_usage(cli, cmd, "expected one PATH");
    if ((rc = cli_check_path(cli, cmd, argv[optind])) != 0)
        return rc;
    return cli_connect(cli);
}
