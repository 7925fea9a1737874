/* multi (14): all sub-ops under one zxid, each seeing the effects of the
 * ones before it, all-or-nothing (wire doc §6.11).
 *
 * The body is walked twice: once to reject a malformed request or a
 * forbidden sub-op type as a whole (MarshallingError, no body), then to
 * apply.  When sub-op k fails the tree is rolled back to the state before
 * the multi and every result becomes an error result: 0 before k, the real
 * code at k, -2 after it; the reply header still says 0.
 *
 * Successful results as 3.8 sends them: create and create2 give a create
 * result (3.8 downgrades create2), createContainer and createTTL a create2
 * result with the Stat as it was right after that sub-op, setData its Stat
 * at that point, delete and check nothing. */
#include "server/fsm/fsm_int.h"

static void put_header(struct fsm *f, int32_t type, int32_t err)
{
    struct tb_multi_header h = {type, 0, err};

    tb_multi_header_encode(&f->body, &h);
}

static int sub_create(struct fsm *f, const struct tb_multi_op *op)
{
    struct tree_node *n = NULL;
    struct tb_path_resp p;
    int rv = fsm__create(f, op->type, &op->u.create, &n);

    if (rv != 0)
        return rv;
    p.path = tree_node_path(n);
    if (op->type == TB_OP_CREATE || op->type == TB_OP_CREATE2) {
        put_header(f, TB_OP_CREATE, 0);
        tb_path_resp_encode(&f->body, &p);
    } else {
        put_header(f, TB_OP_CREATE2, 0);
        tb_path_resp_encode(&f->body, &p);
        fsm__put_created_stat(f, n, op->u.create.data);
    }
    return 0;
}

static int sub_op(struct fsm *f, const struct tb_multi_op *op)
{
    struct tree_node *n = NULL;
    int rv;

    switch (op->type) {
    case TB_OP_CREATE:
    case TB_OP_CREATE2:
    case TB_OP_CREATECONTAINER:
    case TB_OP_CREATETTL:
        return sub_create(f, op);
    case TB_OP_DELETE:
        if ((rv = fsm__delete(f, &op->u.del)) == 0)
            put_header(f, TB_OP_DELETE, 0);
        return rv;
    case TB_OP_SETDATA:
        if ((rv = fsm__set_data(f, &op->u.set_data, &n)) == 0) {
            put_header(f, TB_OP_SETDATA, 0);
            fsm__put_stat(f, n);
        }
        return rv;
    case TB_OP_CHECK:
        if ((rv = fsm__check(f, &op->u.check)) == 0)
            put_header(f, TB_OP_CHECK, 0);
        return rv;
    default: /* tb_multi_next allows nothing else */
        return TB_EMARSHALLING;
    }
}

int fsm__multi(struct fsm *f, struct tb_str body)
{
    struct tb_rd r = tb_rd_make(body.ptr, body.len);
    struct tb_multi_op op;
    size_t count = 0, i = 0;
    int rv;

    while ((rv = tb_multi_next(&r, TB_OP_MULTI, &op)) == 1)
        count++;
    if (rv < 0)
        return TB_EMARSHALLING;
    r = tb_rd_make(body.ptr, body.len);
    for (i = 0; i < count; i++) {
        rv = tb_multi_next(&r, TB_OP_MULTI, &op);
        assert(rv == 1);
        rv = sub_op(f, &op);
        /* A sub-op applied without its quota stats (tree_failed) is as
         * much a failure as one refused: the rollback below would clear
         * the mark, and this replica alone would decide the ops after it
         * on stale stats. */
        if (rv == TB_ENOMEM || f->oom || tree_failed(f->tree))
            return TB_ENOMEM;
        if (rv != 0)
            break;
    }
    if (i < count) {
        tree_rollback(f->tree);
        tree_begin(f->tree);
        fsm__events_drop(f);
        f->body.len = 0;
        tb_multi_failure_encode(&f->body, count, i, rv);
        return 0;
    }
    tb_multi_end_encode(&f->body);
    return 0;
}
