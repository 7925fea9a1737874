/* tumbler top [PATH]: the locks under PATH, refreshed every second: each
 * with its holders and waiters (owner, how long held or waited, fencing
 * token), and the figures of the server's `srvr` (requests a second,
 * latency).  Read-only: it lists the tree and asks four-letter words.
 *
 * Each refresh walks PATH's subtree (not /zookeeper, at most WALK_MAX
 * nodes); a node whose children are a lock's is read by locklist.c, the
 * same code as `tumbler locks`, and not walked further.  A non-fair lock
 * is an ephemeral node whose data starts "_c_<uuid>": other ephemeral
 * leaves are not locks.
 *
 * Times.  A node's ctime is the leader's wall clock when it was created;
 * how long ago that was needs the server's clock now, which no read
 * returns.  So top measures the skew once, at start: it notes its own
 * wall clock before connecting (t0) and once the session is open (t1),
 * and `cons` on the server then says the time that server stamped on the
 * connection's acceptance (est), which lies between the two: offset =
 * est - (t0 + t1) / 2, within (t1 - t0) / 2.  Ages are our clock plus the
 * offset, less ctime.  Without `cons` (ZooKeeper allows only `srvr` by
 * default), or when its est is a day off ours (then it is no wall-clock
 * time: tumblerd's is its loop's clock), the offset is 0 and the screen
 * says the ages are on this host's clock; an age that comes out negative (a
 * server ahead of what was measured) shows as 0s.  The servers of an ensemble
 * are taken to agree with each other: ctime is the leader's clock.
 *
 * How long held: a node's ctime is when it joined the queue, not when it
 * got the lock, and nothing in the tree says when that was.  A holder top
 * saw waiting is held since the refresh that first saw it hold (late by
 * up to one refresh); one that held when top first saw it is held since
 * its ctime: exact if it got the lock at once, too long if it queued. */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/fourlw.h"
#include "cli/locklist.h"
#include "cli/screen.h"

enum {
    WALK_MAX = 10000,       /* nodes visited per refresh */
    WORD_TIMEOUT_MS = 2000, /* one four-letter word */
    CONS_CAP = 256 * 1024,
    OWNER_COLS = 24,
    DAY_MS = 86400000,
};

/* A lock found by the walk. */
struct found {
    char *path;
    struct ll_listing l;
};

/* A node's role at the last refresh, by token (its czxid: one node, one
 * token).  `since`: the server's time it has held since, if it holds. */
struct seen {
    int64_t token;
    int holds;
    int64_t since;
};

/* At all times `found[0..nfound)` are the locks of the last refresh in
 * path order and `seen[0..nseen)` their nodes. */
struct top {
    struct cli *cli;
    const char *path;
    int64_t interval_ms;
    int batch;
    int64_t offset_ms; /* server's wall clock less ours, if clock_known */
    int64_t offset_err_ms;
    int clock_known; /* 1: offset_ms known; -1: cons's est unusable */
    char server[CLI_HOSTPORT_LEN];  /* where the four-letter words go */
    int64_t prev_received, prev_at; /* prev_at < 0: no earlier srvr */
    /* Requests this view sent since the last srvr (the walk's reads),
     * which that server counts in Received if the session is there:
     * session_here, as its cons said. */
    int64_t own;
    int session_here;
    int words_counted; /* the server counts each srvr in Received too */
    /* --tls: no four-letter words (they would go in clear; this view
     * sends them on a plain connection), so neither srvr nor cons. */
    int no_words;
    struct found *found;
    int nfound, capfound, walked;
    struct seen *seen;
    int nseen;
    const char *state; /* the session's state, NULL while connected */
};

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the server: clock offset and srvr ---- */

/* Whether `hp` counts a four-letter word among the requests srvr's
 * Received gives (ZooKeeper 3.8 does, on the connections tested here;
 * tumblerd does not): two srvr in a row, nothing of ours between them,
 * differ by one if so.  Another client's requests meanwhile make it look
 * counted; on a server that busy one request an interval is noise. */
