/* An OpenSSL context from ZooKeeper's TLS keys (tls_ctx.h).  A JKS store
 * cannot be read here, and the message says how to convert it. */
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
#include "server/net/tls_ctx.h"

const char *tls_why(char *buf, size_t n)
{
    unsigned long e = ERR_peek_last_error();

    if (e == 0)
        snprintf(buf, n, "no reason given");
    else
        ERR_error_string_n(e, buf, n);
    ERR_clear_error();
    return buf;
}

static void on_store_changed(uv_fs_poll_t *h, int status, const uv_stat_t *prev,
                             const uv_stat_t *curr)
{
    struct tls_watch *w = h->data;

    (void)prev;
    (void)curr;
    if (status == 0) /* not while the file is missing: at its return */
        w->cb(w->data);
}

void tls_stores_watch(uv_loop_t *loop, struct tls_watch *w,
                      const struct tls_keys *k, void (*cb)(void *data),
                      void *data)
{
    const char *path[2] = {k->key_store, k->trust_store};
    int i;

    w->cb = cb;
    w->data = data;
    for (i = 0; i < 2; i++) {
        if (path[i] == NULL || uv_fs_poll_init(loop, &w->stores[i]) != 0)
            continue;
        w->stores[i].data = w;
        if (uv_fs_poll_start(&w->stores[i], on_store_changed, path[i],
                             1000) != 0)
            uv_close((uv_handle_t *)&w->stores[i], NULL);
    }
}

void tls_stores_unwatch(struct tls_watch *w)
{
    int i;

    for (i = 0; i < 2; i++)
        if (uv_is_active((uv_handle_t *)&w->stores[i]))
            uv_close((uv_handle_t *)&w->stores[i], NULL);
}

/* Logs why the store at `path` cannot be used; TB_EINVAL. */
static int store_failed(const struct tls_keys *k, const char *what,
                        const char *path)
{
    char why[256];

    tls_why(why, sizeof why);
    tb_log(TB_LOG_ERROR, "%s.%s.location %s cannot be used: %s%s", k->prefix,
           what, path, why,
           strstr(why, "mac verify failure") || strstr(why, "bad decrypt")
               ? " (a wrong password?)"
               : "");
    return TB_EINVAL;
}

enum store_kind { STORE_PEM, STORE_PKCS12 };

/* The store's kind, from its *.type or else its file name, as
 * ZooKeeper's KeyStoreFileType tells it. */
static int store_kind(const struct tls_keys *k, const char *what,
                      const char *type, const char *path,
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
                   "%s.%s.location %s: cannot tell its type "
                   "from its name; set %s.%s.type to PKCS12 or PEM",
                   k->prefix, what, path, k->prefix, what);
            return TB_EINVAL;
        }
    }
    if (strcasecmp(type, "PEM") == 0)
        *kind = STORE_PEM;
    else if (strcasecmp(type, "PKCS12") == 0)
        *kind = STORE_PKCS12;
    else {
        tb_log(TB_LOG_ERROR,
               "%s.%s.location %s: %s stores cannot be read "
               "here, only PKCS12 and PEM (keytool -importkeystore "
               "-srckeystore %s -destkeystore NEW.p12 -deststoretype PKCS12 "
               "converts it)",
               k->prefix, what, path, type, path);
        return TB_EINVAL;
    }
    return 0;
}

/* The store's password: *.passwordPath's file, trimmed as Java trims it,
 * wins over *.password.  Returns a string to free, or NULL. */
