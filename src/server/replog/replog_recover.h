/* Recovery of an ensemble that lost its quorum for good (tumblerd
 * --recover-ensemble), offline, on stopped servers: libraft's raft_recover
 * makes the configured members the log's members, with the log's last
 * entry as it is.  Run on the survivor whose log goes furthest; enough
 * other voters for a majority then start from copies of its data
 * directory, the other members empty, joining (docs/operations.md).
 *
 * What it writes, after the log's last entry (index L, term t; raft's term
 * T, T >= t):
 *   - raft's term T + 1, with no vote (metadata1/metadata2);
 *   - a configuration entry at L + 1, of term T + 1, through the log;
 *   - when given, the state machine's entry at L + 2, of term T + 1: the
 *     server's own record of the new members (/zookeeper/config), which
 *     would otherwise still name the members a reconfig last made, and
 *     the new leader would remove the new members again;
 *   - wal-meta's server id 0: the log is then any member's to take, once
 *     (wal_io.c), so that copies of the directory start as their own.
 * Term T + 1 is one no leader ever had: the entry cannot be mistaken for
 * another at L + 1 in a log it was never in. */
#ifndef TB_SERVER_REPLOG_RECOVER_H
#define TB_SERVER_REPLOG_RECOVER_H

#include <stdint.h>

#include "server/replog/replog.h"

/* Where a log ends. */
struct replog_position {
    int server_id;       /* whose log it is (wal-meta); 0: a recovered one
                            nobody has started yet */
    uint64_t last_index; /* of its last entry (or its snapshot's) */
    uint64_t last_term;  /* ... that entry's term */
    uint64_t term;       /* raft's current term */
};

/* Reads the log in `dir` as a start would, checking it whole, and changes
 * nothing in it; the directory must not be in use (LOCK).  0, or a
 * negative TB_E* code after logging why through `log` (as
 * replog_config.log). */
int replog_read_position(uv_loop_t *loop, const char *dir,
                         void (*log)(void *data, int level, const char *msg),
                         void *log_data, struct replog_position *out);

/* The state machine's entries a recovery appends after the
 * configuration's, each as replog_propose's payload, made once the log's
 * end is known: `seen` is the highest log index whose entry a client may
 * have seen (the last one, or beyond it the highest a repair cut), `epoch`
 * the highest zxid epoch the directory records (replog_begin_epoch; 0:
 * none).  0 with out[0..*n) (*n <= max, owned by the caller until the
 * recovery returns), or a negative TB_E* code. */
typedef int (*replog_recover_entries)(void *arg, uint64_t seen, uint64_t epoch,
                                      struct tb_str *out, unsigned max,
                                      unsigned *n);

/* Recovers the log in cfg->dir (cfg as for replog_open) into cfg's members
 * (cfg->peers, or this server alone), this server among the voters, then
 * appends what `entries` makes.  It refuses, logging why and changing
 * nothing, when the log is damaged (unless cfg->repair_log: it is cut as
 * a repair cuts it, first, refused or not) or empty, the directory in
 * use, this server no voter, or one of `others` (other survivors' logs,
 * replog_read_position) goes further than this one: that one may hold
 * writes acknowledged that this one lacks.  0 with *out where the log
 * ended before (its term: the term raft is in now, the entries'), or a
 * negative TB_E* code (TB_EINVAL for a refusal). */
int replog_recover(uv_loop_t *loop, const struct replog_config *cfg,
                   const struct replog_position *others,
                   const char *const *other_dirs, unsigned n_others,
                   replog_recover_entries entries, void *arg,
                   struct replog_position *out);

#endif