static int words_counted(const char *hp)
{
    char buf[4096], why[256];
    struct cli_srvr a, b;

    if (cli_4lw(hp, "srvr", WORD_TIMEOUT_MS, buf, sizeof buf, why, sizeof why) <
            0 ||
        cli_srvr_parse(buf, &a) != 0 ||
        cli_4lw(hp, "srvr", WORD_TIMEOUT_MS, buf, sizeof buf, why, sizeof why) <
            0 ||
        cli_srvr_parse(buf, &b) != 0)
        return 0;
    return b.received > a.received;
}

/* Picks the server for the four-letter words: the one whose `cons` lists
 * our session (its `est` gives the clock offset), else the first that
 * answers srvr, else the first. */
static void find_server(struct top *t, int64_t t0, int64_t t1)
{
    char hp[CLI_HOSTPORT_LEN], why[256], *buf = malloc(CONS_CAP);
    int64_t sid = tb_client_session(t->cli->c, NULL), est;
    int n;

    t->server[0] = '\0';
    for (n = 0; buf != NULL && cli_4lw_server(t->cli->hosts, n, hp) == 0; n++) {
        if (cli_4lw(hp, "cons", WORD_TIMEOUT_MS, buf, CONS_CAP, why,
                    sizeof why) >= 0 &&
            cli_cons_est(buf, sid, &est) == 0) {
            t->offset_ms = est - (t0 + t1) / 2;
            t->offset_err_ms = (t1 - t0 + 1) / 2;
            /* a day apart: est is no wall-clock time (not ZooKeeper's) */
            t->clock_known = llabs(t->offset_ms) < DAY_MS ? 1 : -1;
            t->session_here = 1;
            memcpy(t->server, hp, sizeof hp);
            break;
        }
        if (t->server[0] == '\0' && cli_4lw(hp, "srvr", WORD_TIMEOUT_MS, buf,
                                            CONS_CAP, why, sizeof why) >= 0)
            memcpy(t->server, hp, sizeof hp);
    }
    free(buf);
    if (t->server[0] == '\0' && cli_4lw_server(t->cli->hosts, 0, hp) == 0)
        memcpy(t->server, hp, sizeof hp);
    t->words_counted = words_counted(t->server);
}

/* The server's figures.  The rate is of requests the server received
 * (srvr's Received) less this view's own: its walk when its session is
 * there, and this srvr where the server counts it (words_counted). */
static void print_srvr(struct top *t, FILE *f)
{
    char buf[4096], why[256];
    struct cli_srvr s;
    int64_t now = clock_ms(CLOCK_MONOTONIC), own = t->own, n;

    t->own = 0;
    if (t->no_words) {
        fprintf(f, "no server figures over TLS: the four-letter words "
                   "would go in clear\n");
        return;
    }

    if (cli_4lw(t->server, "srvr", WORD_TIMEOUT_MS, buf, sizeof buf, why,
                sizeof why) < 0) {
        fprintf(f, "server %s: %s\n", t->server, why);
        t->prev_at = -1;
        return;
    }
    if (cli_srvr_parse(buf, &s) != 0) {
        fprintf(f, "server %s: srvr: %s\n", t->server,
                cli_text_str(buf, strcspn(buf, "\n"), why, sizeof why));
        t->prev_at = -1;
        return;
    }
    fprintf(f, "server %s %s: ", t->server, s.mode);
    if (t->prev_at >= 0 && now > t->prev_at && s.received >= t->prev_received) {
        n = s.received - t->prev_received - (t->session_here ? own : 0) -
            t->words_counted;
        fprintf(f, "%.1f requests/s %s, ",
                (double)(n > 0 ? n : 0) * 1000.0 / (double)(now - t->prev_at),
                t->session_here ? "besides top's" : "(top's own may count)");
    } else
        fprintf(f, "- requests/s, ");
    fprintf(f,
            "latency min/avg/max %g/%g/%g ms, %" PRId64 " outstanding, %" PRId64
            " connections, %" PRId64 " nodes\n",
            s.lat_min, s.lat_avg, s.lat_max, s.outstanding, s.connections,
            s.nodes);
    t->prev_received = s.received;
    t->prev_at = now;
}

