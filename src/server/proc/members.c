/* A set of servers: members.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/proc/members.h"
#include "server/replog/replog.h"

void members_free(struct members *m)
{
    while (m->n > 0)
        tb_config_server_free(&m->v[--m->n]);
    free(m->v);
    m->v = NULL;
}

struct tb_config_server *members_find(const struct members *m, int id)
{
    size_t i;

    for (i = 0; i < m->n; i++)
        if (m->v[i].id == id)
            return &m->v[i];
    return NULL;
}

/* Adds or replaces server.id=spec: 0, or TB_EINVAL with why in err. */
int members_put(struct members *m, int id, const char *spec, char *err,
                size_t errlen)
{
    struct tb_config_server s, *old, *grown;
    char at[32];
    size_t i;
    int rv;

    snprintf(at, sizeof at, "server.%d", id);
    if ((rv = tb_config_server_parse(&s, id, spec, at, err, errlen)) != 0)
        return rv;
    if ((old = members_find(m, id)) != NULL) {
        tb_config_server_free(old);
        *old = s;
        return 0;
    }
    if (m->n == REPLOG_MAX_MEMBERS ||
        (grown = realloc(m->v, (m->n + 1) * sizeof *grown)) == NULL) {
        tb_config_server_free(&s);
        snprintf(err, errlen, "too many servers");
        return TB_EINVAL;
    }
    m->v = grown;
    for (i = m->n++; i > 0 && m->v[i - 1].id > id; i--)
        m->v[i] = m->v[i - 1];
    m->v[i] = s;
    return 0;
}

void members_del(struct members *m, int id)
{
    struct tb_config_server *s = members_find(m, id);

    if (s == NULL)
        return;
    tb_config_server_free(s);
    m->n--;
    memmove(s, s + 1, (size_t)(m->v + m->n - s) * sizeof *s);
}

/* A "server.N" key: N, or 0. */
static int server_key(const char *k)
{
    char *end;
    long id;

    if (strncmp(k, "server.", 7) != 0)
        return 0;
    id = strtol(k + 7, &end, 10);
    return *end == '\0' && id >= 1 && id <= 254 && k[7] != '+' ? (int)id : 0;
}

char *members_trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    e = s + strlen(s);
    while (e > s &&
           (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
        *--e = '\0';
    return s;
}

/* "server.N=spec" items split at any of `seps`; "version=..." items are
 * skipped when skip_version.  Each must have a client part when
 * need_client, as ZooKeeper's joiners must. */
int parse_lines(struct members *m, struct tb_str text, const char *seps,
                int skip_version, int need_client, char *err, size_t errlen)
{
    char *copy = strndup(text.ptr != NULL ? text.ptr : "", text.len), *save,
         *item, *eq, *k;
    int rv = 0, id;

    if (copy == NULL)
        return TB_ENOMEM;
    for (item = strtok_r(copy, seps, &save); item != NULL && rv == 0;
         item = strtok_r(NULL, seps, &save)) {
        item = members_trim(item);
        if (*item == '\0')
            continue;
        eq = strchr(item, '=');
        if (eq != NULL)
            *eq = '\0';
        k = members_trim(item);
        if (eq != NULL && skip_version && strcmp(k, "version") == 0)
            continue;
        if (eq == NULL || (id = server_key(k)) == 0) {
            snprintf(err, errlen, "\"%s\" is not server.N=spec", k);
            rv = TB_EINVAL;
            break;
        }
        rv = members_put(m, id, members_trim(eq + 1), err, errlen);
        if (rv == 0 && need_client && members_find(m, id)->client_port == 0) {
            snprintf(err, errlen,
                     "server.%d: a joiner needs its client port "
                     "(host:quorumPort:electionPort;clientPort)",
                     id);
            rv = TB_EINVAL;
        }
    }
    free(copy);
    return rv;
}

int voter(const struct tb_config_server *s)
{
    return s->role == TB_ROLE_PARTICIPANT;
}

/* ZooKeeper's checkAddressDuplicate: none of a joiner's quorum, election
 * and client addresses (nor those of a server whose line changes) is
 * another server's (tb_config_shared_address). */
int duplicate_address(const struct members *next, const struct members *cur,
                      char *err, size_t errlen)
{
    const struct tb_config_server *a, *b, *old;
    char at[TB_CONFIG_ADDR_MAX];
    size_t i, j;
    int k, l;

    for (i = 0; i < next->n; i++) {
        a = &next->v[i];
        old = members_find(cur, a->id);
        if (old != NULL && strcmp(old->spec, a->spec) == 0)
            continue;
        for (j = 0; j < next->n; j++) {
            b = &next->v[j];
            if (j == i ||
                !tb_config_shared_address(a, b, &k, &l, at, sizeof at))
                continue;
            snprintf(err, errlen,
                     "server.%d's %s address %s is server.%d's %s address too",
                     a->id, tb_config_address_kind[k], at, b->id,
                     tb_config_address_kind[l]);
            return TB_EINVAL;
        }
    }
    return 0;
}
