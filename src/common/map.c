/* See map.h.  Load factor is kept at or below 1/2. */
#include <stdlib.h>

#include "common/map.h"

static size_t slot(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

void tb_map_init(struct tb_map *m)
{
    memset(m, 0, sizeof *m);
}

void tb_map_free(struct tb_map *m)
{
    free(m->keys);
    free(m->vals);
    tb_map_init(m);
}

void *tb_map_get(const struct tb_map *m, uint64_t key)
{
    size_t i;

    if (m->cap == 0 || key == 0)
        return NULL;
    for (i = slot(key, m->cap); m->keys[i] != 0; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == key)
            return m->vals[i];
    return NULL;
}

static int grow(struct tb_map *m)
{
    struct tb_map n;
    size_t i;

    n.cap = m->cap ? m->cap * 2 : 16;
    n.count = 0;
    n.keys = calloc(n.cap, sizeof *n.keys);
    n.vals = calloc(n.cap, sizeof *n.vals);
    if (n.keys == NULL || n.vals == NULL) {
        free(n.keys);
        free(n.vals);
        return TB_ENOMEM;
    }
    for (i = 0; i < m->cap; i++)
        if (m->keys[i] != 0)
            tb_map_put(&n, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    *m = n;
    return 0;
}

int tb_map_put(struct tb_map *m, uint64_t key, void *val)
{
    size_t i;

    if (key == 0)
        return TB_EINVAL;
    if (m->cap > 0)
        for (i = slot(key, m->cap); m->keys[i] != 0; i = (i + 1) & (m->cap - 1))
            if (m->keys[i] == key) {
                m->vals[i] = val;
                return 0;
            }
    /* A new key: room for it first.  A replacement never allocates, so it
     * never fails (callers moving a value in place rely on it). */
    if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
        return TB_ENOMEM;
    for (i = slot(key, m->cap); m->keys[i] != 0; i = (i + 1) & (m->cap - 1))
        ;
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return 0;
}

void *tb_map_del(struct tb_map *m, uint64_t key)
{
    size_t i, j, home;
    void *val;

    if (m->cap == 0 || key == 0)
        return NULL;
    for (i = slot(key, m->cap); m->keys[i] != key; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == 0)
            return NULL;
    val = m->vals[i];
    /* Shift later members of the probe run back into the hole. */
    for (j = (i + 1) & (m->cap - 1); m->keys[j] != 0;
         j = (j + 1) & (m->cap - 1)) {
        home = slot(m->keys[j], m->cap);
        if (((j - home) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->vals[i] = NULL;
    m->count--;
    return val;
}

int tb_map_next(const struct tb_map *m, size_t *i, uint64_t *key, void **val)
{
    for (; *i < m->cap; (*i)++)
        if (m->keys[*i] != 0) {
            *key = m->keys[*i];
            *val = m->vals[*i];
            (*i)++;
            return 1;
        }
    return 0;
}
