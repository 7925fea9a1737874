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
 * What is refused before the log, whatever the tree, is refused at the
 * same place, in a multi (which then fails at that op) as alone
 * (proc_write_refused): a TTL create with extended types off
 * (UNIMPLEMENTED, as ZooKeeper's), and a setData of /zookeeper/config
 * (BADARGUMENTS; ZooKeeper's takes it): the members there are reconfig's
 * to write, as every member's links and its next reconfig follow them. */
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

static int refusal(const struct tbd *s, int32_t type, struct tb_str path)
{
    if (type == TB_OP_CREATETTL && !s->cfg->extended_types_enabled)
        return TB_EUNIMPLEMENTED;
    if (type == TB_OP_SETDATA && tb_str_eq(path, TB_STR("/zookeeper/config")))
        return TB_EBADARGUMENTS;
    return 0;
}

static int is_ttl_mode(int32_t flags)
{
    return flags == TB_PERSISTENT_WITH_TTL ||
           flags == TB_PERSISTENT_SEQUENTIAL_WITH_TTL;
}

/* A createTTL whose mode is no TTL one is the fsm's to refuse, with
 * BadArguments: ZooKeeper reads the mode before it finds TTLs off. */
int proc_write_refused(const struct tbd *s, int32_t type, struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len);
    struct tb_str path = TB_STR("");
    struct tb_create_ttl_req cr;

    if (type == TB_OP_SETDATA && tb_get_STR(&rd, &path) != 0)
        return 0; /* malformed: the fsm refuses it */
    if (type == TB_OP_CREATETTL &&
        (tb_create_ttl_req_decode(&rd, &cr) != 0 || !is_ttl_mode(cr.flags)))
        return 0;
    return refusal(s, type, path);
}

int proc_multi_prepare(const struct tbd *s, struct tb_str *body,
                       struct tb_wbuf *out)
{
    struct tb_rd rd = tb_rd_make(body->ptr, body->len);
    struct tb_multi_op op;
    size_t n = 0, refused = SIZE_MAX;
    int changed = 0, code = 0, rv;
    int32_t t;

    while ((rv = tb_multi_next(&rd, TB_OP_MULTI, &op)) == 1) {
        t = is_create(op.type) ? create_type(&op) : op.type;
        changed |= t != op.type;
        if (refused == SIZE_MAX &&
            (code = refusal(
                 s, t, t == TB_OP_SETDATA ? op.u.set_data.path : TB_STR(""))) !=
                0)
            refused = n;
        n++;
    }
    if (rv != 0) /* malformed: the fsm refuses it whole */
        return 0;
    out->len = 0;
    if (refused != SIZE_MAX) {
        tb_multi_failure_encode(out, n, refused, code);
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
