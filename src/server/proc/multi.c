/* A multi as ZooKeeper's leader reads it, before it is logged.
 *
 * ZooKeeper makes each create of a multi from its record and its mode
 * (MultiOperationRecord, Op.create): the mode, not the opcode, says what is
 * created.  The official C client sends a container's create as a plain
 * create (opcode 1, flags 4); a createContainer or createTTL record whose
 * mode is plain makes a plain node.  Here the opcodes are put right at the
 * server the client is on, so that every member, of any release, applies
 * the same entry the same way (the fsm holds each opcode to its mode).
 *
 * A TTL create with extended types off is refused at the same place, as a
 * createTTL request is (proc.c): the multi fails at that op with
 * UNIMPLEMENTED, as ZooKeeper's does. */
#include <stdint.h>

#include "server/config/config.h"
#include "server/proc/proc.h"
#include "server/server.h"

static int is_create(int32_t type)
{
    return type == TB_OP_CREATE || type == TB_OP_CREATE2 ||
           type == TB_OP_CREATECONTAINER || type == TB_OP_CREATETTL;
}

static int32_t create_type(const struct tb_multi_op *op)
{
    switch (op->u.create.flags) {
    case TB_CONTAINER:
        return TB_OP_CREATECONTAINER;
    case TB_PERSISTENT_WITH_TTL:
    case TB_PERSISTENT_SEQUENTIAL_WITH_TTL:
        return TB_OP_CREATETTL;
    default:
        return op->type == TB_OP_CREATE2 ? TB_OP_CREATE2 : TB_OP_CREATE;
    }
}

int proc_multi_prepare(const struct tbd *s, struct tb_str *body,
                       struct tb_wbuf *out)
{
    struct tb_rd rd = tb_rd_make(body->ptr, body->len);
    struct tb_multi_op op;
    size_t n = 0, refused = SIZE_MAX;
    int changed = 0, rv;

    while ((rv = tb_multi_next(&rd, TB_OP_MULTI, &op)) == 1) {
        if (is_create(op.type)) {
            int32_t t = create_type(&op);
            if (t == TB_OP_CREATETTL && !s->cfg->extended_types_enabled &&
                refused == SIZE_MAX)
                refused = n;
            changed |= t != op.type;
        }
        n++;
    }
    if (rv != 0) /* malformed: the fsm refuses it whole */
        return 0;
    out->len = 0;
    if (refused != SIZE_MAX) {
        tb_multi_failure_encode(out, n, refused, TB_EUNIMPLEMENTED);
        return out->oom ? TB_ENOMEM : 1;
    }
    if (!changed)
        return 0;
    rd = tb_rd_make(body->ptr, body->len);
    while (tb_multi_next(&rd, TB_OP_MULTI, &op) == 1) {
        if (is_create(op.type)) {
            op.type = create_type(&op);
            if (op.type != TB_OP_CREATETTL)
                op.u.create.ttl = -1;
        }
        tb_multi_op_encode(out, &op);
    }
    tb_multi_end_encode(out);
    if (out->oom)
        return TB_ENOMEM;
    *body = (struct tb_str){(const char *)out->base, out->len};
    return 0;
}
