/* An ensemble's configuration: the server.N lines (each value parsed as
 * ZooKeeper 3.5+ reads it, each N given once in the file and once on the
 * command line), this server's id from dataDir/myid or serverId, what the
 * lines must say together for an ensemble to run, and the members as
 * ZooKeeper's `conf` and /zookeeper/config print them.
 *
 * Without server.N lines only the myid file counts: it names a standalone
 * server too.  config.c calls in through config_int.h, for a server.N key,
 * for tb_config_finish()'s checks and for the end of the `conf` text. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/config/config.h"
#include "server/config/config_int.h"

/* ---- server.N=host:quorumPort:electionPort[:role][;[addr:]port] ---- */

#define SERVER_FORM                                                            \
    "host:quorumPort:electionPort[:role][;[clientAddr:]clientPort]"

static int bad_form(const char *at, const char *spec, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: expected " SERVER_FORM ", got \"%s\"", at, spec);
    return TB_EINVAL;
}

/* A host name or IPv4 address as DNS writes them; anything else (blanks,
 * a stray '[', a bare IPv6 address split at its colons) is a typo that
 * would otherwise surface only as a peer never reached. */
static int check_host(const char *host, const char *at, char *err,
                      size_t errlen)
{
    size_t n = strlen(host), i;

    for (i = 0; i < n; i++)
        if (!((host[i] >= 'a' && host[i] <= 'z') ||
              (host[i] >= 'A' && host[i] <= 'Z') ||
              (host[i] >= '0' && host[i] <= '9') || host[i] == '.' ||
              host[i] == '-' || host[i] == '_'))
            break;
    if (n == 0 || n > 253 || i < n) {
        snprintf(err, errlen,
                 "%s: \"%s\" is not a host name or an IP address (an IPv6 "
                 "address goes in brackets)",
                 at, host);
        return TB_EINVAL;
    }
    return 0;
}

/* Splits "host:rest" or "[ipv6]:rest" in place, as ZooKeeper's
 * ConfigUtils.getHostAndPort: *host without brackets, *rest after the
 * ':' or NULL when there is none.  Returns 0, 1 when something else
 * follows the ']' (the caller's "expected ..."), or TB_EINVAL with the
 * message in err. */
static int split_host(char *s, char **host, char **rest, const char *at,
                      char *err, size_t errlen)
{
    unsigned char a6[sizeof(struct in6_addr)];
    char *end;

    if (*s != '[') {
        end = strchr(s, ':');
        *host = s;
        *rest = end != NULL ? end + 1 : NULL;
        if (end != NULL)
            *end = '\0';
        return check_host(s, at, err, errlen);
    }
    end = strchr(s, ']');
    if (end == NULL) {
        snprintf(err, errlen, "%s: \"%s\" has '[' but no ']'", at, s);
        return TB_EINVAL;
    }
    *end = '\0';
    *host = s + 1;
    if (inet_pton(AF_INET6, *host, a6) != 1) {
        snprintf(err, errlen, "%s: [%s] is not an IPv6 address", at, *host);
        return TB_EINVAL;
    }
    *rest = end[1] == ':' ? end + 2 : NULL;
    return end[1] == ':' || end[1] == '\0' ? 0 : 1;
}

/* A port in plain digits, 1..65535 (0, which would let the system pick,
 * cannot be a port that others are told). */
static int parse_port(const char *s, int *port, const char *at, char *err,
                      size_t errlen)
{
    size_t n = strspn(s, "0123456789");
    long v;

    if (n == 0 || s[n] != '\0') {
        snprintf(err, errlen, "%s: expected a port number, got \"%s\"", at, s);
        return TB_EINVAL;
    }
    /* as Java's parseInt: leading zeros are none of the digits counted */
    v = n - strspn(s, "0") > 6 ? 100000 : strtol(s, NULL, 10);
    if (v < 1 || v > 65535) {
        snprintf(err, errlen, "%s: port %s is out of range (1..65535)", at, s);
        return TB_EINVAL;
    }
    *port = (int)v;
    return 0;
}

