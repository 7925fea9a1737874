/* TLS on the secure client port (secureClientPort), with OpenSSL over
 * memory BIOs, so that a connection's bytes keep their one path through
 * libuv (conn.c): the ciphertext a read brings goes into the SSL and the
 * plaintext it yields into the connection's input; the replies of a turn
 * are encrypted together just before they are written.
 *
 * The stores are named and typed by ZooKeeper's ssl.* keys and read as its
 * Java reads them, PKCS12 or PEM (tls_ctx.c, shared with the links between
 * the members of an ensemble).  A client's certificate gives the
 * connection the id x509:<its subject, as Java writes it (x509_id.c)>, as
 * ZooKeeper's X509AuthenticationProvider does; the subject named by
 * X509AuthenticationProvider.superUser is the super user. */
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/config.h"
#include "server/logging/log.h"
#include "server/net/net.h"
#include "server/net/tls_ctx.h"
#include "server/proc/proc.h"
#include "server/server.h"

#define TLS_RECORD 16384 /* the most plaintext one record carries */

struct tls_conn {
    SSL *ssl;
    BIO *net_in;         /* ciphertext from the peer, for the SSL */
    BIO *net_out;        /* ciphertext from the SSL, for the peer */
    struct tb_wbuf wire; /* ... taken out of net_out, to be written */
    int identified;      /* the handshake ended and gave its id */
};

static struct tls_keys keys_of(const struct tb_config *cfg)
{
    return (struct tls_keys){
        "ssl",
        cfg->tls.key_store,
        cfg->tls.key_password,
        cfg->tls.key_password_path,
        cfg->tls.key_type,
        cfg->tls.trust_store,
        cfg->tls.trust_password,
        cfg->tls.trust_password_path,
        cfg->tls.trust_type,
        cfg->tls.protocol,
        cfg->tls.protocols,
        cfg->tls.ciphersuites,
    };
}

/* The context from ssl.* (tls_ctx.c reads the stores, logging why one
 * cannot be used); how clients are verified is ssl.clientAuth's. */
int tls_server_init(struct tbd *s)
{
    const struct tb_config *cfg = s->cfg;
    const struct tls_keys k = keys_of(cfg);
    SSL_CTX *ctx = tls_ctx_new(TLS_server_method(), &k);

    if (ctx == NULL)
        return TB_EINVAL;
    /* A reconnecting client makes a full handshake, as with ZooKeeper:
     * nothing to remember per client, and no tickets to send.  The number
     * of tickets is TLS 1.3's alone: TLS 1.2 sends one unless told not to. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_verify(ctx,
                       cfg->tls.client_auth == TB_TLS_NONE ? SSL_VERIFY_NONE
                       : cfg->tls.client_auth == TB_TLS_WANT
                           ? SSL_VERIFY_PEER
                           : SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       NULL);
    s->tls_ctx = ctx;
    return 0;
}

int tls_server_reload(struct tbd *s)
{
    SSL_CTX *old = s->tls_ctx;

    s->tls_ctx = NULL;
    if (tls_server_init(s) != 0) {
        s->tls_ctx = old;
        tb_log(TB_LOG_WARN, "TLS: the certificates in use stay");
        return TB_EINVAL;
    }
    SSL_CTX_free(old); /* each open connection holds a reference */
    tb_log(TB_LOG_INFO, "TLS: the key and trust stores were read again");
    return 0;
}

static void stores_changed(void *s)
{
    tls_server_reload(s);
}

void tls_server_watch(struct tbd *s)
{
    const struct tls_keys k = keys_of(s->cfg);

    tls_stores_watch(s->loop, &s->tls_stores, &k, stores_changed, s);
}

void tls_server_free(struct tbd *s)
{
    SSL_CTX_free(s->tls_ctx);
    s->tls_ctx = NULL;
}

int tls_conn_new(struct conn *c)
{
    struct tls_conn *t = calloc(1, sizeof *t);

    if (t == NULL || (t->ssl = SSL_new(c->srv->tls_ctx)) == NULL ||
        (t->net_in = BIO_new(BIO_s_mem())) == NULL ||
        (t->net_out = BIO_new(BIO_s_mem())) == NULL) {
        if (t != NULL) {
            BIO_free(t->net_in);
            SSL_free(t->ssl);
            free(t);
        }
        return TB_ENOMEM;
    }
    /* An empty memory BIO asks to be retried rather than reporting EOF. */
    BIO_set_mem_eof_return(t->net_in, -1);
    SSL_set_bio(t->ssl, t->net_in, t->net_out);
    SSL_set_accept_state(t->ssl);
    tb_wbuf_init(&t->wire);
    c->tls = t;
    c->srv->tls_handshaking++;
    return 0;
}

/* A connection gone before its handshake ended counts as a failed one,
 * whatever ended it (an error, the client closing, the 10 s timeout), as
 * ZooKeeper's Netty handler counts it. */
void tls_conn_free(struct conn *c)
{
    if (c->tls == NULL)
        return;
    if (!c->tls->identified) {
        c->srv->tls_handshaking--;
        c->srv->tls_failed++;
    }
    SSL_free(c->tls->ssl); /* and its BIOs */
    tb_wbuf_free(&c->tls->wire);
    free(c->tls);
    c->tls = NULL;
}

