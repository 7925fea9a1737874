/* The requests tbfail sends on its session (fail_sess.c): a create (sent
 * alone, or with its reply), sync and getChildren of a path. */
#include <stdio.h>

#include "tbfail.h"

int tf_send_create(struct tf_sess *s, const char *path, int32_t flags,
                   uint64_t deadline, int32_t *xid)
{
    struct tb_create_req r = {tb_str_c(path), TB_STR("tbfail"),
                              tb_acl_open_unsafe, flags};
    struct tb_wbuf b;
    int rc;

    tb_wbuf_init(&b);
    tb_create_req_encode(&b, &r);
    rc = tf_sess_send(s, TB_OP_CREATE, &b, deadline, xid);
    tb_wbuf_free(&b);
    return rc;
}

/* A create's reply: err, and the path made into `out`. */
int tf_create_reply(struct tb_rd *rd, int err, char *out, size_t cap)
{
    struct tb_path_resp pr;

    if (err == 0 && out != NULL) {
        if (tb_path_resp_decode(rd, &pr) != 0)
            return TB_EMARSHALLING;
        snprintf(out, cap, "%.*s", (int)pr.path.len, pr.path.ptr);
    }
    return err;
}

int tf_create(struct tf_sess *s, const char *path, int32_t flags,
              uint64_t deadline, char *out, size_t cap)
{
    int32_t xid;
    struct tb_rd rd;
    int rc = tf_send_create(s, path, flags, deadline, &xid);

    if (rc != 0)
        return rc;
    rc = tf_sess_reply(s, xid, deadline, &rd);
    return tf_create_reply(&rd, rc, out, cap);
}

int tf_path_op(struct tf_sess *s, int32_t op, const char *path,
               uint64_t deadline, struct tb_rd *rd)
{
    struct tb_wbuf b;
    int rc;

    tb_wbuf_init(&b);
    if (op == TB_OP_SYNC) {
        struct tb_path_req r = {tb_str_c(path)};
        tb_path_req_encode(&b, &r);
    } else {
        struct tb_path_watch_req r = {tb_str_c(path), 0};
        tb_path_watch_req_encode(&b, &r);
    }
    rc = tf_sess_call(s, op, &b, deadline, rd);
    tb_wbuf_free(&b);
    return rc;
}