static int parse_role(char *s, enum tb_config_role *role, const char *at,
                      char *err, size_t errlen)
{
    char *r = trim(s);

    /* ZooKeeper trims and lower-cases it; "a:1:2:" is its split's empty
     * last field, dropped, so the default role. */
    if (*r == '\0' || strcasecmp(r, "participant") == 0)
        *role = TB_ROLE_PARTICIPANT;
    else if (strcasecmp(r, "observer") == 0)
        *role = TB_ROLE_OBSERVER;
    else {
        snprintf(err, errlen,
                 "%s: the role must be participant or observer, got \"%s\"", at,
                 r);
        return TB_EINVAL;
    }
    return 0;
}

/* "clientPort" (on every address, as ZooKeeper) or "addr:clientPort". */
static int parse_client(struct tb_config_server *s, char *c, const char *at,
                        const char *spec, char *err, size_t errlen)
{
    char *host = "0.0.0.0", *port = c;
    int rv;

    if (strchr(c, ';') != NULL)
        return bad_form(at, spec, err, errlen);
    if (*c == '[' || strchr(c, ':') != NULL) {
        rv = split_host(c, &host, &port, at, err, errlen);
        if (rv == 1 || (rv == 0 && (port == NULL || strchr(port, ':'))))
            return bad_form(at, spec, err, errlen);
        if (rv != 0)
            return rv;
    }
    if ((rv = parse_port(port, &s->client_port, at, err, errlen)) != 0)
        return rv;
    return (s->client_addr = strdup(host)) != NULL ? 0 : TB_ENOMEM;
}

static int is_wildcard(const char *addr)
{
    return strcmp(addr, "0.0.0.0") == 0 || strcmp(addr, "::") == 0;
}

/* host, then the 2 or 3 fields after it: quorumPort:electionPort[:role]. */
static int parse_peer(struct tb_config_server *s, char *p, const char *at,
                      const char *spec, char *err, size_t errlen)
{
    char *host, *rest, *f[3];
    int rv, n = 0;

    rv = split_host(p, &host, &rest, at, err, errlen);
    if (rv == 1 || (rv == 0 && rest == NULL))
        return bad_form(at, spec, err, errlen);
    if (rv != 0)
        return rv;
    /* The members tell each other these addresses (the log keeps them):
     * "every address" names none to reach.  ZooKeeper's habit of a
     * member's own line at 0.0.0.0 gave each member other members. */
    if (is_wildcard(host)) {
        snprintf(err, errlen,
                 "%s: %s is every address, none the other members can reach: "
                 "give this member's own address or host name, as the other "
                 "members' lines do",
                 at, host);
        return TB_EINVAL;
    }
    f[n++] = rest;
    while ((rest = strchr(rest, ':')) != NULL) {
        if (n == 3)
            return bad_form(at, spec, err, errlen);
        *rest++ = '\0';
        f[n++] = rest;
    }
    if (n < 2)
        return bad_form(at, spec, err, errlen);
    if ((rv = parse_port(f[0], &s->quorum_port, at, err, errlen)) != 0 ||
        (rv = parse_port(f[1], &s->election_port, at, err, errlen)) != 0 ||
        (n == 3 && (rv = parse_role(f[2], &s->role, at, err, errlen)) != 0))
        return rv;
    /* ZooKeeper refuses it too; both ports are its peers'. */
    if (s->quorum_port == s->election_port) {
        snprintf(err, errlen,
                 "%s: the quorum port and the election port are both %d", at,
                 s->quorum_port);
        return TB_EINVAL;
    }
    return (s->host = strdup(host)) != NULL ? 0 : TB_ENOMEM;
}

void tb_config_server_free(struct tb_config_server *s)
{
    free(s->host);
    free(s->client_addr);
    free(s->spec);
    free(s->where);
    memset(s, 0, sizeof *s);
}

