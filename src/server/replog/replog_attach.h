/* replog over a raft that someone else owns and steps: libraft's
 * raft_fixture, which runs N servers in one process on an in-memory io and
 * a virtual clock, for deterministic cluster tests.  Everything above raft
 * is the server's own code (proposals and their answers, the envelope,
 * apply, snapshots and restore, leadership changes); below it, the
 * fixture's io instead of our files and transport.  No timers run: the
 * test calls replog_attached_tick after stepping the fixture.
 *
 * Use: replog_attach_new, then raft_fixture_grow(f, replog_attached_fsm(l))
 * for each server, replog_attach(l, raft_fixture_get(f, i)), bootstrap and
 * start the fixture; at the end raft_fixture_close, then
 * replog_attached_free.  The rest of replog.h works as for a log that
 * replog_open opened (not replog_close). */
#ifndef TB_SERVER_REPLOG_ATTACH_H
#define TB_SERVER_REPLOG_ATTACH_H

#include "server/replog/replog.h"

struct raft;
struct raft_fsm;

/* cfg->dir and cfg->address are not used; snapshots are always taken on
 * the loop (no fork).  0 or a negative TB_E* code. */
int replog_attach_new(struct replog **out, const struct replog_config *cfg,
                      const struct replog_fsm *fsm);
/* The state machine to give raft_init (raft_fixture_grow). */
struct raft_fsm *replog_attached_fsm(struct replog *l);
/* The raft initialized with that state machine; before it starts. */
void replog_attach(struct replog *l, struct raft *raft);
/* What a server's tick does: leadership, snapshots when idle. */
void replog_attached_tick(struct replog *l);
/* Once the raft is closed: every proposal not answered gets TB_ECLOSING. */
void replog_attached_free(struct replog *l);

#endif
