/* An open-addressing hash map from non-zero 64-bit keys to pointers, for
 * the server's id lookups (connections, sessions).  Linear probing with
 * backward-shift deletion, so there are no tombstones to age. */
#ifndef TB_MAP_H
#define TB_MAP_H

#include "common/common.h"

struct tb_map {
    uint64_t *keys; /* 0 marks an empty slot */
    void **vals;
    size_t cap;     /* a power of two, or 0 */
    size_t count;
};

void tb_map_init(struct tb_map *m);
void tb_map_free(struct tb_map *m);
void *tb_map_get(const struct tb_map *m, uint64_t key);
/* Inserts or replaces; returns 0 or TB_ENOMEM (only an insert allocates). */
int tb_map_put(struct tb_map *m, uint64_t key, void *val);
/* Returns the removed value, or NULL. */
void *tb_map_del(struct tb_map *m, uint64_t key);

/* Iteration: for (i = 0; tb_map_next(m, &i, &k, &v);) ... ; the map must
 * not change during the walk. */
int tb_map_next(const struct tb_map *m, size_t *i, uint64_t *key, void **val);

#endif