int tb_config_server_parse(struct tb_config_server *s, int id, const char *spec,
                           const char *at, char *err, size_t errlen)
{
    char *copy, *client;
    int rv;

    memset(s, 0, sizeof *s);
    s->id = id;
    s->role = TB_ROLE_PARTICIPANT;
    if (strchr(spec, '|') != NULL) {
        /* ZooKeeper's multiAddress.enabled, false by default there too */
        snprintf(err, errlen, "%s: several addresses (a|b) are not supported",
                 at);
        return TB_EINVAL;
    }
    if ((copy = strdup(spec)) == NULL)
        return TB_ENOMEM;
    client = strchr(copy, ';');
    if (client != NULL)
        *client++ = '\0';
    rv = parse_peer(s, copy, at, spec, err, errlen);
    /* An empty client part ("a:1:2;") is no client part, as Java's
     * split() leaves it. */
    if (rv == 0 && client != NULL && *client != '\0')
        rv = parse_client(s, client, at, spec, err, errlen);
    free(copy);
    if (rv == 0 &&
        ((s->spec = strdup(spec)) == NULL || (s->where = strdup(at)) == NULL))
        rv = TB_ENOMEM;
    if (rv == TB_ENOMEM)
        snprintf(err, errlen, "%s: out of memory", at);
    if (rv != 0)
        tb_config_server_free(s);
    return rv;
}

/* "server.N": parsed at once, so that a bad value is blamed on its own
 * line; tb_config_finish() checks the lines against each other.  One N
 * twice in the file (or twice on the command line) is refused: ZooKeeper
 * lets the later line win without a word, and the member of the other
 * would be dropped unseen.  On the command line it overrides the file's,
 * as every key does. */
int config__set_server(struct tb_config *cfg, const char *key,
                       const char *value, const struct tb_config_origin *o,
                       const char *at, char *err, size_t errlen)
{
    struct tb_config_server s, *grown, *old = NULL;
    int line = o != NULL && o->file != NULL ? o->line : 0;
    int64_t id;
    size_t i;
    int rv;

    if (parse_i64(key + 7, &id) != 0 || id < 1 || id > 254 ||
        key[7] == '+' || key[7] == '-') {
        set_err(err, errlen, "%s: the server id must be 1..254", at);
        return TB_EINVAL;
    }
    if (*value == '\0') {
        set_err(err, errlen, "%s: must not be empty", at);
        return TB_EINVAL;
    }
    for (i = 0; i < cfg->nservers; i++)
        if (cfg->servers[i].id == (int)id)
            old = &cfg->servers[i];
    if (old != NULL && (old->line > 0) == (line > 0)) {
        if (line > 0)
            set_err(err, errlen, "%s: given twice, first on line %d", at,
                    old->line);
        else
            set_err(err, errlen, "%s: given twice", at);
        return TB_EINVAL;
    }
    rv = tb_config_server_parse(&s, (int)id, value, at, err, errlen);
    if (rv != 0)
        return rv;
    s.line = line;
    if (old != NULL) {
        tb_config_server_free(old);
        *old = s;
        return 0;
    }
    grown = realloc(cfg->servers, (cfg->nservers + 1) * sizeof *grown);
    if (grown == NULL) {
        tb_config_server_free(&s);
        set_err(err, errlen, "%s: out of memory", at);
        return TB_ENOMEM;
    }
    cfg->servers = grown;
    cfg->servers[cfg->nservers++] = s;
    return 0;
}

/* ---- myid --------------------------------------------------------------- */

