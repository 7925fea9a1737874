/* tbfail verify: on each server, in a new session after a sync, every
 * acknowledged path of the trials is among the root's children; and how
 * many copies of the stopped leader's write there are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbfail.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tf_run_verify(const char *root, const char *acked_file)
{
    int i, bad = 0;

    for (i = 0; i < tf_nsrv; i++) {
        struct tf_sess s;
        struct tb_rd rd;
        struct tb_children_resp cr;
        char **kids = NULL, line[600];
        size_t nk = 0, cap = 0;
        long checked = 0, missing = 0, stale = 0;
        FILE *f;
        int rc;

        tf_sess_init(&s, 10000);
        if ((rc = tf_sess_open_retry(&s, &tf_srvs[i],
                                     bn_now_ns() + 10000000000ull)) != 0) {
            printf("RESULT verify server=%d error=%s\n", i + 1, tb_errname(rc));
            bad = 1;
            continue;
        }
        (void)tf_path_op(&s, TB_OP_SYNC, root, bn_now_ns() + 10000000000ull,
                         &rd);
        rc = tf_path_op(&s, TB_OP_GETCHILDREN, root,
                        bn_now_ns() + 10000000000ull, &rd);
        if (rc == 0 && tb_children_resp_decode(&rd, &cr) == 0 &&
            cr.children.n > 0) {
            struct tb_rd it = tb_vec_reader(cr.children);
            struct tb_str c;
            cap = (size_t)cr.children.n;
            kids = calloc(cap, sizeof(*kids));
            while (kids != NULL && nk < cap && tb_vec_next_str(&it, &c) > 0) {
                kids[nk] = strndup(c.ptr, c.len);
                if (strncmp(kids[nk], "stale-", 6) == 0)
                    stale++;
                nk++;
            }
            qsort(kids, nk, sizeof(*kids), cmp_str);
        } else if (rc != 0 && rc != TB_ENONODE) {
            printf("RESULT verify server=%d error=%s\n", i + 1, tb_errname(rc));
            bad = 1;
            tf_sess_close(&s, bn_now_ns() + 3000000000ull);
            continue;
        }
        if ((f = fopen(acked_file, "r")) != NULL) {
            while (fgets(line, sizeof(line), f) != NULL) {
                char *base = strrchr(line, '/'), *key;
                line[strcspn(line, "\n")] = '\0';
                if (base == NULL)
                    continue;
                key = base + 1;
                checked++;
                if (kids == NULL ||
                    bsearch(&key, kids, nk, sizeof(*kids), cmp_str) == NULL) {
                    missing++;
                    if (missing <= 5)
                        fprintf(stderr, "tbfail: server %d: %s missing\n",
                                i + 1, line);
                }
            }
            fclose(f);
        }
        printf("RESULT verify server=%d checked=%ld missing=%ld children=%zu"
               " stale_copies=%ld\n",
               i + 1, checked, missing, nk, stale);
        if (missing)
            bad = 1;
        while (nk > 0)
            free(kids[--nk]);
        free(kids);
        tf_sess_close(&s, bn_now_ns() + 3000000000ull);
    }
    return bad;
}
