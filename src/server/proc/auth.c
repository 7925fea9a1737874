/* Connection identities: every connection is ip:<peer>; setAuth adds
 * digest identities (or makes it the superuser), a SASL login (sasl.c) a
 * sasl one; with enforce.auth a connection without one of the schemes it
 * names may do nothing else.  Credentials belong to
 * the connection, not the session, as in ZooKeeper: clients replay them
 * after every reconnect.  Writes carry the identities in their txn so the
 * fsm checks ACLs deterministically; reads check them here. */
#include <stdarg.h>
#include <stdio.h>

#include "common/digest.h"
#include "server/config/config.h"
#include "server/logging/log.h"
#include "server/proc/proc.h"
#include "server/server.h"
#include "tree/acl.h"

/* Every write's txn carries its connection's identities (proc.c), so that
 * a create of a few bytes makes a log entry of their size: setAuth adds no
 * more once they take this much.  ZooKeeper keeps them in memory only. */
#define AUTH_IDS_BYTES 8192

static int has_id(const struct proc_client *c, struct tb_str scheme,
                  struct tb_str id)
{
    struct tb_rd it = tb_vec_reader(tb_vec_view(&c->ids, c->nids));
    struct tb_id x;

    while (tb_vec_next_id(&it, &x) == 1)
        if (tb_str_eq(x.scheme, scheme) && tb_str_eq(x.id, id))
            return 1;
    return 0;
}

void auth_add_id(struct proc_client *c, struct tb_id id)
{
    if (has_id(c, id.scheme, id.id))
        return;
    tb_put_id(&c->ids, &id);
    c->nids++;
    c->schemes |= tb_config_scheme_bit(id.scheme.ptr, id.scheme.len);
}

/* As ZooKeeper, the super user also carries the id super:"", which
 * whoAmI shows and ACL checks honour. */
void auth_make_super(struct proc_client *c)
{
    c->super = 1;
    auth_add_id(c, (struct tb_id){TB_STR("super"), TB_STR("")});
}

void auth_log_refusal(struct proc_client *c, const char *fmt, ...)
{
    struct tbd *s = c->srv;
    char why[256];
    va_list ap;

    if (!tb_log_due(&s->auth_log, tbd_now_ms(s)))
        return;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    tb_log_rated_fields(&s->auth_log, TB_LOG_WARN,
                        TB_LOG_FIELDS(TB_LOG_STR("peer", c->peer),
                                      TB_LOG_HEX("session", c->session_id),
                                      TB_LOG_STR("refused", "auth")),
                        "session 0x%llx from %s: %s",
                        (unsigned long long)c->session_id, c->peer, why);
}

void auth_init_conn(struct proc_client *c)
{
    watch_owner_init(&c->watch);
    auth_add_id(c, (struct tb_id){TB_STR("ip"), tb_str_c(c->peer)});
}

void auth_request(struct proc_client *c, int32_t xid, struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len);
    const char *super = c->srv->cfg->super_digest;
    struct tb_auth_req a;
    char id[1100];
    int n;

    if (tb_auth_req_decode(&rd, &a) != 0) {
        c->ops->reply(c, xid, 0, TB_EMARSHALLING, NULL, 0);
        return;
    }
    if (tb_str_eq(a.scheme, TB_STR("digest")) && a.auth.len < 1024) {
        n = tb_digest_id(a.auth.ptr ? a.auth : TB_STR(""), id, sizeof id);
        if (n > 0 && c->ids.len >= AUTH_IDS_BYTES &&
            !has_id(c, TB_STR("digest"), (struct tb_str){id, (size_t)n})) {
            auth_log_refusal(c,
                             "authentication refused: the connection's "
                             "identities take %d bytes or more",
                             AUTH_IDS_BYTES);
            goto refused;
        }
        if (n > 0) {
            auth_add_id(c, (struct tb_id){TB_STR("digest"), {id, (size_t)n}});
            if (super != NULL && super[0] != '\0' && strcmp(super, id) == 0)
                auth_make_super(c);
            c->ops->reply(c, xid, 0, 0, NULL, 0);
            return;
        }
    } else if (tb_str_eq(a.scheme, TB_STR("ip"))) {
        auth_add_id(c, (struct tb_id){TB_STR("ip"), tb_str_c(c->peer)});
        c->ops->reply(c, xid, 0, 0, NULL, 0);
        return;
    } else if (tb_str_eq(a.scheme, TB_STR("x509")) &&
               (c->schemes & TB_SCHEME_X509)) {
        /* ZooKeeper's provider takes the certificate again: it is had */
        c->ops->reply(c, xid, 0, 0, NULL, 0);
        return;
    }
    auth_log_refusal(c, "authentication failed (scheme '%.*s')",
                     (int)(a.scheme.len < 32 ? a.scheme.len : 32),
                     a.scheme.ptr ? a.scheme.ptr : "");
refused:
    c->ops->reply(c, xid, 0, TB_EAUTHFAILED, NULL, 0);
    proc_close_after_flush(c);
}

int auth_enforced(struct proc_client *c, int32_t xid)
{
    const struct tb_config *cfg = c->srv->cfg;

    if (cfg->enforce_auth_mask == 0 || (c->schemes & cfg->enforce_auth_mask))
        return 1;
    auth_log_refusal(c, "not authenticated with any of %s; closing",
                     cfg->enforce_auth_schemes);
    c->ops->reply(c, xid, 0, TB_ESESSIONCLOSEDREQUIRESASLAUTH, NULL, 0);
    proc_close_after_flush(c);
    return 0;
}

int auth_check(const struct proc_client *c, struct tb_vec acl, int perm)
{
    return tb_acl_check(acl, tb_vec_view(&c->ids, c->nids), c->super, perm);
}