int tb_config_read_myid(const char *dir, int *id, char *err, size_t errlen)
{
    char path[PATH_MAX], line[64], *v;
    size_t n = strlen(dir);
    FILE *f;
    long x;

    snprintf(path, sizeof path, "%s%smyid", dir,
             n > 0 && dir[n - 1] == '/' ? "" : "/");
    f = fopen(path, "r");
    if (f == NULL && (errno == ENOENT || errno == ENOTDIR))
        return 1; /* a data directory not made yet holds no myid either */
    line[0] = '\0';
    if (f == NULL || (fgets(line, sizeof line, f) == NULL && ferror(f))) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        if (f != NULL)
            fclose(f);
        return TB_EIO;
    }
    fclose(f);
    v = trim(line);
    n = strspn(v, "0123456789");
    if (n == 0 || v[n] != '\0') {
        snprintf(err, errlen,
                 "%s: expected a server id (1..254) alone on its first line, "
                 "got \"%s\"",
                 path, v);
        return TB_EINVAL;
    }
    x = n - strspn(v, "0") > 4 ? 1000 : strtol(v, NULL, 10);
    if (x < 1 || x > 254) {
        snprintf(err, errlen, "%s: server id %s is out of range (1..254)", path,
                 v);
        return TB_EINVAL;
    }
    *id = (int)x;
    return 0;
}

/* ---- the members together ------------------------------------------------ */

/* "zoo.cfg:4", "the command line" or "the default": where a key was set,
 * for a message blaming another. */
static const char *origin_text(char *buf, size_t cap,
                               const struct tb_config_origin *o)
{
    if (o->file != NULL)
        snprintf(buf, cap, "%s:%d", o->file, o->line);
    else
        snprintf(buf, cap, "%s",
                 o->line < 0 ? "the default" : "the command line");
    return buf;
}

/* An IP literal's bytes ("localhost" as 127.0.0.1, as clientPortAddress
 * takes it), so that one host written two ways is seen as one; 0 for a
 * name, which is compared as written (nothing here resolves names). */
static int ip_bytes(const char *host, unsigned char out[16])
{
    if (strcmp(host, "localhost") == 0)
        host = "127.0.0.1";
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0,    0,
                                             0, 0, 0, 0, 0xff, 0xff};

    memset(out, 0, 16);
    /* An IPv4 address as its IPv6 form, ::ffff:a.b.c.d, which is it. */
    if (inet_pton(AF_INET, host, out + 12) == 1) {
        memcpy(out, mapped, sizeof mapped);
        return AF_INET;
    }
    if (inet_pton(AF_INET6, host, out) != 1)
        return 0;
    return memcmp(out, mapped, sizeof mapped) == 0 ? AF_INET : AF_INET6;
}

static int same_host(const char *a, const char *b)
{
    unsigned char x[16], y[16];
    int fx = ip_bytes(a, x), fy = ip_bytes(b, y);

    if (fx != 0 || fy != 0)
        return fx == fy && memcmp(x, y, 16) == 0;
    return strcasecmp(a, b) == 0;
}

static int by_id(const void *a, const void *b)
{
    const struct tb_config_server *x = a, *y = b;

    return (x->id > y->id) - (x->id < y->id);
}

/* This server's id: dataDir/myid, serverId, both (then equal), or, for
 * a standalone server only, serverId's default. */
static int finish_server_id(struct tb_config *cfg, char *err, size_t errlen)
{
    int myid = 0, set = cfg->origin_server_id.line >= 0, rv;
    char at[512];

    rv = tb_config_read_myid(cfg->data_dir, &myid, err, errlen);
    if (rv < 0)
        return rv;
    if (rv == 0 && set && myid != cfg->server_id) {
        where(at, sizeof at, &cfg->origin_server_id, "serverId");
        set_err(err, errlen, "%s: %d disagrees with myid in %s, which says %d",
                at, cfg->server_id, cfg->data_dir, myid);
        return TB_EINVAL;
    }
    if (rv == 0)
        cfg->server_id = myid;
    else if (cfg->nservers > 0 && !set) {
        set_err(err, errlen,
                "no myid in %s and no serverId: which server.N is this one?",
                cfg->data_dir);
        return TB_EINVAL;
    }
    return 0;
}

/* What the lines say together: no address twice, a member's quorum,
 * election or client address another's or another of its own (in file
 * order, blaming the later line), as a reconfig checks them
 * (duplicate_address); at least one voter. */
