/* Reading a zoo.cfg and the command line into struct tb_config, and the
 * two texts of an ensemble: a server.N line's value and the myid file.
 *
 * The file format is the subset of Java properties that zoo.cfg files use:
 * one key=value per line, '#' or '!' starting a comment line, whitespace
 * around key and value dropped.  As in ZooKeeper, a '#' after a value is
 * part of the value (and then usually fails its check with a clear
 * message), and the last of repeated keys wins (server.N excepted: see
 * config.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/config/config.h"
#include "server/config/log.h"

static char *trim(char *s)
{
    char *end;

    while (*s == ' ' || *s == '\t')
        s++;
    end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' ||
                       end[-1] == '\r' || end[-1] == '\n'))
        *--end = '\0';
    return s;
}

/* One line of the file: 0 (set or skipped), or a negative code with err. */
static int load_line(struct tb_config *cfg, char *line,
                     const struct tb_config_origin *at, char *err,
                     size_t errlen)
{
    char *key, *eq, *value;
    int rv;

    key = trim(line);
    if (*key == '\0' || *key == '#' || *key == '!')
        return 0;
    eq = strchr(key, '=');
    if (eq == NULL || eq == key) {
        snprintf(err, errlen, "%s:%d: expected key=value, got \"%s\"",
                 at->file, at->line, key);
        return TB_EINVAL;
    }
    *eq = '\0';
    key = trim(key);
    value = trim(eq + 1);
    rv = tb_config_set(cfg, key, value, at, err, errlen);
    return rv < 0 ? rv : 0;
}

int tb_config_load_file(struct tb_config *cfg, const char *path, char *err,
                        size_t errlen)
{
    struct tb_config_origin at = {path, 0};
    char *line = NULL;
    size_t cap = 0;
    FILE *f;
    int rv = 0;

    f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return TB_EIO;
    }
    while (rv == 0 && getline(&line, &cap, f) >= 0) {
        at.line++;
        rv = load_line(cfg, line, &at, err, errlen);
    }
    if (rv == 0 && ferror(f)) {
        /* fopen takes a directory; its first read fails with EISDIR. */
        if (errno == EISDIR)
            snprintf(err, errlen, "%s is a directory, not a zoo.cfg file",
                     path);
        else
            snprintf(err, errlen, "%s:%d: cannot read: %s", path, at.line,
                     strerror(errno));
        rv = TB_EIO;
    }
    free(line);
    fclose(f);
    if (rv == 0) {
        free(cfg->config_file);
        if ((cfg->config_file = strdup(path)) == NULL) {
            snprintf(err, errlen, "out of memory");
            rv = TB_ENOMEM;
        }
    }
    return rv;
}

static int is_opt(const char *a, const char *name)
{
    return strcmp(a, name) == 0;
}

static void print_usage(void)
{
    struct tb_wbuf b;

    tb_wbuf_init(&b);
    tb_config_usage(&b);
    if (b.len > 0)
        fwrite(b.base, 1, b.len, stdout);
    tb_wbuf_free(&b);
}

/* First pass: --help/--version, the file's name, and a check that every
 * other argument is --key=value, so nothing is applied from a command line
 * that is wrong further on. */
static int scan_args(struct tb_config *cfg, int argc, char **argv,
                     const char **file, char *err, size_t errlen)
{
    const char *a, *name;
    int i;

    for (i = 1; i < argc; i++) {
        a = argv[i];
        name = NULL;
        if (is_opt(a, "--help") || is_opt(a, "-h")) {
            print_usage();
            return TB_CONFIG_EXIT;
        }
        if (is_opt(a, "--version") || is_opt(a, "-V")) {
            printf("tumblerd %s (ZooKeeper 3.8 client protocol)\n",
                   tb_config_version());
            return TB_CONFIG_EXIT;
        }
        if (is_opt(a, "--repair-log")) {
            cfg->repair_log = 1;
            continue;
        }
        if (is_opt(a, "-c") || is_opt(a, "--config")) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "%s: expected a file name", a);
                return TB_EINVAL;
            }
            name = argv[++i];
        } else if (strncmp(a, "--config=", 9) == 0) {
            name = a + 9;
        } else if (a[0] != '-') {
            name = a;
        } else if (strncmp(a, "--", 2) != 0 || strchr(a, '=') == NULL) {
            snprintf(err, errlen, "%s: unknown option; expected --key=value "
                     "(see --help)", a);
            return TB_EINVAL;
        }
        if (name != NULL && *file != NULL) {
            snprintf(err, errlen, "two configuration files: \"%s\" and \"%s\"",
                     *file, name);
            return TB_EINVAL;
        }
        if (name != NULL)
            *file = name;
    }
    return TB_CONFIG_RUN;
}

/* Second pass: every --key=value, in order. */
static int apply_overrides(struct tb_config *cfg, int argc, char **argv,
                           char *err, size_t errlen)
{
    char key[256];
    const char *a, *eq;
    size_t n;
    int i, rv;

    for (i = 1; i < argc; i++) {
        a = argv[i];
        if (is_opt(a, "-c") || is_opt(a, "--config")) {
            i++;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || strncmp(a, "--config=", 9) == 0 ||
            is_opt(a, "--repair-log"))
            continue;
        eq = strchr(a, '=');
        n = (size_t)(eq - (a + 2));
        if (n == 0 || n >= sizeof key) {
            snprintf(err, errlen, "%s: expected --key=value", a);
            return TB_EINVAL;
        }
        memcpy(key, a + 2, n);
        key[n] = '\0';
        if (!tb_config_has_key(key)) {
            snprintf(err, errlen, "--%s: unknown key (see --help)", key);
            return TB_EINVAL;
        }
        rv = tb_config_set(cfg, key, eq + 1, NULL, err, errlen);
        if (rv < 0)
            return rv;
    }
    return 0;
}

int tb_config_parse_args(struct tb_config *cfg, int argc, char **argv,
                         char *err, size_t errlen)
{
    const char *file = NULL;
    int rv;

    rv = scan_args(cfg, argc, argv, &file, err, errlen);
    if (rv != TB_CONFIG_RUN)
        return rv;
    if (file != NULL && (rv = tb_config_load_file(cfg, file, err, errlen)))
        return rv;
    if ((rv = apply_overrides(cfg, argc, argv, err, errlen)) != 0)
        return rv;
    return tb_config_finish(cfg, err, errlen);
}

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
    v = n > 6 ? 100000 : strtol(s, NULL, 10);
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
    x = n > 4 ? 1000 : strtol(v, NULL, 10);
    if (x < 1 || x > 254) {
        snprintf(err, errlen, "%s: server id %s is out of range (1..254)", path,
                 v);
        return TB_EINVAL;
    }
    *id = (int)x;
    return 0;
}
