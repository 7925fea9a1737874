/* tumbler status: each server of the connection string as its `srvr`
 * answers (mode, zxid, clients, latency), and whether the whole answers as
 * one healthy ensemble: every server reached, exactly one leading (or the
 * one server standalone).  No session is opened, so it works where no
 * server takes clients, which is when it is needed most. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/fourlw.h"

enum {
    WORD_TIMEOUT_MS = 2000, /* for each server */
    ANSWER_CAP = 4096,      /* srvr's answer is about 250 bytes */
    MAX_SERVERS = 255,      /* ZooKeeper's ids go to 255 */
};

/* One server: `mode` is srvr's, or what kept it from answering. */
struct server {
    char hp[CLI_HOSTPORT_LEN];
    int answered;
    struct cli_srvr s;
    const char *mode; /* s.mode, "unreachable", "not serving", "unknown" */
    char why[256];    /* why not answered ("" if it did) */
};

/* Asks one server: a thread's body, one thread per server. */
static void *ask(void *arg)
{
    struct server *sv = arg;
    char buf[ANSWER_CAP];
    size_t n = strlen(sv->hp);

    sv->why[0] = '\0';
    if (cli_4lw(sv->hp, "srvr", WORD_TIMEOUT_MS, buf, ANSWER_CAP, sv->why,
                sizeof sv->why) < 0) {
        sv->mode = "unreachable";
        /* cli_4lw names the server first; the table does already */
        if (strncmp(sv->why, sv->hp, n) == 0 && sv->why[n] == ':')
            memmove(sv->why, sv->why + n + 2, strlen(sv->why + n + 2) + 1);
        return NULL;
    }
    if (cli_srvr_parse(buf, &sv->s) == 0 && sv->s.mode[0] != '\0') {
        sv->answered = 1;
        sv->mode = sv->s.mode;
        return NULL;
    }
    /* ZooKeeper's and tumblerd's words for a server that knows no leader
     * (neither lets a whitelist leave srvr out: zkServer.sh needs it) */
    sv->mode = strstr(buf, "not currently serving") != NULL ? "not serving"
                                                            : "unknown";
    cli_text_str(buf, strcspn(buf, "\n"), sv->why, sizeof sv->why);
    return NULL;
}

/* Asks the n servers at once, so that the table is one moment's and a
 * hung server costs its 2 s once, not once for each. */
static void ask_all(struct server *sv, int n)
{
    pthread_t th[MAX_SERVERS];
    int started[MAX_SERVERS], i;

    for (i = 0; i < n; i++)
        if (!(started[i] = pthread_create(&th[i], NULL, ask, &sv[i]) == 0))
            ask(&sv[i]); /* no thread: in turn */
    for (i = 0; i < n; i++)
        if (started[i])
            pthread_join(th[i], NULL);
}

static void print_text(const struct server *sv, int n, const char *verdict)
{
    int w = (int)strlen("SERVER"), i;
    char zxid[24], lat[64];

    for (i = 0; i < n; i++)
        if ((int)strlen(sv[i].hp) > w)
            w = (int)strlen(sv[i].hp);
    printf("%-*s  %-11s  %-18s  %7s  %11s  %-15s  %s\n", w, "SERVER", "MODE",
           "ZXID", "CLIENTS", "OUTSTANDING", "LATENCY ms", "NODES");
    for (i = 0; i < n; i++) {
        const struct cli_srvr *s = &sv[i].s;

        if (!sv[i].answered) {
            printf("%-*s  %-11s  %s\n", w, sv[i].hp, sv[i].mode, sv[i].why);
            continue;
        }
        snprintf(zxid, sizeof zxid, "0x%llx", (unsigned long long)s->zxid);
        snprintf(lat, sizeof lat, "%g/%g/%g", s->lat_min, s->lat_avg,
                 s->lat_max);
        printf("%-*s  %-11s  %-18s  %7lld  %11lld  %-15s  %lld\n", w, sv[i].hp,
               sv[i].mode, zxid, (long long)s->connections,
               (long long)s->outstanding, lat, (long long)s->nodes);
    }
    printf("%s\n", verdict);
}