static int check_members(const struct tb_config *cfg, char *err, size_t errlen)
{
    const struct tb_config_server *a, *b;
    char addr[TB_CONFIG_ADDR_MAX];
    size_t i, j, voters = 0;
    int k, l;

    for (j = 0; j < cfg->nservers; j++) {
        b = &cfg->servers[j];
        voters += b->role == TB_ROLE_PARTICIPANT;
        for (i = 0; i <= j; i++) {
            a = &cfg->servers[i];
            if (!tb_config_shared_address(b, a, &k, &l, addr, sizeof addr))
                continue;
            set_err(err, errlen, "%s: %s is server.%d's %s address too",
                    b->where, addr, a->id, tb_config_address_kind[l]);
            return TB_EINVAL;
        }
    }
    if (voters == 0) {
        set_err(err, errlen,
                "every server.N line is an observer: raft needs "
                "at least one participant to vote");
        return TB_EINVAL;
    }
    return 0;
}

/* As ZooKeeper's setupClientPort: a client part in this server's own line
 * is where it listens; clientPort and clientPortAddress, if written down
 * too, must say the same (a wildcard clientPortAddress allows any).
 * Without a client part a member listens where clientPortAddress says,
 * or, when it is not written down, on every address as ZooKeeper's does:
 * the standalone default 127.0.0.1 would leave an old-style ensemble
 * (clientPort beside server.N lines without ";port") refusing every
 * client but its own machine's. */
/* This server's quorum and election ports are none of its other ports: it
 * binds them all (compared by port alone: on one machine, a wildcard
 * listener takes the port on every address). */
static int own_ports_apart(const struct tb_config *cfg,
                           const struct tb_config_server *self, char *err,
                           size_t errlen)
{
    const struct {
        int port;
        const char *key;
    } other[] = {{cfg->client_port, "clientPort"},
                 {cfg->tls.port, "secureClientPort"},
                 {cfg->admin.enabled ? cfg->admin.port : 0, "admin.serverPort"},
                 {cfg->metrics.enabled ? cfg->metrics.http_port : 0,
                  "metricsProvider.httpPort"}};
    const int mine[2] = {self->quorum_port, self->election_port};
    size_t i, k;

    for (k = 0; k < 2; k++)
        for (i = 0; i < sizeof other / sizeof other[0]; i++) {
            if (other[i].port == 0 || other[i].port != mine[k])
                continue;
            set_err(err, errlen, "%s: the %s port %d is also this server's %s",
                    self->where, tb_config_address_kind[k], mine[k],
                    other[i].key);
            return TB_EINVAL;
        }
    return 0;
}

static int finish_client_part(struct tb_config *cfg,
                              const struct tb_config_server *self, char *err,
                              size_t errlen)
{
    const char *addr = self->client_addr;
    unsigned char bytes[16];
    char from[512];

    if (addr == NULL)
        return cfg->origin_client_addr.line >= 0
                   ? 0
                   : replace_str(&cfg->client_port_address, "0.0.0.0");
    if (ip_bytes(addr, bytes) == 0) {
        set_err(err, errlen,
                "%s: the client address \"%s\" must be an IP "
                "address: this server listens on it",
                self->where, addr);
        return TB_EINVAL;
    }
    /* clientPort=0 is ZooKeeper's "not set": the line's port is taken. */
    if (cfg->origin_client_port.line >= 0 && cfg->client_port > 0 &&
        cfg->client_port != self->client_port) {
        set_err(err, errlen,
                "%s: client port %d differs from clientPort %d "
                "(%s)",
                self->where, self->client_port, cfg->client_port,
                origin_text(from, sizeof from, &cfg->origin_client_port));
        return TB_EINVAL;
    }
    if (cfg->origin_client_addr.line >= 0 &&
        !is_wildcard(cfg->client_port_address) &&
        !same_host(cfg->client_port_address, addr)) {
        set_err(err, errlen,
                "%s: client address %s differs from "
                "clientPortAddress %s (%s)",
                self->where, addr, cfg->client_port_address,
                origin_text(from, sizeof from, &cfg->origin_client_addr));
        return TB_EINVAL;
    }
    cfg->client_port = self->client_port;
    return replace_str(&cfg->client_port_address,
                       strcmp(addr, "localhost") == 0 ? "127.0.0.1" : addr);
}