static char *store_password(const struct tls_keys *k, const char *what,
                            const char *password, const char *path, int *err)
{
    char buf[1024], *p;
    size_t n;
    FILE *f;

    *err = 0;
    if (path == NULL)
        return strdup(password != NULL ? password : "");
    if ((f = fopen(path, "r")) == NULL) {
        tb_log(TB_LOG_ERROR, "%s.%s.passwordPath %s: %s", k->prefix, what,
               path, strerror(errno));
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

static int load_key_store(SSL_CTX *ctx, const struct tls_keys *k,
                          const char *password)
{
    const char *path = k->key_store;
    STACK_OF(X509) *chain = NULL;
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    enum store_kind kind;
    int ok;

    if (store_kind(k, "keyStore", k->key_type, path, &kind) != 0)
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
               : store_failed(k, "keyStore", path);
}

/* The CAs whose peers are trusted: the trust store's certificates, or
 * the system's when there is none (Java's would be its cacerts).  Each is
 * an anchor, as Java's PKIX takes every certificate of a trust store: an
 * intermediate CA alone, or a peer's own certificate, is trusted without
 * the root above it (OpenSSL by default wants a chain up to a self-signed
 * root). */
static int load_trust_store(SSL_CTX *ctx, const struct tls_keys *k,
                            const char *password)
{
    const char *path = k->trust_store;
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    STACK_OF(X509) *certs = NULL;
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    enum store_kind kind;
    int i, ok;

    X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN);
    if (path == NULL)
        return SSL_CTX_set_default_verify_paths(ctx) == 1
                   ? 0
                   : store_failed(k, "trustStore", "(the system's)");
    if (store_kind(k, "trustStore", k->trust_type, path, &kind) != 0)
        return TB_EINVAL;
    if (kind == STORE_PEM)
        return SSL_CTX_load_verify_locations(ctx, path, NULL) == 1
                   ? 0
                   : store_failed(k, "trustStore", path);
    ok = read_pkcs12(path, password, &key, &cert, &certs) == 0 &&
         (cert != NULL || sk_X509_num(certs) > 0);
    if (ok && cert != NULL)
        ok = X509_STORE_add_cert(store, cert) == 1;
    for (i = 0; ok && i < sk_X509_num(certs); i++)
        ok = X509_STORE_add_cert(store, sk_X509_value(certs, i)) == 1;
    EVP_PKEY_free(key);
    X509_free(cert);
    sk_X509_pop_free(certs, X509_free);
    return ok ? 0 : store_failed(k, "trustStore", path);
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

/* *.enabledProtocols, else *.protocol alone as ZooKeeper enables it,
 * else TLS 1.2 and 1.3. */
static int set_versions(SSL_CTX *ctx, const struct tls_keys *k)
{
    const char *list = k->protocols ? k->protocols : k->protocol;
    int v, lo = TLS1_3_VERSION, hi = TLS1_2_VERSION;
    struct tb_str it;
    char why[256];

    if (list == NULL)
        lo = TLS1_2_VERSION, hi = TLS1_3_VERSION;
    while (tb_config_list_next(&list, &it)) {
        if ((v = version_of(it.ptr, it.len)) < 0) {
            tb_log(TB_LOG_ERROR,
                   "%s.%s: \"%.*s\" is not offered here (TLSv1.2 "
                   "and TLSv1.3 are)",
                   k->prefix, k->protocols ? "enabledProtocols" : "protocol",
                   (int)it.len, it.ptr);
            return TB_EINVAL;
        }
        lo = v == 0 ? TLS1_2_VERSION : v < lo ? v : lo;
        hi = v == 0 ? TLS1_3_VERSION : v > hi ? v : hi;
    }
    if (SSL_CTX_set_min_proto_version(ctx, lo) != 1 ||
        SSL_CTX_set_max_proto_version(ctx, hi) != 1) {
        tb_log(TB_LOG_ERROR, "TLS: cannot set the versions: %s",
               tls_why(why, sizeof why));
        return TB_EINVAL;
    }
    return 0;
}

/* *.ciphersuites names suites as Java (and the IANA) does; OpenSSL has
 * names of its own for those before TLS 1.3, and another list for 1.3. */
static int set_ciphers(SSL_CTX *ctx, const struct tls_keys *k)
{
    STACK_OF(SSL_CIPHER) *all = SSL_CTX_get_ciphers(ctx);
    const char *list = k->ciphersuites;
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
                   "%s.ciphersuites: \"%.*s\" is not offered "
                   "here",
                   k->prefix, (int)it.len, it.ptr);
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
        tb_log(TB_LOG_ERROR, "%s.ciphersuites: cannot be set: %s", k->prefix,
               tls_why(why, sizeof why));
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
SSL_CTX *tls_ctx_new(const SSL_METHOD *method, const struct tls_keys *k)
{
    SSL_CTX *ctx = SSL_CTX_new(method);
    char *kpw = NULL, *tpw = NULL, why[256];
    int rv, err;

    if (ctx == NULL) {
        tb_log(TB_LOG_ERROR, "TLS: no context: %s", tls_why(why, sizeof why));
        return NULL;
    }
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    if ((kpw = store_password(k, "keyStore", k->key_password,
                              k->key_password_path, &err)) == NULL ||
        (tpw = store_password(k, "trustStore", k->trust_password,
                              k->trust_password_path, &err)) == NULL)
        rv = err != 0 ? err : TB_ENOMEM;
    else if ((rv = load_key_store(ctx, k, kpw)) == 0 &&
             (rv = load_trust_store(ctx, k, tpw)) == 0 &&
             (rv = set_versions(ctx, k)) == 0)
        rv = set_ciphers(ctx, k);
    if (kpw != NULL)
        OPENSSL_clear_free(kpw, strlen(kpw));
    if (tpw != NULL)
        OPENSSL_clear_free(tpw, strlen(tpw));
    if (rv != 0) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

BIO *tls_bio_renewed(BIO *b)
{
    BUF_MEM *m = NULL;

    if (BIO_ctrl_pending(b) != 0 || BIO_get_mem_ptr(b, &m) <= 0 || m == NULL ||
        m->max <= TLS_BIO_KEEP)
        return NULL;
    return BIO_new(BIO_s_mem());
}