static void print_json(const struct server *sv, int n, const char *leader,
                       int answered, int ok)
{
    struct jw w;
    int i;

    jw_begin(&w, NULL);
    jw_key(&w, "servers");
    jw_arr(&w);
    for (i = 0; i < n; i++) {
        const struct cli_srvr *s = &sv[i].s;

        jw_obj(&w);
        jw_key(&w, "server");
        jw_str(&w, sv[i].hp);
        jw_key(&w, "mode");
        jw_str(&w, sv[i].mode);
        if (!sv[i].answered) {
            jw_key(&w, "error");
            jw_str(&w, sv[i].why);
        } else {
            jw_key(&w, "zxid");
            jw_hex(&w, s->zxid);
            jw_key(&w, "connections");
            jw_int(&w, s->connections);
            jw_key(&w, "outstanding");
            jw_int(&w, s->outstanding);
            jw_key(&w, "latency_ms");
            jw_obj(&w);
            jw_key(&w, "min");
            jw_double(&w, s->lat_min);
            jw_key(&w, "avg");
            jw_double(&w, s->lat_avg);
            jw_key(&w, "max");
            jw_double(&w, s->lat_max);
            jw_end_obj(&w);
            jw_key(&w, "nodes");
            jw_int(&w, s->nodes);
        }
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_key(&w, "leader");
    jw_str(&w, leader); /* NULL: null */
    jw_key(&w, "answered");
    jw_int(&w, answered);
    jw_key(&w, "ok");
    jw_bool(&w, ok);
    jw_finish(&w);
}

static int exec_status(struct cli *cli, const struct cli_cmd *cmd,
                       const struct cli_args *a)
{
    struct server *sv;
    char verdict[512];
    const char *leader = NULL;
    int n = 0, i, reached = 0, answered = 0, leaders = 0, standalone = 0, ok;

    (void)a;
    if (cli->tls)
        return cli_usage(cli, cmd,
                         "srvr goes in clear, to the plain client ports: give "
                         "those, without --tls");
    if ((sv = calloc(MAX_SERVERS, sizeof *sv)) == NULL)
        return cli_err(cli, CLI_OSERR, "status: out of memory");
    while (n < MAX_SERVERS && cli_4lw_server(cli->hosts, n, sv[n].hp) == 0)
        n++;
    ask_all(sv, n);
    for (i = 0; i < n; i++) {
        reached += sv[i].answered || strcmp(sv[i].mode, "unreachable") != 0;
        if (!sv[i].answered)
            continue;
        answered++;
        if (strcmp(sv[i].mode, "leader") == 0 && leaders++ == 0)
            leader = sv[i].hp;
        standalone += strcmp(sv[i].mode, "standalone") == 0;
    }
    ok = answered == n && n > 0 &&
         ((leaders == 1 && standalone == 0) || (n == 1 && standalone == 1));
    if (leaders > 1)
        snprintf(verdict, sizeof verdict,
                 "%d servers say they lead; %d of %d servers answered", leaders,
                 answered, n);
    else if (leader != NULL)
        snprintf(verdict, sizeof verdict,
                 "leader %s; %d of %d servers answered", leader, answered, n);
    else if (standalone > 0)
        snprintf(verdict, sizeof verdict,
                 "standalone%s; %d of %d servers answered",
                 n > 1 ? " (not one ensemble)" : "", answered, n);
    else
        snprintf(verdict, sizeof verdict,
                 "no leader known; %d of %d servers answered", answered, n);
    if (cli->json)
        print_json(sv, n, leaders > 1 ? NULL : leader, answered, ok);
    else
        print_text(sv, n, verdict);
    fflush(stdout);
    free(sv);
    return ok ? CLI_OK : reached > 0 ? CLI_CONFLICT : CLI_UNREACHABLE;
}

const struct cli_spec cli_cmd_status = {
    .cmd =
        {.name = "status",
         .usage = "status",
         .summary = "Show each server's mode, zxid and load, and whether "
                    "one leads.",
         .notes =
             "Asks every server of HOSTS at once for srvr (the "
             "four-letter word ZooKeeper\n"
             "allows by default), each within 2 s, and opens no session: it "
             "works when no\n"
             "server takes clients.  The last line says who leads and how many "
             "answered.\n"
             "Exit status 0 when every server answered and exactly one "
             "leads (or the\n"
             "one server is standalone); 1 when some server was reached "
             "but not that;\n"
             "69 when none was.  Not with --tls: srvr would go in clear.\n"},
    .exec = exec_status,
    .arity = "no arguments expected",
};
