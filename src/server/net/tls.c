/* TLS on the secure client port (secureClientPort), with OpenSSL over
 * memory BIOs, so that a connection's bytes keep their one path through
 * libuv (conn.c): the ciphertext a read brings goes into the SSL and the
 * plaintext it yields into the connection's input; the replies of a turn
 * are encrypted together just before they are written.
 *
 * The stores are named and typed by ZooKeeper's ssl.* keys and read as its
 * Java reads them, PKCS12 or PEM (a JKS store cannot be read here, and
 * start-up says so).  A client's certificate gives the connection the id
 * x509:<its subject, RFC 2253>, as ZooKeeper's X509AuthenticationProvider
 * does; the subject named by X509AuthenticationProvider.superUser is the
 * super user. */
#include <errno.h>
#include <openssl/err.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/config/config.h"
#include "server/logging/log.h"
#include "server/server.h"

#define TLS_RECORD 16384 /* the most plaintext one record carries */

struct tls_conn {
    SSL *ssl;
    BIO *net_in;         /* ciphertext from the peer, for the SSL */
    BIO *net_out;        /* ciphertext from the SSL, for the peer */
    struct tb_wbuf wire; /* ... taken out of net_out, to be written */
    int identified;      /* the handshake ended and gave its id */
};

/* OpenSSL's reason for the last failure, its queue emptied. */
static const char *ossl_why(char *buf, size_t n)
{
    unsigned long e = ERR_peek_last_error();

    if (e == 0)
        snprintf(buf, n, "no reason given");
    else
        ERR_error_string_n(e, buf, n);
    ERR_clear_error();
    return buf;
}

/* Logs why the store at `path` cannot be used; TB_EINVAL. */
static int store_failed(const char *what, const char *path)
{
    char why[256];

    ossl_why(why, sizeof why);
    tb_log(TB_LOG_ERROR, "ssl.%s.location %s cannot be used: %s%s", what, path,
           why,
           strstr(why, "mac verify failure") || strstr(why, "bad decrypt")
               ? " (a wrong password?)"
               : "");
    return TB_EINVAL;
}

enum store_kind { STORE_PEM, STORE_PKCS12 };

/* The store's kind, from its ssl.*.type or else its file name, as
 * ZooKeeper's KeyStoreFileType tells it. */
static int store_kind(const char *what, const char *type, const char *path,
                      enum store_kind *kind)
{
    const char *ext = strrchr(path, '.');

    if (type == NULL) {
        type = ext == NULL                    ? ""
               : strcasecmp(ext, ".pem") == 0 ? "PEM"
               : strcasecmp(ext, ".p12") == 0 || strcasecmp(ext, ".pfx") == 0
                   ? "PKCS12"
               : strcasecmp(ext, ".jks") == 0   ? "JKS"
               : strcasecmp(ext, ".bcfks") == 0 ? "BCFKS"
                                                : "";
        if (*type == '\0') {
            tb_log(TB_LOG_ERROR,
                   "ssl.%s.location %s: cannot tell its type "
                   "from its name; set ssl.%s.type to PKCS12 or PEM",
                   what, path, what);
            return TB_EINVAL;
        }
    }
    if (strcasecmp(type, "PEM") == 0)
        *kind = STORE_PEM;
    else if (strcasecmp(type, "PKCS12") == 0)
        *kind = STORE_PKCS12;
    else {
        tb_log(TB_LOG_ERROR,
               "ssl.%s.location %s: %s stores cannot be read "
               "here, only PKCS12 and PEM (keytool -importkeystore "
               "-srckeystore %s -destkeystore NEW.p12 -deststoretype PKCS12 "
               "converts it)",
               what, path, type, path);
        return TB_EINVAL;
    }
    return 0;
}

/* The store's password: ssl.*.passwordPath's file, trimmed as Java trims
 * it, wins over ssl.*.password.  Returns a string to free, or NULL. */