/* ---- the walk ---- */

static void free_found(struct top *t)
{
    int i;

    for (i = 0; i < t->nfound; i++) {
        ll_free(&t->found[i].l);
        free(t->found[i].path);
    }
    t->nfound = 0;
}

/* Whether a listing is a lock to show. */
static int is_lock(const struct ll_listing *l)
{
    if (l->n == 0) /* idle, or a plain node with a child "locks" */
        return 0;
    switch (l->layout) {
    case LL_LOCK:
    case LL_SEM:
    case LL_ELECT:
        return 1;
    case LL_NONFAIR:
        return l->n == 1 && l->v[0].len >= 39 &&
               memcmp(l->v[0].data, "_c_", 3) == 0;
    default:
        return 0;
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk(struct top *t, char *path);

static int walk_children(struct top *t, const char *path, struct tb_strings *ch)
{
    size_t n;
    char *sub;
    int32_t i;
    int rc = 0;

    qsort(ch->v, (size_t)ch->count, sizeof ch->v[0], by_name);
    for (i = 0; i < ch->count && rc == 0; i++) {
        if (strcmp(path, "/") == 0 && strcmp(ch->v[i], "zookeeper") == 0)
            continue;
        n = strlen(path) + strlen(ch->v[i]) + 2;
        if ((sub = malloc(n)) == NULL)
            return TB_ENOMEM;
        snprintf(sub, n, "%s/%s", strcmp(path, "/") ? path : "", ch->v[i]);
        rc = walk(t, sub);
    }
    return rc;
}

/* Reads `path` (taken over) and keeps it if it is a lock, else walks its
 * children.  0 or a TB_E* code; a node gone meanwhile is skipped. */
static int walk(struct top *t, char *path)
{
    struct tb_strings ch;
    struct tb_stat st;
    struct found *f;
    int rc;

    if (t->walked++ >= WALK_MAX) {
        free(path);
        return 0;
    }
    if (t->nfound == t->capfound) {
        int cap = t->capfound ? t->capfound * 2 : 16;
        if ((f = realloc(t->found, (size_t)cap * sizeof *f)) == NULL) {
            free(path);
            return TB_ENOMEM;
        }
        t->found = f;
        t->capfound = cap;
    }
    t->own++;
    rc = tb_get_children2_sync(t->cli->c, path, NULL, NULL, &ch, &st);
    if (rc != 0) {
        /* Gone meanwhile, or not ours to list (below PATH): left out, not
         * every other lock with it. */
        if (rc == TB_ENOAUTH && strcmp(path, t->path) != 0)
            rc = TB_ENONODE;
        free(path);
        return rc == TB_ENONODE ? 0 : rc;
    }
    f = &t->found[t->nfound];
    memset(f, 0, sizeof *f);
    f->path = path;
    f->l.path = path;
    rc = ll_collect_from(t->cli->c, &f->l, &ch, &st);
    t->own += f->l.reads;
    if (rc == 0 && is_lock(&f->l)) {
        t->nfound++;
    } else {
        ll_free(&f->l);
        if (rc == 0)
            rc = walk_children(t, path, &ch);
        free(path);
    }
    tb_strings_free(&ch);
    return rc;
}

/* ---- the frame ---- */

/* "42s", "3m05s", "2h07m", "5d03h". */
static void age_str(int64_t ms, char *buf, size_t cap)
{
    int64_t s = ms > 0 ? ms / 1000 : 0;

    if (s < 60)
        snprintf(buf, cap, "%" PRId64 "s", s);
    else if (s < 3600)
        snprintf(buf, cap, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, cap, "%" PRId64 "h%02" PRId64 "m", s / 3600, s / 60 % 60);
    else
        snprintf(buf, cap, "%" PRId64 "d%02" PRId64 "h", s / 86400,
                 s / 3600 % 24);
}

/* The owner for a line of text (cli_text_str: no control bytes, cut). */
static void owner_str(const struct ll_listing *l, const struct ll_entry *e,
                      char *buf)
{
    const char *p;
    size_t n;

    ll_owner(l, e, &p, &n);
    cli_text_str(p, n, buf, OWNER_COLS + 1);
}

static const struct seen *seen_of(const struct top *t, int64_t token)
{
    int i;

    for (i = 0; i < t->nseen; i++)
        if (t->seen[i].token == token)
            return &t->seen[i];
    return NULL;
}

/* One node's line; `next` gets what the next refresh knows of it. */
static void print_entry(const struct top *t, FILE *f,
                        const struct ll_listing *l, const struct ll_entry *e,
                        int64_t now, struct seen *next)
{
    const struct seen *was = seen_of(t, e->st.czxid);
    char owner[OWNER_COLS + 1], age[32];
    int64_t since = e->st.ctime;

    if (e->holds && was != NULL)
        since = was->holds ? was->since : now;
    *next = (struct seen){e->st.czxid, e->holds, since};
    owner_str(l, e, owner);
    age_str(now - since, age, sizeof age);
    fprintf(f, "  %-8s %-*s %6s %6s  token %-12" PRId64 " %s\n",
            e->holds ? (l->layout == LL_ELECT ? "leader" : "holder")
                     : "waiting",
            OWNER_COLS, owner, e->holds ? "held" : "waited", age, e->st.czxid,
            e->rel);
}

/* The locks and their nodes; the nodes' roles become t->seen. */
static void print_locks(struct top *t, FILE *f, int64_t now)
{
    struct seen *next;
    char name[64];
    int i, j, k = 0, n = 0, nh = 0;

    for (i = 0; i < t->nfound; i++) {
        n += t->found[i].l.n;
        nh += ll_holding(&t->found[i].l);
    }
    fprintf(f, "%d lock%s under %s: %d holding, %d waiting%s\n\n", t->nfound,
            t->nfound == 1 ? "" : "s", t->path, nh, n - nh,
            t->walked > WALK_MAX ? " (walk stopped after 10000 nodes)" : "");
    next = calloc((size_t)n + 1, sizeof *next);
    for (i = 0; i < t->nfound; i++) {
        const struct ll_listing *l = &t->found[i].l;
        nh = ll_holding(l);
        fprintf(f, "%s  %s, %d holding, %d waiting\n", l->path,
                ll_layout_name(l, name, sizeof name), nh, l->n - nh);
        for (j = 0; j < l->n; j++) {
            struct seen dummy;
            print_entry(t, f, l, &l->v[j], now, next ? &next[k] : &dummy);
            k++;
        }
    }
    free(t->seen);
    t->seen = next;
    t->nseen = next ? n : 0;
}

/* One refresh as text: 0 or the TB_E* code of the walk. */
static int frame(struct top *t, FILE *f)
{
    int64_t wall = clock_ms(CLOCK_REALTIME);
    int64_t now = wall + (t->clock_known > 0 ? t->offset_ms : 0);
    time_t secs = (time_t)(wall / 1000);
    char when[16] = "";
    struct tm tm;
    char *path;
    int rc;

    if (localtime_r(&secs, &tm) != NULL)
        strftime(when, sizeof when, "%H:%M:%S", &tm);
    fprintf(f, "tumbler top %s - %s, every %gs%s%s%s\n", t->path, when,
            (double)t->interval_ms / 1000.0, t->batch ? "" : " - q quits",
            t->state ? " - session " : "", t->state ? t->state : "");
    print_srvr(t, f);
    if (t->clock_known > 0)
        fprintf(f,
                "ages on the server's clock (ours %+" PRId64 " ms, +-%" PRId64
                " ms)\n",
                t->offset_ms, t->offset_err_ms);
    else
        fprintf(f,
                "ages on this host's clock (the server's is not known: %s)\n",
                t->clock_known < 0 ? "its cons gives no wall-clock time"
                : t->no_words      ? "no cons over TLS"
                                   : "no cons");
    free_found(t);
    t->walked = 0;
    if ((path = strdup(t->path)) == NULL)
        return TB_ENOMEM;
    rc = walk(t, path);
    if (rc == TB_ESESSIONEXPIRED)
        (void)tb_client_new_session(t->cli->c);
    if (rc != 0)
        fprintf(f, "\n%s: %s (%s)\n", t->path, tb_strerror(rc), tb_errname(rc));
    else
        print_locks(t, f, now);
    return rc;
}

/* ---- the loop ---- */

/* ^Z: the terminal given back, then stopped as if not caught; once
 * continued, the handler is ours again (SIGCONT redraws). */
static void suspend(struct screen *s)
{
    screen_suspend(s);
    signal(SIGTSTP, SIG_DFL);
    raise(SIGTSTP); /* returns once continued */
    (void)cli_ev_catch(SIGTSTP);
}

/* Waits for the next refresh: 0 to refresh, 1 to quit.  The frame is drawn
 * again on a resize and when continued after a stop. */
static int wait_next(struct top *t, struct screen *s, const char *text,
                     size_t len)
{
    int64_t end = clock_ms(CLOCK_MONOTONIC) + t->interval_ms, left;
    struct cli_msg *m;
    int sig, rv;
    char key;

    while ((left = end - clock_ms(CLOCK_MONOTONIC)) > 0) {
        rv = cli_ev_wait(s->raw ? STDIN_FILENO : -1,
                         left < INT32_MAX ? (int)left : INT32_MAX, &sig);
        if (rv == CLI_EV_SIGNAL && sig == SIGWINCH) {
            screen_draw(s, text, len);
        } else if (rv == CLI_EV_SIGNAL && sig == SIGTSTP) {
            suspend(s);
        } else if (rv == CLI_EV_SIGNAL && sig == SIGCONT) {
            screen_resume(s);
            screen_draw(s, text, len);
        } else if (rv == CLI_EV_SIGNAL && sig != SIGCHLD) {
            return 1;
        }
        while ((m = cli_ev_take()) != NULL) {
            if (m->kind == CLI_MSG_STATE) /* shown while not connected */
                t->state = m->code == TB_SESSION_CONNECTED
                               ? NULL
                               : tb_session_state_name(m->code);
            free(m);
        }
        if (rv == CLI_EV_FD) {
            if (read(STDIN_FILENO, &key, 1) != 1) {
                s->raw = 0; /* no more keys to read */
                continue;
            }
            if (key == 'q' || key == 'Q')
                return 1;
            if (key == ' ')
                return 0;
        }
    }
    return 0;
}

/* The refreshes: the exit status. */
static int run(struct top *t, int64_t iterations)
{
    struct screen s;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    int64_t i;
    int rc = 0, out = 0;

    memset(&s, 0, sizeof s);
    /* ^\ ends it as q does: by its default action the terminal was left
     * raw, on the alternate screen. */
    if (!t->batch && (screen_open(&s) != 0 || cli_ev_catch(SIGWINCH) != 0 ||
                      cli_ev_catch(SIGTSTP) != 0 ||
                      cli_ev_catch(SIGCONT) != 0 || cli_ev_catch(SIGQUIT) != 0))
        t->batch = 1;
    for (i = 0; iterations < 0 || i < iterations; i++) {
        free(text);
        text = NULL;
        if ((f = open_memstream(&text, &len)) == NULL) {
            rc = TB_ENOMEM;
            break;
        }
        rc = frame(t, f);
        fclose(f);
        if (t->batch) {
            fwrite(text, 1, len, stdout);
            putchar('\n');
            /* A reader gone (top -b | head) ends top at its next frame,
             * or it would write into the void for ever. */
            if ((out = cli_out_check("top")) != 0)
                break;
        } else {
            screen_draw(&s, text, len);
        }
        if ((iterations >= 0 && i + 1 == iterations) ||
            wait_next(t, &s, text, len))
            break;
    }
    screen_close(&s);
    free(text);
    if (out != 0)
        return out;
    return rc != 0 && t->batch ? cli_status(rc) : CLI_OK;
}

static int exec_top(struct cli *cli, const struct cli_cmd *cmd,
                    const struct cli_args *a)
{
    struct top t;
    int64_t t0, t1;
    int rc;

    memset(&t, 0, sizeof t);
    t.cli = cli;
    t.path = a->argc > 0 ? a->argv[0] : "/";
    t.interval_ms = 1000;
    t.prev_at = -1;
    t.batch = a->val['b'] != NULL || !isatty(STDOUT_FILENO);
    if (a->val['d'] != NULL &&
        (cli_parse_seconds(a->val['d'], &t.interval_ms) != 0 ||
         t.interval_ms < 100))
        return cli_usage(cli, cmd, "bad delay '%s' (seconds, at least 0.1)",
                         a->val['d']);
    t0 = clock_ms(CLOCK_REALTIME);
    if ((rc = cli_connect(cli)) != 0)
        return rc;
    t1 = clock_ms(CLOCK_REALTIME);
    t.no_words = cli->tls;
    if (!t.no_words)
        find_server(&t, t0, t1);
    rc = run(&t, a->num['n']);
    free_found(&t);
    free(t.found);
    free(t.seen);
    return rc;
}

const struct cli_spec cli_cmd_top = {
    .cmd = {.name = "top",
            .usage = "top [-b] [-d SECS] [-n N] [PATH]",
            .summary = "Watch the locks under PATH (default /) and the "
                       "server's load, refreshed.",
            .flags = CLI_NO_SHELL | CLI_NO_JSON | CLI_PATH,
            .notes =
                "Each lock: its layout, holders and waiters in queue order, "
                "each with its\n"
                "owner (the node's data, by default HOST:PID), how long it "
                "has held or\n"
                "waited, and its fencing token.  Above them: the server's "
                "requests a second\n"
                "and latency (srvr), not counting this view's own requests "
                "(its srvr, and its\n"
                "reads when its session is on that server, as cons says).  "
                "Ages are on the\n"
                "server's clock when its cons answers.  With --tls no "
                "four-letter word is\n"
                "sent (they would go in clear): no server figures, and ages "
                "on this host's\n"
                "clock.\n"
                "Keys: q quits, space refreshes now.  SIGINT and SIGTERM "
                "end it cleanly;\n"
                "^Z gives the terminal back while it is stopped, and it "
                "draws again when\n"
                "continued.\n"
                "Batch mode (-b, or when stdout is no terminal): plain text, "
                "one frame per\n"
                "refresh, a blank line after each; exit status 0, or that of "
                "the last\n"
                "refresh's error.\n"},
    .exec = exec_top,
    .opts =
        (const struct cli_opt[]){
            {.letter = 'b',
             .name = "batch",
             .help = "plain text, no screen handling, for scripts"},
            {.letter = 'd',
             .name = "delay",
             .kind = CLI_STR,
             .arg = "SECS",
             .help = "seconds between refreshes (default 1; at least\n0.1)"},
            {.letter = 'n',
             .name = "iterations",
             .kind = CLI_POSITIVE,
             .arg = "N",
             .help = "stop after N refreshes (default: until q)",
             .what = "iteration count",
             .hint = " (at least 1)"},
            {0}},
    .max_args = 1,
    .arity = "expected at most one PATH",
};
