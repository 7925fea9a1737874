/* The SASL login a ZooKeeper client makes to a server with a JAAS Server
 * section: DIGEST-MD5 for service "zookeeper" at "zk-sasl-md5" (the name
 * every ZooKeeper server answers to for DIGEST-MD5), qop auth, each step a
 * SASL request (opcode 102) whose reply carries the server's next token.
 * The mechanism is Cyrus SASL's.  It runs after the handshake, before any
 * other request, on every connection, since the server ties the identity
 * to the connection; so the connection stays in PH_HANDSHAKE (bounded by
 * the connect timeout) until the login ends. */
#include <sasl/sasl.h>
#include <stdlib.h>

#include "client/client.h"

#define ZK_SERVICE "zookeeper"
#define ZK_HOST    "zk-sasl-md5"

struct tb__sasl {
    sasl_conn_t *conn;
    sasl_callback_t cbs[4];
    sasl_secret_t *secret;
    int32_t xid; /* of the step whose reply is due */
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc;

/* Cyrus's own mutexes lock nothing until it is given some: its plugins'
 * state is shared by every connection of the process (each handle logs in
 * on its own thread). */
static void *mutex_alloc(void)
{
    pthread_mutex_t *m = malloc(sizeof *m);

    if (m != NULL)
        pthread_mutex_init(m, NULL);
    return m;
}

static int mutex_lock(void *m)
{
    return pthread_mutex_lock(m) == 0 ? SASL_OK : SASL_FAIL;
}

static int mutex_unlock(void *m)
{
    return pthread_mutex_unlock(m) == 0 ? SASL_OK : SASL_FAIL;
}

static void mutex_free(void *m)
{
    pthread_mutex_destroy(m);
    free(m);
}

static void init(void)
{
    sasl_set_mutex(mutex_alloc, mutex_lock, mutex_unlock, mutex_free);
    init_rc = sasl_client_init(NULL);
}

/* The authentication id is the user; the authorization id is left empty,
 * so the server authorizes the user itself, as ZooKeeper's clients do. */
static int get_name(void *ctx, int id, const char **result, unsigned *len)
{
    struct tb_client *c = ctx;

    *result = id == SASL_CB_AUTHNAME ? c->o.sasl_user : "";
    if (len != NULL)
        *len = (unsigned)strlen(*result);
    return SASL_OK;
}

static int get_secret(sasl_conn_t *conn, void *ctx, int id, sasl_secret_t **out)
{
    struct tb_client *c = ctx;

    (void)conn;
    (void)id;
    *out = c->sasl->secret;
    return SASL_OK;
}

/* Cyrus takes every callback as int (*)(void); void (*)(void) is the type
 * a compiler lets any function pointer pass through. */
#define CB(fn) ((int (*)(void))(void (*)(void))(fn))

static void send_token(struct tb_client *c, const char *token, unsigned len)
{
    struct tb_request_header h = {tb__next_xid(c), TB_OP_SASL};
    struct tb_sasl_token t = {{token ? token : "", token ? len : 0}};
    size_t start = tb_frame_begin(&c->out);

    c->sasl->xid = h.xid;
    tb_request_header_encode(&c->out, &h);
    tb_sasl_token_encode(&c->out, &t);
    tb_frame_end(&c->out, start);
}

int tb__sasl_start(struct tb_client *c)
{
    static const sasl_security_properties_t props = {
        .max_ssf = 0, /* ZooKeeper wraps nothing: qop auth */
        .security_flags = SASL_SEC_NOANONYMOUS,
    };
    size_t plen = strlen(c->o.sasl_password);
    struct tb__sasl *s;
    const char *out = NULL, *mech;
    unsigned outlen = 0;
    int rv;

    pthread_once(&init_once, init);
    if (init_rc != SASL_OK)
        return TB_EAUTHFAILED;
    if ((s = tb__calloc(1, sizeof *s)) == NULL)
        return TB_ENOMEM;
    c->sasl = s;
    if ((s->secret = tb__malloc(sizeof *s->secret + plen)) == NULL) {
        tb__sasl_end(c);
        return TB_ENOMEM;
    }
    s->secret->len = plen;
    memcpy(s->secret->data, c->o.sasl_password, plen);
    s->cbs[0] = (sasl_callback_t){SASL_CB_AUTHNAME, CB(get_name), c};
    s->cbs[1] = (sasl_callback_t){SASL_CB_USER, CB(get_name), c};
    s->cbs[2] = (sasl_callback_t){SASL_CB_PASS, CB(get_secret), c};
    s->cbs[3] = (sasl_callback_t){SASL_CB_LIST_END, NULL, NULL};
    rv = sasl_client_new(ZK_SERVICE, ZK_HOST, NULL, NULL, s->cbs, 0, &s->conn);
    if (rv == SASL_OK)
        rv = sasl_setprop(s->conn, SASL_SEC_PROPS, &props);
    if (rv == SASL_OK)
        rv = sasl_client_start(s->conn, "DIGEST-MD5", NULL, &out, &outlen,
                               &mech);
    if (rv != SASL_OK && rv != SASL_CONTINUE) {
        tb__log(c, TB_LOG_ERROR, "SASL: %s",
                s->conn ? sasl_errdetail(s->conn)
                        : sasl_errstring(rv, NULL, NULL));
        tb__sasl_end(c);
        return TB_EAUTHFAILED;
    }
    /* DIGEST-MD5 speaks second: the first token is empty. */
    send_token(c, out, outlen);
    return 0;
}

void tb__sasl_on_frame(struct tb_client *c, const uint8_t *p, size_t n)
{
    struct tb__sasl *s = c->sasl;
    struct tb_rd rd = tb_rd_make(p, n);
    struct tb_reply_header h;
    struct tb_sasl_token in;
    const char *out = NULL;
    unsigned outlen = 0;
    int rv;

    if (tb_reply_header_decode(&rd, &h) != 0 || h.xid != s->xid ||
        tb_sasl_token_decode(&rd, &in) != 0) {
        tb__conn_failed(c, "malformed SASL reply");
        return;
    }
    if (h.err != 0) {
        tb__log(c, TB_LOG_ERROR, "SASL login as %s refused: %s", c->o.sasl_user,
                tb_strerror(h.err));
        tb__terminate(c, TB_SESSION_AUTH_FAILED, TB_EAUTHFAILED);
        return;
    }
    rv = sasl_client_step(s->conn, in.token.ptr, (unsigned)in.token.len, NULL,
                          &out, &outlen);
    if (rv == SASL_CONTINUE) {
        send_token(c, out, outlen); /* written once this frame is handled */
        return;
    }
    if (rv != SASL_OK) {
        tb__log(c, TB_LOG_ERROR, "SASL login as %s failed: %s", c->o.sasl_user,
                sasl_errdetail(s->conn));
        tb__terminate(c, TB_SESSION_AUTH_FAILED, TB_EAUTHFAILED);
        return;
    }
    tb__log(c, TB_LOG_INFO, "SASL login as %s", c->o.sasl_user);
    tb__sasl_end(c);
    tb__session_open(c);
}

void tb__sasl_end(struct tb_client *c)
{
    struct tb__sasl *s = c->sasl;

    if (s == NULL)
        return;
    c->sasl = NULL;
    if (s->conn != NULL)
        sasl_dispose(&s->conn);
    if (s->secret != NULL) {
        memset(s->secret->data, 0, s->secret->len);
        tb__free(s->secret);
    }
    tb__free(s);
}