/* An ensemble's configuration, as far as it can be judged alone: whether
 * it agrees with the members stored in the log is the log's to check. */
int config__finish_ensemble(struct tb_config *cfg, char *err, size_t errlen)
{
    const struct tb_config_server *self;
    char list[512], from[512];
    size_t i, n = 0;
    int rv;

    if ((rv = finish_server_id(cfg, err, errlen)) != 0 || cfg->nservers == 0)
        return rv;
    if ((rv = check_members(cfg, err, errlen)) != 0)
        return rv;
    qsort(cfg->servers, cfg->nservers, sizeof *cfg->servers, by_id);
    if ((self = tb_config_self(cfg)) == NULL) {
        for (i = 0; i < cfg->nservers && n < sizeof list; i++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%sserver.%d",
                                  i > 0 ? ", " : "", cfg->servers[i].id);
        if (cfg->origin_server_id.line >= 0)
            where(from, sizeof from, &cfg->origin_server_id, "serverId");
        else
            snprintf(from, sizeof from, "myid in %s", cfg->data_dir);
        set_err(err, errlen, "serverId %d is not among %s (from %s)",
                cfg->server_id, list, from);
        return TB_EINVAL;
    }
    if ((rv = finish_client_part(cfg, self, err, errlen)) != 0) {
        if (rv == TB_ENOMEM)
            set_err(err, errlen, "out of memory");
        return rv;
    }
    return own_ports_apart(cfg, self, err, errlen);
}

int tb_config_ensemble(const struct tb_config *cfg)
{
    return cfg->nservers > 0;
}

const struct tb_config_server *tb_config_self(const struct tb_config *cfg)
{
    size_t i;

    for (i = 0; i < cfg->nservers; i++)
        if (cfg->servers[i].id == cfg->server_id)
            return &cfg->servers[i];
    return NULL;
}

int tb_config_quorum_address(const struct tb_config_server *s, char *buf,
                             size_t n)
{
    int v6 = strchr(s->host, ':') != NULL;
    int len = snprintf(buf, n, "%s%s%s:%d", v6 ? "[" : "", s->host,
                       v6 ? "]" : "", s->quorum_port);

    return len >= 0 && (size_t)len < n ? 0 : TB_EINVAL;
}

int tb_config_same_quorum(const struct tb_config_server *a,
                          const struct tb_config_server *b)
{
    return a->quorum_port == b->quorum_port && same_host(a->host, b->host);
}

/* Whether host is a loopback or the wildcard address: each machine has
 * its own, so two servers' client addresses may both name it (ZooKeeper's
 * checkAddressDuplicate does not compare them). */
static int own_machine(const char *host)
{
    static const unsigned char zero[15] = {0};
    unsigned char a[16];

    if (strcmp(host, "localhost") == 0)
        return 1;
    switch (ip_bytes(host, a)) {
    case AF_INET:
        return a[12] == 127 || memcmp(a + 12, zero, 4) == 0;
    case AF_INET6: /* :: or ::1 */
        return memcmp(a, zero, 15) == 0 && a[15] <= 1;
    default:
        return 0; /* a name */
    }
}

/* s's address of kind k, put as a quorum address (tb_config_same_quorum
 * compares those): 0 when there is none to compare. */
static int address(const struct tb_config_server *s, int k,
                   struct tb_config_server *a)
{
    memset(a, 0, sizeof *a);
    a->host = k < TB_ADDR_CLIENT ? s->host : s->client_addr;
    a->quorum_port = k == TB_ADDR_QUORUM     ? s->quorum_port
                     : k == TB_ADDR_ELECTION ? s->election_port
                                             : s->client_port;
    return a->host != NULL && (k < TB_ADDR_CLIENT || !own_machine(a->host));
}

