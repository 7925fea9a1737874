/* tumblerd --recover-ensemble (recovery.c). */
#ifndef TB_SERVER_RECOVERY_H
#define TB_SERVER_RECOVERY_H

#include <uv.h>

#include "server/config/config.h"
#include "server/replog/replog.h"

/* Compares the log in rc->dir with each --survivor's, then recovers it
 * into the server.N lines' members (replog_recover.h), saying on stdout
 * what it found and did, and what to do next.  The exit status: 0 done,
 * 1 refused or failed (the log says why). */
int recover_ensemble(uv_loop_t *loop, const struct tb_config *cfg,
                     const struct replog_config *rc);

#endif
