/* The recipes' unit tests' side of the client's scripted server
 * (tests/unit/client_fixture.c): a client in loop mode whose session is
 * RS_SID, and the requests and replies the recipes' scripts read and
 * write. */
#ifndef TB_TEST_RCP_SCRIPT_H
#define TB_TEST_RCP_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "client_fixture.h"

#define RS_SID 0x77 /* the session the scripted server gives */

/* A connected client, its states forwarded to the recipes; read-only
 * servers allowed if `readonly_allowed`. */
struct tb_client *rs_open_client(int readonly_allowed);
/* The connection breaks and the client reconnects within the session, to
 * a read-only server if `readonly`. */
void rs_reconnect(struct tb_client *c, int readonly);
/* Reads the next request, which must be of `type`; its xid, and its body
 * (after the header) in *body if not NULL. */
int32_t rs_expect(int type, struct tb_rd *body);
/* The same, the request's path being `path`. */
int32_t rs_expect_at(int type, const char *path);
void rs_reply_sync(int32_t xid, const char *path);
/* A stat: the node's czxid (its mzxid too) and ephemeral owner. */
void rs_reply_stat(int32_t xid, int64_t czxid, int64_t owner);
/* A getData's reply: `len` bytes of `data`, the node's czxid and owner. */
void rs_reply_data(int32_t xid, const void *data, size_t len, int64_t czxid,
                   int64_t owner);
/* The scripted server goes away: without a connection nothing waits for
 * its answers, so the recipes' handles can be freed, and the client
 * closed (rs_close does both for a test that holds no handle). */
void rs_cut(struct tb_client *c);
void rs_close(struct tb_client *c);
/* A create2's reply: the node `path` made at `czxid`, ephemeral of RS_SID. */
void rs_reply_create(int32_t xid, const char *path, int64_t czxid);
/* A getChildren's reply: the names up to NULL; with the parent's stat
 * (getChildren2), its cversion `cv`, if `stat`. */
void rs_reply_names(int32_t xid, const char *const *names, int stat,
                    int32_t cv);

/* A tb_done_cb's record: how many times it fired, and its last status
 * (rs_done_cb, its data a struct rs_done). */
struct rs_done {
    int calls, rc;
};
void rs_done_cb(int rc, void *data);

#endif
