/* A reconfig's outcome, as every replica applies it.
 *
 * The leader decides a reconfig (proc/reconfig.c): it checks the request,
 * changes raft's members one at a time, then logs this txn with the
 * result.  On success the txn holds the new members' server.N lines;
 * /zookeeper/config becomes them followed by "version=<zxid in hex>", as
 * ZooKeeper writes it, the zxid being this txn's own, and the answer is
 * the node's data and stat (ZooKeeper's reply to reconfig is a getData's).
 * On failure nothing changes and the error is the result.
 *
 * The stat is ZooKeeper 3.8's: its PrepRequestProcessor logs a reconfig as
 * a SetDataTxn of version -1, which DataTree.setData stores as the node's
 * version as it is, so /zookeeper/config's dataVersion is -1 after every
 * reconfig (and its mZxid the version the text names), never a count. */
#include <stdio.h>

#include "server/fsm/fsm_int.h"

int fsm__reconfig(struct fsm *f, struct tb_str body)
{
    struct tb_rd r = tb_rd_make(body.ptr, body.len);
    struct tb_reconfig_txn t;
    struct tree_node *n;
    struct tb_stat st;
    char version[32];
    int rv;

    if (tb_reconfig_txn_decode(&r, &t) != 0)
        return TB_EMARSHALLING;
    /* A failed reconfig's code is ZooKeeper's, answered as it is; one of
     * tumblerd's own (below -1000: fsm_apply stops on TB_ENOMEM) is no
     * outcome the leader logs. */
    if (t.rc != 0)
        return t.rc > -1000 ? t.rc : TB_EMARSHALLING;
    n = tree_find(f->tree, TB_STR("/zookeeper/config"));
    if (n == NULL)
        return TB_ENONODE;
    /* The text is built in the path buffer, which no other part of this
     * txn uses. */
    f->path.len = 0;
    tb_wbuf_put(&f->path, t.members.ptr, t.members.len);
    snprintf(version, sizeof version, "version=%llx",
             (unsigned long long)f->zxid);
    tb_wbuf_put(&f->path, version, strlen(version));
    if (f->path.oom)
        return TB_ENOMEM;
    rv = tree_set_data(
        f->tree, n, (struct tb_str){(const char *)f->path.base, f->path.len},
        -1, f->zxid, f->txn->time);
    if (rv != 0)
        return rv;
    fsm__event(f, TB_EVENT_DATA_CHANGED, tree_node_path(n),
               tree_node_acl_ref(n));
    tree_node_stat(n, &st);
    tb_get_data_resp_encode(&f->body,
                            &(struct tb_get_data_resp){tree_node_data(n), st});
    return 0;
}