static char *store_password(const char *what, const char *password,
                            const char *path, int *err)
{
    char buf[1024], *p;
    size_t n;
    FILE *f;

    *err = 0;
    if (path == NULL)
        return strdup(password != NULL ? password : "");
    if ((f = fopen(path, "r")) == NULL) {
        tb_log(TB_LOG_ERROR, "ssl.%s.passwordPath %s: %s", what, path,
               strerror(errno));
        *err = TB_EIO;
        return NULL;
    }
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (p = buf; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'; p++)
        ;
    while (n > 0 && strchr(" \t\r\n", buf[n - 1]) != NULL)
        buf[--n] = '\0';
    p = strdup(p);
    OPENSSL_cleanse(buf, sizeof buf);
    return p;
}

static int read_pkcs12(const char *path, const char *password, EVP_PKEY **key,
                       X509 **cert, STACK_OF(X509) * *chain)
{
    BIO *b = BIO_new_file(path, "rb");
    PKCS12 *p12 = b != NULL ? d2i_PKCS12_bio(b, NULL) : NULL;
    int ok = p12 != NULL && PKCS12_parse(p12, password, key, cert, chain);

    PKCS12_free(p12);
    BIO_free(b);
    return ok ? 0 : TB_EINVAL;
}

static int load_key_store(SSL_CTX *ctx, const struct tb_config *cfg,
                          const char *password)
{
    const char *path = cfg->tls.key_store;
    STACK_OF(X509) *chain = NULL;
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    enum store_kind kind;
    int ok;

    if (store_kind("keyStore", cfg->tls.key_type, path, &kind) != 0)
        return TB_EINVAL;
    if (kind == STORE_PKCS12) {
        ok = read_pkcs12(path, password, &key, &cert, &chain) == 0 &&
             key != NULL && cert != NULL &&
             SSL_CTX_use_cert_and_key(ctx, cert, key, chain, 1) == 1;
        EVP_PKEY_free(key);
        X509_free(cert);
        sk_X509_pop_free(chain, X509_free);
    } else {
        SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)password);
        ok = SSL_CTX_use_certificate_chain_file(ctx, path) == 1 &&
             SSL_CTX_use_PrivateKey_file(ctx, path, SSL_FILETYPE_PEM) == 1;
        SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
    }
    return ok && SSL_CTX_check_private_key(ctx) == 1
               ? 0
               : store_failed("keyStore", path);
}

/* The CAs whose clients are trusted: the trust store's certificates, or
 * the system's when there is none (Java's would be its cacerts). */
static int load_trust_store(SSL_CTX *ctx, const struct tb_config *cfg,
                            const char *password)
{
    const char *path = cfg->tls.trust_store;
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    STACK_OF(X509) *certs = NULL;
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    enum store_kind kind;
    int i, ok;

    if (path == NULL)
        return SSL_CTX_set_default_verify_paths(ctx) == 1
                   ? 0
                   : store_failed("trustStore", "(the system's)");
    if (store_kind("trustStore", cfg->tls.trust_type, path, &kind) != 0)
        return TB_EINVAL;
    if (kind == STORE_PEM)
        return SSL_CTX_load_verify_locations(ctx, path, NULL) == 1
                   ? 0
                   : store_failed("trustStore", path);
    ok = read_pkcs12(path, password, &key, &cert, &certs) == 0 &&
         (cert != NULL || sk_X509_num(certs) > 0);
    if (ok && cert != NULL)
        ok = X509_STORE_add_cert(store, cert) == 1;
    for (i = 0; ok && i < sk_X509_num(certs); i++)
        ok = X509_STORE_add_cert(store, sk_X509_value(certs, i)) == 1;
    EVP_PKEY_free(key);
    X509_free(cert);
    sk_X509_pop_free(certs, X509_free);
    return ok ? 0 : store_failed("trustStore", path);
}

static int version_of(const char *name, size_t n)
{
    if (n == 7 && strncasecmp(name, "TLSv1.2", n) == 0)
        return TLS1_2_VERSION;
    if (n == 7 && strncasecmp(name, "TLSv1.3", n) == 0)
        return TLS1_3_VERSION;
    if (n == 3 && strncasecmp(name, "TLS", n) == 0)
        return 0; /* Java's "any" */
    return -1;
}

/* ssl.enabledProtocols, else ssl.protocol alone as ZooKeeper enables it,
 * else TLS 1.2 and 1.3. */
