/* tumblerd --recover-ensemble: an ensemble that lost a majority of its
 * members for good is rebuilt from one survivor's log (replog_recover.h).
 * The other survivors' data directories named with --survivor are read
 * first: a log that goes further than this one may hold writes that were
 * acknowledged and that this one lacks, and the recovery is then refused.
 * docs/operations.md has the steps. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "server/proc/clock.h"
#include "server/proc/proc.h"
#include "server/recovery.h"
#include "server/replog/replog_recover.h"

/* Zxids go on from a new epoch, the one after log index `seen`'s (fsm.c's
 * new_epoch; zxid -seen), logged after raft's configuration: the members
 * lost may have acknowledged writes this log lacks, and their zxids,
 * fencing tokens among them, must not be given again.  Or from `zxid`,
 * when ahead of that (the epoch after one the directory records).  No
 * client is its origin (0). */
static int epoch_txn(int64_t zxid, struct tb_wbuf *out)
{
    struct tb_wbuf body;
    struct tb_txn t = {.type = TB_OP_NEWEPOCH, .time = tbd_wall_ms()};

    tb_wbuf_init(&body);
    tb_new_epoch_txn_encode(&body, &(struct tb_new_epoch_txn){zxid});
    t.body = (struct tb_str){(const char *)body.base, body.len};
    if (!body.oom)
        tb_txn_encode(out, &t);
    tb_wbuf_free(&body);
    return body.oom || out->oom ? TB_ENOMEM : 0;
}

/* The new members as a reconfig's outcome (fsm_reconfig.c) makes them
 * /zookeeper/config, logged after the new epoch: a reconfig made before
 * the loss left its own members there, which would otherwise outrank
 * zoo.cfg's new lines, and the new leader would remove the members raft
 * has and they lack. */
static int members_txn(const struct tb_config *cfg, struct tb_wbuf *out)
{
    struct tb_wbuf text, body;
    struct tb_txn t;
    int oom;

    tb_wbuf_init(&text);
    tb_wbuf_init(&body);
    tb_config_render_servers(cfg->servers, cfg->nservers, &text);
    oom = text.oom ||
          reconfig_outcome_txn(
              &t, &body, 0,
              (struct tb_str){(const char *)text.base, text.len}) != 0;
    if (!oom) {
        t.time = tbd_wall_ms();
        tb_txn_encode(out, &t);
        oom = out->oom;
    }
    tb_wbuf_free(&text);
    tb_wbuf_free(&body);
    return oom ? TB_ENOMEM : 0;
}

struct entries {
    const struct tb_config *cfg;
    struct tb_wbuf txn[3];
};

/* replog_recover's entries: the new epoch (and the one after that the
 * directory records: a log cut before the entry that began it has its
 * zxids behind), then the members if given. */
static int make_entries(void *arg, uint64_t seen, uint64_t epoch,
                        struct tb_str *out, unsigned max, unsigned *n)
{
    struct entries *e = arg;
    unsigned i;
    int rv;

    *n = 1 + (epoch > 0) + (e->cfg->nservers > 0);
    if (max < *n)
        return TB_EINVAL;
    rv = epoch_txn(-(int64_t)seen, &e->txn[0]);
    if (rv == 0 && epoch > 0)
        rv = epoch_txn((int64_t)((epoch + 1) << 32), &e->txn[1]);
    if (rv == 0 && e->cfg->nservers > 0)
        rv = members_txn(e->cfg, &e->txn[*n - 1]);
    for (i = 0; i < *n; i++)
        out[i] = (struct tb_str){(const char *)e->txn[i].base, e->txn[i].len};
    return rv;
}

static void print_members(const struct tb_config *cfg)
{
    size_t i;

    if (cfg->nservers == 0) {
        printf("server %d alone", cfg->server_id);
        return;
    }
    for (i = 0; i < cfg->nservers; i++)
        printf("%s%d%s", i == 0 ? "servers " : ", ", cfg->servers[i].id,
               cfg->servers[i].role == TB_ROLE_PARTICIPANT ? ""
                                                           : " (observer)");
}

int recover_ensemble(uv_loop_t *loop, const struct tb_config *cfg,
                     const struct replog_config *rc)
{
    struct replog_position *pos = NULL, at;
    struct entries e = {.cfg = cfg};
    size_t i, voters = 0;
    int rv;

    if (cfg->nsurvivors > 0 &&
        (pos = calloc(cfg->nsurvivors, sizeof *pos)) == NULL) {
        fprintf(stderr, "tumblerd: out of memory\n");
        return 1;
    }
    for (i = 0; i < cfg->nsurvivors; i++) {
        rv = replog_read_position(loop, cfg->survivors[i], rc->log,
                                  rc->log_data, &pos[i]);
        if (rv != 0) {
            fprintf(stderr,
                    "tumblerd: recover: refused, nothing changed: the log in "
                    "%s cannot be read (above), so what it holds cannot be "
                    "compared; if it is damaged, it may still go furthest: "
                    "recover there (with --repair-log) and name this one "
                    "with --survivor; leave it out only if it is lost\n",
                    cfg->survivors[i]);
            free(pos);
            return 1;
        }
        printf("recover: %s: the log of %s%d ends at entry %" PRIu64
               " of term %" PRIu64 "\n",
               cfg->survivors[i], pos[i].server_id ? "server " : "no server ",
               pos[i].server_id, pos[i].last_index, pos[i].last_term);
    }
    for (i = 0; i < 3; i++)
        tb_wbuf_init(&e.txn[i]);
    rv = replog_recover(loop, rc, pos, (const char *const *)cfg->survivors,
                        (unsigned)cfg->nsurvivors, make_entries, &e, &at);
    free(pos);
    for (i = 0; i < 3; i++)
        tb_wbuf_free(&e.txn[i]);
    if (rv != 0) {
        fprintf(stderr, "tumblerd: recover: %s not recovered (above)\n",
                rc->dir);
        return 1;
    }
    printf("recover: %s: the log of server %d ends at entry %" PRIu64
           " of term %" PRIu64 "; entry %" PRIu64 " makes its members ",
           rc->dir, rc->server_id, at.last_index, at.last_term,
           at.last_index + 1);
    print_members(cfg);
    printf(", in term %" PRIu64 "; the next begins a new zxid epoch%s\n",
           at.term,
           cfg->nservers > 0
               ? "; the next records the members in /zookeeper/config"
               : "");
    for (i = 0; i < cfg->nservers; i++)
        voters += cfg->servers[i].role == TB_ROLE_PARTICIPANT;
    if (voters > 1)
        printf("recover: next: copy %s whole but its myid to the dataDir of "
               "%zu other voter%s (with this one, a majority; other survivors "
               "first) before any of them starts, and start them; the other "
               "members start with an empty dataDir and joinEnsemble=true\n",
               rc->dir, voters / 2, voters / 2 > 1 ? "s" : "");
    return 0;
}
