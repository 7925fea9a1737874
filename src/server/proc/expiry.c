/* Session deadlines and ticks (expiry.h): the arithmetic only, on time
 * passed in, so that it is tested exactly on virtual time. */
#include <stdlib.h>

#include "server/proc/expiry.h"

struct sess *expiry_open(struct tb_map *m, int64_t id, int32_t timeout_ms,
                         uint64_t now)
{
    struct sess *se = tb_map_get(m, (uint64_t)id);

    if (se == NULL) {
        se = calloc(1, sizeof *se);
        if (se == NULL || tb_map_put(m, (uint64_t)id, se) != 0) {
            free(se);
            return NULL;
        }
    }
    se->id = id;
    se->timeout_ms = timeout_ms;
    se->deadline_ms = now + (uint64_t)timeout_ms;
    se->closing = 0;
    return se;
}

void expiry_touch(struct tb_map *m, int64_t id, uint64_t now)
{
    struct sess *se = tb_map_get(m, (uint64_t)id);

    if (se != NULL)
        se->deadline_ms = now + (uint64_t)se->timeout_ms;
}

void expiry_attach(struct tb_map *m, int64_t id, int32_t timeout_ms,
                   uint64_t now)
{
    struct sess *se = tb_map_get(m, (uint64_t)id);

    if (se != NULL) {
        se->timeout_ms = timeout_ms;
        se->deadline_ms = now + (uint64_t)timeout_ms;
    }
}

int expiry_closing(struct tb_map *m, int64_t id)
{
    struct sess *se = tb_map_get(m, (uint64_t)id);

    if (se == NULL || se->closing)
        return 0;
    se->closing = 1;
    return 1;
}

void expiry_forget(struct tb_map *m, int64_t id)
{
    free(tb_map_del(m, (uint64_t)id));
}

void expiry_close_failed(struct tb_map *m, int64_t id)
{
    struct sess *se = tb_map_get(m, (uint64_t)id);

    if (se != NULL)
        se->closing = 0;
}

void expiry_forget_all(struct tb_map *m)
{
    size_t i = 0;
    uint64_t key;
    void *v;

    while (tb_map_next(m, &i, &key, &v))
        free(v);
    tb_map_free(m);
    tb_map_init(m);
}

uint64_t expiry_lost(uint64_t period_ms, uint64_t *last_ms, uint64_t now)
{
    uint64_t lost = 0;

    if (*last_ms != 0 && now - *last_ms > 2 * period_ms)
        lost = now - *last_ms - period_ms;
    *last_ms = now;
    return lost;
}

void expiry_tick(struct tb_map *m, uint64_t now, uint64_t lost,
                 expiry_close_fn close, void *arg)
{
    uint64_t key;
    struct sess *se;
    void *v;
    size_t i;

    for (i = 0; tb_map_next(m, &i, &key, &v);) {
        se = v;
        se->deadline_ms += lost;
        if (se->closing || se->deadline_ms > now)
            continue;
        se->closing = 1; /* first: a failure told at once clears it */
        if (close(arg, se) != 0)
            se->closing = 0;
    }
}
