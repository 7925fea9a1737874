/* SASL authentication (opcode 102) as a ZooKeeper server with a JAAS
 * DigestLoginModule does it: mechanism DIGEST-MD5, service "zookeeper",
 * server name and realm "zk-sasl-md5" (what every ZooKeeper client puts
 * in its digest-uri), users and passwords from the JAAS file.  The
 * exchange itself is Cyrus SASL's; the passwords reach it through an
 * auxiliary-property plugin of our own, so nothing is read from or
 * written to a system password database.
 *
 * A connection that completes the exchange gains the id sasl:<user>, and
 * "super" if <user> is the configured superUser.  A failed step answers
 * AuthFailed (SessionClosedRequireAuth when enforce.auth names sasl) and
 * closes the connection, as ZooKeeper does.  Like setAuth,
 * the identity belongs to the connection: clients log in again after
 * every reconnect. */
#include <sasl/sasl.h>
#include <sasl/saslplug.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/config.h"
#include "server/config/jaas.h"
#include "server/logging/log.h"
#include "server/proc/proc.h"
#include "server/server.h"

#define ZK_SERVICE "zookeeper"
#define ZK_REALM   "zk-sasl-md5"
#define AUX_PLUGIN "tumblerd"

/* Cyrus SASL is process-wide, and so are these. */
static struct jaas_user *users;
static size_t nusers;

/* The length of the user's name in `user`: Cyrus appends "@realm" to a
 * name that has none. */
static size_t name_len(const char *user, size_t len)
{
    size_t rl = strlen("@" ZK_REALM);

    if (len > rl && memcmp(user + len - rl, "@" ZK_REALM, rl) == 0)
        len -= rl;
    return len;
}

static const char *password_of(const char *user, size_t len)
{
    size_t i;

    len = name_len(user, len);
    for (i = 0; i < nusers; i++)
        if (strlen(users[i].name) == len &&
            memcmp(users[i].name, user, len) == 0)
            return users[i].password;
    return NULL;
}

static int aux_lookup(void *glob, sasl_server_params_t *sp, unsigned flags,
                      const char *user, unsigned ulen)
{
    const struct propval *cur;
    const char *password;

    (void)glob;
    /* Only the authenticating user's password is ours to give. */
    if (flags & SASL_AUXPROP_AUTHZID)
        return SASL_OK;
    if ((password = password_of(user, ulen)) == NULL)
        return SASL_NOUSER;
    for (cur = sp->utils->prop_get(sp->propctx); cur && cur->name; cur++) {
        if (strcmp(cur->name, SASL_AUX_PASSWORD) != 0)
            continue;
        if (cur->values != NULL) {
            if (!(flags & SASL_AUXPROP_OVERRIDE))
                continue;
            sp->utils->prop_erase(sp->propctx, cur->name);
        }
        sp->utils->prop_set(sp->propctx, cur->name, password,
                            (int)strlen(password));
    }
    return SASL_OK;
}

static sasl_auxprop_plug_t aux_plug = {
    .auxprop_lookup = aux_lookup,
    .name = AUX_PLUGIN,
};

static int aux_init(const sasl_utils_t *utils, int max_version,
                    int *out_version, sasl_auxprop_plug_t **plug,
                    const char *name)
{
    (void)utils;
    (void)name;
    if (max_version < SASL_AUXPROP_PLUG_VERSION)
        return SASL_BADVERS;
    *out_version = SASL_AUXPROP_PLUG_VERSION;
    *plug = &aux_plug;
    return SASL_OK;
}

/* Our settings instead of a file in /etc/sasl2. */
static int get_option(void *ctx, const char *plugin, const char *option,
                      const char **result, unsigned *len)
{
    (void)ctx;
    (void)plugin;
    if (strcmp(option, "auxprop_plugin") == 0)
        *result = AUX_PLUGIN;
    else if (strcmp(option, "mech_list") == 0)
        *result = "DIGEST-MD5";
    else if (strcmp(option, "pwcheck_method") == 0)
        *result = "auxprop";
    else
        return SASL_FAIL;
    if (len != NULL)
        *len = (unsigned)strlen(*result);
    return SASL_OK;
}

static int on_log(void *ctx, int level, const char *message)
{
    (void)ctx;
    if (level <= SASL_LOG_ERR)
        tb_log(TB_LOG_WARN, "sasl: %s", message);
    else if (level <= SASL_LOG_NOTE)
        tb_log(TB_LOG_DEBUG, "sasl: %s", message);
    return SASL_OK;
}

/* Cyrus takes every callback as int (*)(void); void (*)(void) is the
 * type a compiler lets any function pointer pass through. */
#define CB(fn) ((sasl_callback_ft)(void (*)(void))(fn))

static const sasl_callback_t callbacks[] = {
    {SASL_CB_GETOPT, CB(get_option), NULL},
    {SASL_CB_LOG, CB(on_log), NULL},
    {SASL_CB_LIST_END, NULL, NULL},
};