/* The id of the client's certificate, and super if it is superUser's. */
static void identify(struct conn *c)
{
    X509 *cert = SSL_get0_peer_certificate(c->tls->ssl);
    const char *super = c->srv->cfg->tls.super_user;
    BIO *b;
    BUF_MEM *m;
    struct tb_str dn;

    if (cert == NULL || (b = BIO_new(BIO_s_mem())) == NULL)
        return;
    if (tls_subject_id(X509_get_subject_name(cert), b) == 0) {
        BIO_get_mem_ptr(b, &m);
        /* An empty subject (the name in the SAN alone) is "", not null:
         * whoAmI, and an auth ACL's expansion, need a string. */
        dn = (struct tb_str){m->data ? m->data : "", m->length};
        auth_add_id(&c->client, (struct tb_id){TB_STR("x509"), dn});
        if (super != NULL && strlen(super) == dn.len &&
            memcmp(super, dn.ptr, dn.len) == 0)
            auth_make_super(&c->client);
    }
    BIO_free(b);
}

/* A connection TLS refused (or broke once made): tagged "tls", so that a
 * log shipper tells it from a refused login ("auth"), whose line rate
 * (a line a second, s->auth_log) it shares, as it did when it was one. */
static void log_refusal(struct conn *c, const char *what, const char *why)
{
    struct tbd *s = c->srv;

    if (!tb_log_due(&s->auth_log, tbd_now_ms(s)))
        return;
    tb_log_rated_fields(&s->auth_log, TB_LOG_WARN,
                        TB_LOG_FIELDS(TB_LOG_STR("peer", c->peer),
                                      TB_LOG_HEX("session",
                                                 c->client.session_id),
                                      TB_LOG_STR("refused", "tls")),
                        "session 0x%llx from %s: TLS %s: %s",
                        (unsigned long long)c->client.session_id, c->peer,
                        what, why);
}

int tls_conn_input(struct conn *c, const uint8_t *p, size_t n)
{
    struct tls_conn *t = c->tls;
    char why[256];
    uint8_t *in;
    size_t cap, got;
    BIO *b;
    int k, e;

    if (BIO_write(t->net_in, p, (int)n) != (int)n)
        return TB_ENOMEM;
    ERR_clear_error(); /* SSL_get_error reads the queue: ours alone */
    for (;;) {
        if (c->in_cap - c->in_len < TLS_RECORD) {
            cap = c->in_cap ? c->in_cap * 2 : 2 * TLS_RECORD;
            /* Out of the server's shared buffer (conn.c) into one of its
             * own: what one read decrypts can outgrow it. */
            in = c->in == c->srv->in ? malloc(cap) : realloc(c->in, cap);
            if (in == NULL)
                return TB_ENOMEM;
            if (c->in == c->srv->in)
                memcpy(in, c->in, c->in_len);
            c->in = in;
            c->in_cap = cap;
        }
        /* the _ex forms take a size_t: a frame of 2 GiB or more, which
         * jute.maxbuffer allows, would be a negative int */
        k = SSL_read_ex(t->ssl, c->in + c->in_len, c->in_cap - c->in_len, &got);
        if (k <= 0)
            break;
        c->in_len += got;
    }
    e = SSL_get_error(t->ssl, k);
    /* One large request must not leave its buffer behind (tls_ctx.h), as
     * conn.c frees its own output buffer once drained. */
    if ((b = tls_bio_renewed(t->net_in)) != NULL) {
        BIO_set_mem_eof_return(b, -1); /* as tls_conn_new's */
        SSL_set0_rbio(t->ssl, b);      /* frees the old one */
        t->net_in = b;
    }
    if (!t->identified && SSL_is_init_finished(t->ssl)) {
        t->identified = 1;
        c->srv->tls_handshaking--;
        identify(c);
    }
    if (e == SSL_ERROR_WANT_READ)
        return 0;
    if (e == SSL_ERROR_ZERO_RETURN) /* the client's close_notify */
        return 1;
    log_refusal(c, t->identified ? "failed" : "handshake failed",
                tls_why(why, sizeof why));
    return TB_EIO;
}

size_t tls_conn_unsent(const struct conn *c)
{
    return c->tls->wire.len + BIO_ctrl_pending(c->tls->net_out);
}

struct tb_wbuf *tls_conn_output(struct conn *c)
{
    struct tls_conn *t = c->tls;
    size_t n, got;
    BIO *b;

    /* A memory BIO takes any length: the whole of it is written at once. */
    if (c->out.len > 0 && SSL_is_init_finished(t->ssl)) {
        if (SSL_write_ex(t->ssl, c->out.base, c->out.len, &got) <= 0)
            return NULL;
        c->out.len = 0;
    }
    n = BIO_ctrl_pending(t->net_out);
    if (n > 0 && tb_wbuf_reserve(&t->wire, n) == 0 &&
        BIO_read_ex(t->net_out, t->wire.base + t->wire.len, n, &got) == 1 &&
        got == n)
        t->wire.len += n;
    if (BIO_ctrl_pending(t->net_out) != 0)
        return NULL;
    if ((b = tls_bio_renewed(t->net_out)) != NULL) {
        SSL_set0_wbio(t->ssl, b); /* frees the old one */
        t->net_out = b;
    }
    return &t->wire;
}