static int set_versions(SSL_CTX *ctx, const struct tb_config *cfg)
{
    const char *list =
        cfg->tls.protocols ? cfg->tls.protocols : cfg->tls.protocol;
    int v, lo = TLS1_3_VERSION, hi = TLS1_2_VERSION;
    struct tb_str it;
    char why[256];

    if (list == NULL)
        lo = TLS1_2_VERSION, hi = TLS1_3_VERSION;
    while (tb_config_list_next(&list, &it)) {
        if ((v = version_of(it.ptr, it.len)) < 0) {
            tb_log(TB_LOG_ERROR,
                   "%s: \"%.*s\" is not offered here (TLSv1.2 "
                   "and TLSv1.3 are)",
                   cfg->tls.protocols ? "ssl.enabledProtocols" : "ssl.protocol",
                   (int)it.len, it.ptr);
            return TB_EINVAL;
        }
        lo = v == 0 ? TLS1_2_VERSION : v < lo ? v : lo;
        hi = v == 0 ? TLS1_3_VERSION : v > hi ? v : hi;
    }
    if (SSL_CTX_set_min_proto_version(ctx, lo) != 1 ||
        SSL_CTX_set_max_proto_version(ctx, hi) != 1) {
        tb_log(TB_LOG_ERROR, "TLS: cannot set the versions: %s",
               ossl_why(why, sizeof why));
        return TB_EINVAL;
    }
    return 0;
}

/* ssl.ciphersuites names suites as Java (and the IANA) does; OpenSSL has
 * names of its own for those before TLS 1.3, and another list for 1.3. */
static int set_ciphers(SSL_CTX *ctx, const char *list)
{
    STACK_OF(SSL_CIPHER) *all = SSL_CTX_get_ciphers(ctx);
    struct tb_wbuf v12, v13;
    const SSL_CIPHER *c = NULL;
    const char *std;
    struct tb_str it;
    char why[256];
    int i, rv = 0;

    if (list == NULL)
        return 0;
    tb_wbuf_init(&v12);
    tb_wbuf_init(&v13);
    while (tb_config_list_next(&list, &it)) {
        for (i = 0; i < sk_SSL_CIPHER_num(all); i++) {
            c = sk_SSL_CIPHER_value(all, i);
            std = SSL_CIPHER_standard_name(c);
            if (std != NULL && strlen(std) == it.len &&
                memcmp(std, it.ptr, it.len) == 0)
                break;
        }
        if (i == sk_SSL_CIPHER_num(all)) {
            tb_log(TB_LOG_ERROR,
                   "ssl.ciphersuites: \"%.*s\" is not offered "
                   "here",
                   (int)it.len, it.ptr);
            rv = TB_EINVAL;
            goto out;
        }
        if (SSL_CIPHER_get_protocol_id(c) >> 8 == 0x13)
            tb_wbuf_printf(&v13, "%s%s", v13.len ? ":" : "",
                           SSL_CIPHER_standard_name(c));
        else
            tb_wbuf_printf(&v12, "%s%s", v12.len ? ":" : "",
                           SSL_CIPHER_get_name(c));
    }
    tb_wbuf_put(&v12, "", 1);
    tb_wbuf_put(&v13, "", 1);
    if (v12.oom || v13.oom ||
        SSL_CTX_set_ciphersuites(ctx, (char *)v13.base) != 1 ||
        (v12.len > 1 && SSL_CTX_set_cipher_list(ctx, (char *)v12.base) != 1)) {
        tb_log(TB_LOG_ERROR, "ssl.ciphersuites: cannot be set: %s",
               ossl_why(why, sizeof why));
        rv = TB_EINVAL;
    }
    /* Only suites of one version named: only that version is offered. */
    else if (v12.len == 1)
        SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    else if (v13.len == 1)
        SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
out:
    tb_wbuf_free(&v12);
    tb_wbuf_free(&v13);
    return rv;
}

/* Each step logs why it failed. */
int tls_server_init(struct tbd *s)
{
    const struct tb_config *cfg = s->cfg;
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    char *kpw = NULL, *tpw = NULL, why[256];
    int rv, err;

    if (ctx == NULL) {
        tb_log(TB_LOG_ERROR, "TLS: no context: %s", ossl_why(why, sizeof why));
        return TB_ENOMEM;
    }
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    /* A reconnecting client makes a full handshake, as with ZooKeeper:
     * nothing to remember per client, and no tickets to send. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_verify(ctx,
                       cfg->tls.client_auth == TB_TLS_NONE ? SSL_VERIFY_NONE
                       : cfg->tls.client_auth == TB_TLS_WANT
                           ? SSL_VERIFY_PEER
                           : SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       NULL);
    if ((kpw = store_password("keyStore", cfg->tls.key_password,
                              cfg->tls.key_password_path, &err)) == NULL ||
        (tpw = store_password("trustStore", cfg->tls.trust_password,
                              cfg->tls.trust_password_path, &err)) == NULL)
        rv = err != 0 ? err : TB_ENOMEM;
    else if ((rv = load_key_store(ctx, cfg, kpw)) == 0 &&
             (rv = load_trust_store(ctx, cfg, tpw)) == 0 &&
             (rv = set_versions(ctx, cfg)) == 0)
        rv = set_ciphers(ctx, cfg->tls.ciphersuites);
    if (kpw != NULL)
        OPENSSL_clear_free(kpw, strlen(kpw));
    if (tpw != NULL)
        OPENSSL_clear_free(tpw, strlen(tpw));
    if (rv != 0) {
        SSL_CTX_free(ctx);
        return rv;
    }
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

static void on_store_changed(uv_fs_poll_t *h, int status, const uv_stat_t *prev,
                             const uv_stat_t *curr)
{
    (void)prev;
    (void)curr;
    if (status == 0) /* not while the file is missing: at its return */
        tls_server_reload(h->data);
}