int sasl_setup(const struct tb_config *cfg, char *err, size_t errlen)
{
    const char *mechs;
    sasl_conn_t *probe;
    int rv;

    if (cfg->jaas_file == NULL)
        return 0;
    rv = jaas_load_users(cfg->jaas_file,
                         cfg->jaas_section ? cfg->jaas_section : "Server",
                         &users, &nusers, err, errlen);
    if (rv != 0)
        return rv;
    if (sasl_auxprop_add_plugin(AUX_PLUGIN, aux_init) != SASL_OK ||
        sasl_server_init(callbacks, "tumblerd") != SASL_OK) {
        snprintf(err, errlen, "SASL: the library did not start");
        goto fail;
    }
    /* Fail now, not at a client's first attempt, if the mechanism's
     * plugin (Debian: libsasl2-modules) is missing. */
    if (sasl_server_new(ZK_SERVICE, ZK_REALM, ZK_REALM, NULL, NULL, NULL, 0,
                        &probe) != SASL_OK) {
        snprintf(err, errlen, "SASL: cannot make a server context");
        sasl_server_done();
        goto fail;
    }
    rv = sasl_listmech(probe, NULL, "", " ", "", &mechs, NULL, NULL);
    if (rv != SASL_OK || strstr(mechs, "DIGEST-MD5") == NULL) {
        snprintf(err, errlen,
                 "SASL: no DIGEST-MD5 mechanism (install "
                 "libsasl2-modules)");
        sasl_dispose(&probe);
        sasl_server_done();
        goto fail;
    }
    sasl_dispose(&probe);
    tb_log(TB_LOG_INFO, "SASL DIGEST-MD5: %zu user(s) from %s", nusers,
           cfg->jaas_file);
    return 0;
fail:
    jaas_free_users(users, nusers);
    users = NULL;
    nusers = 0;
    return TB_EINVAL;
}

void sasl_teardown(void)
{
    if (users == NULL)
        return;
    sasl_server_done();
    jaas_free_users(users, nusers);
    users = NULL;
    nusers = 0;
}

/* A step: the first makes the context and starts DIGEST-MD5, which speaks
 * first, so a client's first token is ignored (ZooKeeper's clients send an
 * empty one).  SASL_SUCCESS_DATA: the last step's answer (rspauth) comes
 * with the success, as Java's SaslServer completes on it.  A step after
 * that fails, in Cyrus as in Java. */
static int step(struct proc_client *c, struct tb_str in, const char **out,
                unsigned *outlen)
{
    static const sasl_security_properties_t props = {
        .max_ssf = 0, /* ZooKeeper wraps nothing: qop=auth only */
        .security_flags = SASL_SEC_NOPLAINTEXT | SASL_SEC_NOANONYMOUS,
    };
    int rv;

    if (c->sasl == NULL) {
        rv = sasl_server_new(ZK_SERVICE, ZK_REALM, ZK_REALM, NULL, NULL, NULL,
                             SASL_SUCCESS_DATA, &c->sasl);
        if (rv == SASL_OK)
            rv = sasl_setprop(c->sasl, SASL_SEC_PROPS, &props);
        if (rv == SASL_OK)
            rv = sasl_server_start(c->sasl, "DIGEST-MD5", NULL, 0, out, outlen);
        return rv;
    }
    return sasl_server_step(c->sasl, in.ptr ? in.ptr : "", (unsigned)in.len,
                            out, outlen);
}

static void logged_in(struct proc_client *c)
{
    const void *v = NULL;
    const char *user, *super = c->srv->cfg->sasl_super_user;
    size_t len;
    struct tb_id id;

    if (sasl_getprop(c->sasl, SASL_USERNAME, &v) != SASL_OK || v == NULL)
        return;
    user = v;
    len = name_len(user, strlen(user));
    id = (struct tb_id){TB_STR("sasl"), {user, len}};
    auth_add_id(c, id);
    if (super != NULL && strlen(super) == len && memcmp(super, user, len) == 0)
        auth_make_super(c);
    tb_log(TB_LOG_INFO, "session 0x%llx from %s: SASL user %.*s%s",
           (unsigned long long)c->session_id, c->peer, (int)len, user,
           c->super ? " (super)" : "");
}

/* A token follows the reply header even after an error: ZooKeeper's Java
 * client reads one after every SASL reply, and sees a connection lost
 * instead of AuthFailed without it. */
static void reply_token(struct proc_client *c, int32_t xid, int32_t err,
                        const char *token, unsigned len)
{
    struct tb_wbuf *w = &c->srv->scratch;
    struct tb_reply_header h = {xid, 0, err};
    struct tb_sasl_token t = {{token, token ? len : 0}};
    size_t start;

    tb_wbuf_reset(w);
    start = tb_frame_begin(w);
    tb_reply_header_encode(w, &h);
    tb_sasl_token_encode(w, &t);
    tb_frame_end(w, start);
    c->ops->send(c, w->base, w->len);
}

void sasl_request(struct proc_client *c, int32_t xid, struct tb_str body)
{
    struct tb_rd rd = tb_rd_make(body.ptr, body.len);
    struct tb_sasl_token in;
    const char *out = NULL;
    unsigned outlen = 0;
    int rv;

    if (tb_sasl_token_decode(&rd, &in) != 0) {
        reply_token(c, xid, TB_EMARSHALLING, NULL, 0);
        proc_close_after_flush(c);
        return;
    }
    /* ZooKeeper without a JAAS Server section answers with no token. */
    if (users == NULL) {
        reply_token(c, xid, 0, NULL, 0);
        return;
    }
    rv = step(c, in.token, &out, &outlen);
    if (rv != SASL_OK && rv != SASL_CONTINUE) {
        auth_log_refusal(c, "SASL authentication failed: %s",
                         c->sasl ? sasl_errdetail(c->sasl)
                                 : sasl_errstring(rv, NULL, NULL));
        reply_token(c, xid,
                    (c->srv->cfg->enforce_auth_mask & TB_SCHEME_SASL)
                        ? TB_ESESSIONCLOSEDREQUIRESASLAUTH
                        : TB_EAUTHFAILED,
                    NULL, 0);
        proc_close_after_flush(c);
        return;
    }
    if (rv == SASL_OK)
        logged_in(c);
    reply_token(c, xid, 0, out, outlen);
}

void sasl_conn_closed(struct proc_client *c)
{
    if (c->sasl != NULL)
        sasl_dispose(&c->sasl);
}