const char *const tb_config_address_kind[3] = {"quorum", "election", "client"};

int tb_config_shared_address(const struct tb_config_server *a,
                             const struct tb_config_server *b, int *ak, int *bk,
                             char *at, size_t atlen)
{
    struct tb_config_server x, y;
    int k, l;

    for (k = 0; k < 3; k++)
        for (l = a == b ? k + 1 : 0; l < 3; l++) {
            if (!address(a, k, &x) || !address(b, l, &y) ||
                !tb_config_same_quorum(&x, &y))
                continue;
            *ak = k;
            *bk = l;
            (void)tb_config_quorum_address(&x, at, atlen);
            return 1;
        }
    return 0;
}

/* ---- their text ---------------------------------------------------------- */

/* A host as ZooKeeper's QuorumServer.toString() prints it: an IP
 * address as Java's getHostAddress() (IPv6 in brackets, all eight groups,
 * no "::"; an IPv4-mapped one as IPv4), a name as written. */
static void render_host(struct tb_wbuf *out, const char *host)
{
    unsigned char a[16];
    int i;

    if (inet_pton(AF_INET6, host, a) != 1) {
        tb_wbuf_printf(out, "%s", host);
        return;
    }
    if (memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0) {
        tb_wbuf_printf(out, "%d.%d.%d.%d", a[12], a[13], a[14], a[15]);
        return;
    }
    for (i = 0; i < 16; i += 2)
        tb_wbuf_printf(out, "%s%x%s", i == 0 ? "[" : ":",
                       (unsigned)(a[i] << 8 | a[i + 1]), i == 14 ? "]" : "");
}

/* ZooKeeper's QuorumPeer lines after serverId, then its membership, as
 * the configuration applied gives them.  The version is in hex (0 for the
 * server.N lines: ZooKeeper's, with reconfigEnabled=false as by default,
 * stays 0 too); the output ends without a newline.  A server a reconfig
 * removed keeps its own line's ports. */
void config__render_ensemble(const struct tb_config *cfg,
                             const struct tb_config_members *m,
                             struct tb_wbuf *out)
{
    struct tb_config_members file = {cfg->servers, cfg->nservers, 0};
    const struct tb_config_server *self = tb_config_self(cfg);
    size_t i;

    if (self == NULL)
        return;
    if (m == NULL)
        m = &file;
    for (i = 0; i < m->n; i++)
        if (m->v[i].id == cfg->server_id)
            self = &m->v[i];
    tb_wbuf_printf(out, "electionPort=%d\nquorumPort=%d\npeerType=%d\n",
                   self->election_port, self->quorum_port,
                   self->role == TB_ROLE_OBSERVER);
    tb_wbuf_printf(out, "membership: \n");
    tb_config_render_servers(m->v, m->n, out);
    tb_wbuf_printf(out, "version=%llx", (unsigned long long)m->version);
}

void tb_config_render_servers(const struct tb_config_server *servers,
                              size_t n, struct tb_wbuf *out)
{
    const struct tb_config_server *s;
    size_t i;

    for (i = 0; i < n; i++) {
        s = &servers[i];
        tb_wbuf_printf(out, "server.%d=", s->id);
        render_host(out, s->host);
        tb_wbuf_printf(out, ":%d:%d:%s", s->quorum_port, s->election_port,
                       s->role == TB_ROLE_OBSERVER ? "observer"
                                                   : "participant");
        if (s->client_addr != NULL) {
            tb_wbuf_printf(out, ";");
            render_host(out, s->client_addr);
            tb_wbuf_printf(out, ":%d", s->client_port);
        }
        tb_wbuf_printf(out, "\n");
    }
}

void tb_config_render_membership(const struct tb_config *cfg,
                                 struct tb_wbuf *out)
{
    tb_config_render_servers(cfg->servers, cfg->nservers, out);
    tb_wbuf_printf(out, "version=0");
}