/* A stat of each file a second, off the loop, as ZooKeeper watches them:
 * it sees a file written again, renamed over, or a link turned to another
 * file, as certificate tools renew them.  A store caught half written is
 * refused, and read again at its next change. */
void tls_server_watch(struct tbd *s)
{
    const char *path[2] = {s->cfg->tls.key_store, s->cfg->tls.trust_store};
    int i;

    for (i = 0; i < 2; i++) {
        if (path[i] == NULL || uv_fs_poll_init(s->loop, &s->tls_stores[i]))
            continue;
        s->tls_stores[i].data = s;
        if (uv_fs_poll_start(&s->tls_stores[i], on_store_changed, path[i],
                             1000) != 0)
            uv_close((uv_handle_t *)&s->tls_stores[i], NULL);
    }
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

void tls_conn_free(struct conn *c)
{
    if (c->tls == NULL)
        return;
    if (!c->tls->identified)
        c->srv->tls_handshaking--;
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
    /* Java's X500Principal.getName(): RFC 2253, non-ASCII as UTF-8. */
    if (X509_NAME_print_ex(b, X509_get_subject_name(cert), 0,
                           XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) >= 0) {
        BIO_get_mem_ptr(b, &m);
        dn = (struct tb_str){m->data, m->length};
        auth_add_id(c, (struct tb_id){TB_STR("x509"), dn});
        if (super != NULL && strlen(super) == dn.len &&
            memcmp(super, dn.ptr, dn.len) == 0)
            auth_make_super(c);
    }
    BIO_free(b);
}

int tls_conn_input(struct conn *c, const uint8_t *p, size_t n)
{
    struct tls_conn *t = c->tls;
    char why[256];
    uint8_t *in;
    size_t cap;
    int k, e;

    if (BIO_write(t->net_in, p, (int)n) != (int)n)
        return TB_ENOMEM;
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
        k = SSL_read(t->ssl, c->in + c->in_len, (int)(c->in_cap - c->in_len));
        if (k <= 0)
            break;
        c->in_len += (size_t)k;
    }
    e = SSL_get_error(t->ssl, k);
    if (!t->identified && SSL_is_init_finished(t->ssl)) {
        t->identified = 1;
        c->srv->tls_handshaking--;
        identify(c);
    }
    if (e == SSL_ERROR_WANT_READ)
        return 0;
    if (e == SSL_ERROR_ZERO_RETURN) /* the client's close_notify */
        return TB_EIO;
    if (!t->identified)
        c->srv->tls_failed++;
    auth_log_refusal(c, "TLS %s: %s",
                     t->identified ? "failed"
                                   : "handshake "
                                     "failed",
                     ossl_why(why, sizeof why));
    return TB_EIO;
}

size_t tls_conn_unsent(const struct conn *c)
{
    return c->tls->wire.len + BIO_ctrl_pending(c->tls->net_out);
}

struct tb_wbuf *tls_conn_output(struct conn *c)
{
    struct tls_conn *t = c->tls;
    size_t n;

    /* A memory BIO takes any length: the whole of it is written at once. */
    if (c->out.len > 0 && SSL_is_init_finished(t->ssl)) {
        if (SSL_write(t->ssl, c->out.base, (int)c->out.len) <= 0)
            return NULL;
        c->out.len = 0;
    }
    n = BIO_ctrl_pending(t->net_out);
    if (n > 0 && tb_wbuf_reserve(&t->wire, n) == 0 &&
        BIO_read(t->net_out, t->wire.base + t->wire.len, (int)n) == (int)n)
        t->wire.len += n;
    return BIO_ctrl_pending(t->net_out) == 0 ? &t->wire : NULL;
}
