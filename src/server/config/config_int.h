/* The configuration's internals, shared by its three files: config.c (the
 * key table and the general machinery), config_args.c (zoo.cfg files and
 * the command line) and config_ensemble.c (server.N lines, myid, the
 * checks of the members together and their text).
 *
 * The helpers are static inline: a few lines each, without state, used
 * by more than one of the files. */
#ifndef TB_CONFIG_INT_H
#define TB_CONFIG_INT_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/config.h"

static inline void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* "zoo.cfg:7: tickTime" or "--tickTime": the start of every message. */
static inline void where(char *buf, size_t cap,
                         const struct tb_config_origin *o, const char *key)
{
    if (o != NULL && o->file != NULL)
        snprintf(buf, cap, "%s:%d: %s", o->file, o->line, key);
    else if (o != NULL && o->line < 0)
        snprintf(buf, cap, "default %s", key);
    else
        snprintf(buf, cap, "--%s", key);
}

static inline int parse_i64(const char *s, int64_t *v)
{
    char *end;
    long long x;

    if (*s == '\0')
        return TB_EINVAL;
    errno = 0;
    x = strtoll(s, &end, 10);
    if (*end != '\0' || end == s)
        return TB_EINVAL;
    if (errno == ERANGE)
        return TB_ETOOBIG;
    *v = (int64_t)x;
    return 0;
}

static inline int replace_str(char **slot, const char *value)
{
    char *copy = NULL;

    if (value != NULL && (copy = strdup(value)) == NULL)
        return TB_ENOMEM;
    free(*slot);
    *slot = copy;
    return 0;
}

/* A zoo.cfg line's key or value, or a myid line, without the blanks
 * around it (in place). */
static inline char *trim(char *s)
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

/* ---- config_ensemble.c, called by config.c ---- */

/* tb_config_set() of a "server.N" key; `at` starts every message. */
int config__set_server(struct tb_config *cfg, const char *key,
                       const char *value, const struct tb_config_origin *o,
                       const char *at, char *err, size_t errlen);
/* tb_config_finish()'s checks of the server.N lines and this server's id
 * (see there). */
int config__finish_ensemble(struct tb_config *cfg, char *err, size_t errlen);
/* The end of the `conf` text in an ensemble: nothing for a standalone
 * server (see tb_config_render_conf()). */
void config__render_ensemble(const struct tb_config *cfg,
                             const struct tb_config_members *m,
                             struct tb_wbuf *out);

/* config_zk.c: why tumblerd does not act on ZooKeeper's key `name` (its
 * "zookeeper." prefix stripped), *refused set if a start with it set to
 * `value` must stop; NULL for a key that is not one of ZooKeeper's
 * documented ones. */
const char *config__zk_key(const char *name, const char *value, int *refused);

#endif
