/* ZooKeeper's AdminServer commands, answered in its JSON shapes: a URL
 * /commands/NAME (NAME a command's name or any of its aliases, "srvr" as
 * well as "server_stats") answers one object holding the command's fields,
 * "command" (its primary name) and "error" (null, or why it failed).
 *
 * Every figure comes from the same struct fourlw_source the four-letter
 * words read, through the same walks (struct fourlw_sink): a command and
 * its four-letter word cannot disagree.  No sockets here. */
#ifndef TB_ADMINSRV_H
#define TB_ADMINSRV_H

#include "common/common.h"

struct fourlw_source;

/* Query arguments of the request (stmk's traceMask): the value or NULL. */
typedef const char *(*adminsrv_arg_fn)(void *ctx, const char *name);

/* Answers command `name` into out as JSON; returns the HTTP status: 200,
 * also for a name no command has (its JSON says so), as ZooKeeper 3.8. */
int adminsrv_run(const struct fourlw_source *src, const char *name,
                 adminsrv_arg_fn arg, void *ctx, struct tb_wbuf *out);

/* The page at the command URL itself: a link to every command, as
 * ZooKeeper's.  `base` is the command URL ("/commands"). */
void adminsrv_index(const char *base, struct tb_wbuf *out);

#endif
