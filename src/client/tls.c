/* TLS on the connection (tb_options.tls), for ZooKeeper's secureClientPort,
 * with OpenSSL.
 *
 * The handle's context (SSL_CTX: the trust store, the client certificate)
 * is built by tb_client_init, so a missing or unusable file is an error
 * there and not a failed attempt on every reconnect.  Every TCP
 * connection then gets its own SSL, whose handshake runs in PH_TLS before
 * the ZooKeeper ConnectRequest; the connect timeout bounds both.  Files
 * are renewed under long-lived handles (cert-manager, certbot): before
 * each SSL, a file whose (mtime, size, inode) changed has the context
 * built again; if that fails the old one stays, logged once per change.
 *
 * SSL works on the non-blocking socket itself, through a small BIO that
 * sends with MSG_NOSIGNAL (OpenSSL's socket BIO write()s, and a peer that
 * went away would raise SIGPIPE in the application).  tb__tls_send and
 * tb__tls_recv behave as send and recv do for conn.c, with TB_* codes:
 * bytes moved, 0 (recv: the peer closed), TB_EAGAIN (wait for the events
 * tb__tls_events asks for), or an error whose text tb__tls_why gives.
 * Either call may need the other direction first: SSL_write can want the
 * socket readable (a renegotiation), SSL_read writable (a reply to a key
 * update); the flags below turn that into interest.
 *
 * OpenSSL allocates with its own allocator, not tb_heap. */
#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client.h"

/* One connection's TLS.  At all times: `ssl` owns its BIO on c->fd;
 * `fatal` once an SSL call failed for good (no close_notify then). */
struct tb__tls {
    SSL *ssl;
    int hs_events;        /* PH_TLS: what the handshake waits for */
    int write_wants_read; /* the last SSL_write wants a readable socket */
    int read_wants_write; /* the last SSL_read wants a writable socket */
    int established;
    int fatal;
    char why[192];
};

/* ---- the socket BIO ---- */

static pthread_once_t bio_once = PTHREAD_ONCE_INIT;
static BIO_METHOD *bio_method; /* set once, never changed */

static int bio_fd(BIO *b)
{
    return (int)(intptr_t)BIO_get_data(b);
}

static int bio_write(BIO *b, const char *p, int n)
{
    ssize_t r;

    BIO_clear_retry_flags(b);
    do
        r = send(bio_fd(b), p, (size_t)n, MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        BIO_set_retry_write(b);
    return (int)r;
}

static int bio_read(BIO *b, char *p, int n)
{
    ssize_t r;

    BIO_clear_retry_flags(b);
    do
        r = recv(bio_fd(b), p, (size_t)n, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        BIO_set_retry_read(b);
    return (int)r;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0; /* nothing is buffered here */
}

static void bio_init_method(void)
{
    BIO_METHOD *m =
        BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tumbler");

    if (m == NULL)
        return;
    if (!BIO_meth_set_write(m, bio_write) || !BIO_meth_set_read(m, bio_read) ||
        !BIO_meth_set_ctrl(m, bio_ctrl)) {
        BIO_meth_free(m);
        return;
    }
    bio_method = m;
}

/* ---- messages ---- */

/* The reason of the oldest queued OpenSSL error, and the verification's
 * own words when the certificate was refused; clears the queue. */
static void ossl_why(char *buf, size_t cap, const char *what, SSL *ssl)
{
    unsigned long e = ERR_peek_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    long v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;

    if (ssl != NULL && v != X509_V_OK &&
        ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED)
        snprintf(buf, cap, "%s: server certificate not accepted: %s", what,
                 X509_verify_cert_error_string(v));
    else
        snprintf(buf, cap, "%s: %s", what, r ? r : "failed");
    ERR_clear_error();
}

/* ---- the handle's context ---- */

/* The files the context is built from.  At all times: name[i] is NULL
 * (not configured) or the handle's copy; seen[i] is what stat() said
 * (zeroed if it failed) just before the last build was tried. */
struct tb__tls_files {
    char *name[3]; /* CA (NULL: the system's), certificate, key */
    struct stat seen[3];
};

/* Logs why `file` (`what`) could not be used: the system's reason if it
 * cannot be read, else OpenSSL's.  Returns TB_ETLS. */
static int file_error(struct tb_client *c, int reload, const char *what,
                      const char *file)
{
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;

    if (file != NULL && access(file, R_OK) != 0)
        r = strerror(errno);
    tb__log(c, reload ? TB_LOG_WARN : TB_LOG_ERROR,
            "TLS: cannot use %s %s: %s%s", what, file ? file : "(the system's)",
            r ? r : "unusable",
            reload ? "; going on with the files read before" : "");
    ERR_clear_error();
    return TB_ETLS;
}

static int load_files(struct tb_client *c, SSL_CTX *ctx, int reload)
{
    char **n = c->tls_files->name;
    const char *key = n[2] ? n[2] : n[1];
    int ok;

    if (n[0] != NULL)
        ok = SSL_CTX_load_verify_locations(ctx, n[0], NULL);
    else
        ok = SSL_CTX_set_default_verify_paths(ctx);
    if (!ok)
        return file_error(c, reload, "CA file", n[0]);
    if (n[1] == NULL)
        return 0;
    if (!SSL_CTX_use_certificate_chain_file(ctx, n[1]))
        return file_error(c, reload, "certificate file", n[1]);
    if (!SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) ||
        !SSL_CTX_check_private_key(ctx))
        return file_error(c, reload, "key file", key);
    return 0;
}

/* Records the files' stat() in `st`; returns 1 if it differs from the
 * last build's. */
static int files_changed(struct tb__tls_files *f, struct stat st[3])
{
    int i, changed = 0;

    for (i = 0; i < 3; i++) {
        if (f->name[i] == NULL || stat(f->name[i], &st[i]) != 0)
            memset(&st[i], 0, sizeof st[i]);
        changed |= st[i].st_ino != f->seen[i].st_ino ||
                   st[i].st_size != f->seen[i].st_size ||
                   st[i].st_mtim.tv_sec != f->seen[i].st_mtim.tv_sec ||
                   st[i].st_mtim.tv_nsec != f->seen[i].st_mtim.tv_nsec;
    }
    return changed;
}

/* A context from the files as they are now, or TB_ENOMEM / TB_ETLS
 * (logged: an error at init, a warning on `reload`). */
static int build_ctx(struct tb_client *c, int reload, SSL_CTX **out)
{
    SSL_CTX *ctx;
    int rv;

    ERR_clear_error();
    if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL)
        return TB_ENOMEM;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    /* The output buffer grows (moves) between a write that must be
     * retried and its retry, and is written a record at a time. */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if ((rv = load_files(c, ctx, reload)) != 0) {
        SSL_CTX_free(ctx);
        return rv;
    }
    *out = ctx;
    return 0;
}

static char *copy_name(const char *name, int *rv)
{
    char *s = name ? tb__strndup(name, strlen(name)) : NULL;

    if (name != NULL && s == NULL)
        *rv = TB_ENOMEM;
    return s;
}

int tb__tls_init(struct tb_client *c, const struct tb_options *o)
{
    struct tb__tls_files *f;
    int rv = 0;

    if (!o->tls)
        return o->tls_ca_file || o->tls_cert_file || o->tls_key_file ||
                       o->tls_no_verify_host
                   ? TB_EINVAL
                   : 0;
    if (o->tls_key_file != NULL && o->tls_cert_file == NULL)
        return TB_EINVAL;
    pthread_once(&bio_once, bio_init_method);
    if (bio_method == NULL)
        return TB_ENOMEM;
    if ((f = c->tls_files = tb__calloc(1, sizeof *f)) == NULL)
        return TB_ENOMEM;
    f->name[0] = copy_name(o->tls_ca_file, &rv);
    f->name[1] = copy_name(o->tls_cert_file, &rv);
    f->name[2] = copy_name(o->tls_key_file, &rv);
    if (rv != 0)
        return rv; /* the caller's tb__tls_free frees what was made */
    (void)files_changed(f, f->seen); /* before reading them */
    return build_ctx(c, 0, &c->tls_ctx);
}

/* A file changed since the context was built (a renewal): a context from
 * the files as they are now replaces it.  One that cannot be built (a
 * half-written file, a key that does not match) leaves the old one in
 * use, logged once: until a file changes again, it is not tried again. */
static void reload_if_changed(struct tb_client *c)
{
    struct stat now[3];
    SSL_CTX *ctx;

    if (!files_changed(c->tls_files, now))
        return;
    memcpy(c->tls_files->seen, now, sizeof now);
    if (build_ctx(c, 1, &ctx) != 0)
        return;
    tb__log(c, TB_LOG_INFO, "TLS: files changed, read them again");
    SSL_CTX_free(c->tls_ctx); /* an SSL still using it holds a reference */
    c->tls_ctx = ctx;
}

void tb__tls_free(struct tb_client *c)
{
    int i;

    SSL_CTX_free(c->tls_ctx); /* NULL is fine */
    c->tls_ctx = NULL;
    for (i = 0; c->tls_files != NULL && i < 3; i++)
        tb__free(c->tls_files->name[i]);
    tb__free(c->tls_files);
    c->tls_files = NULL;
}

/* ---- one connection ---- */

static int is_ip(const char *host)
{
    unsigned char a[16];

    return inet_pton(AF_INET, host, a) == 1 ||
           inet_pton(AF_INET6, host, a) == 1;
}

/* The server's certificate must name the host of the connection string:
 * an IP address as an IP SAN, a name as a DNS SAN (or CN), as Java's
 * client checks it.  A name also goes out as SNI. */
static int set_peer_name(struct tb_client *c, SSL *ssl, const char *host)
{
    X509_VERIFY_PARAM *p = SSL_get0_param(ssl);

    if (is_ip(host))
        return c->o.tls_no_verify_host ||
               X509_VERIFY_PARAM_set1_ip_asc(p, host);
    if (!SSL_set_tlsext_host_name(ssl, host))
        return 0;
    if (c->o.tls_no_verify_host)
        return 1;
    X509_VERIFY_PARAM_set_hostflags(p, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return X509_VERIFY_PARAM_set1_host(p, host, 0);
}

int tb__tls_start(struct tb_client *c)
{
    struct tb__tls *t;
    BIO *bio;

    reload_if_changed(c);
    if ((t = tb__calloc(1, sizeof *t)) == NULL)
        return TB_ENOMEM;
    ERR_clear_error();
    if ((t->ssl = SSL_new(c->tls_ctx)) == NULL ||
        (bio = BIO_new(bio_method)) == NULL) {
        SSL_free(t->ssl);
        tb__free(t);
        return TB_ENOMEM;
    }
    BIO_set_data(bio, (void *)(intptr_t)c->fd);
    BIO_set_init(bio, 1);
    SSL_set_bio(t->ssl, bio, bio);
    SSL_set_connect_state(t->ssl);
    t->hs_events = TB_EV_WRITE;
    c->tls = t;
    if (!set_peer_name(c, t->ssl, c->hosts[c->host_idx].name)) {
        /* c->tls stays, for its text, until the socket closes */
        ossl_why(t->why, sizeof t->why, "TLS: server name", NULL);
        t->fatal = 1;
        return TB_ETLS;
    }
    return 0;
}

/* Whether the queued error is the peer closing without close_notify,
 * which ZooKeeper's framing makes harmless: a cut frame is still seen. */
static int eof_error(void)
{
    unsigned long e = ERR_peek_error();

    return e == 0 || ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

/* What an SSL call's result means: TB_EAGAIN (with the events to wait
 * for in *ev), 0 for a closed connection, or TB_ETLS / TB_EIO. */
static int classify(struct tb__tls *t, int r, const char *what, int *ev)
{
    int e = SSL_get_error(t->ssl, r), err = errno;

    switch (e) {
    case SSL_ERROR_WANT_READ:
        *ev = TB_EV_READ;
        return TB_EAGAIN;
    case SSL_ERROR_WANT_WRITE:
        *ev = TB_EV_WRITE;
        return TB_EAGAIN;
    case SSL_ERROR_ZERO_RETURN: /* close_notify */
        return 0;
    }
    t->fatal = 1;
    if (e == SSL_ERROR_SYSCALL && err != 0 && ERR_peek_error() == 0) {
        snprintf(t->why, sizeof t->why, "%s: %s", what, strerror(err));
        return TB_EIO;
    }
    if ((e == SSL_ERROR_SYSCALL || e == SSL_ERROR_SSL) && eof_error()) {
        snprintf(t->why, sizeof t->why, "%s: connection closed by server",
                 what);
        ERR_clear_error();
        return 0;
    }
    ossl_why(t->why, sizeof t->why, what, t->ssl);
    return TB_ETLS;
}

int tb__tls_handshake(struct tb_client *c)
{
    struct tb__tls *t = c->tls;
    int r, rv;

    ERR_clear_error();
    errno = 0;
    r = SSL_do_handshake(t->ssl);
    if (r == 1) {
        t->established = 1;
        tb__log(c, TB_LOG_DEBUG, "TLS: %s, %s", SSL_get_version(t->ssl),
                SSL_get_cipher_name(t->ssl));
        return 0;
    }
    rv = classify(t, r, "TLS handshake", &t->hs_events);
    if (rv == 0 && t->why[0] == '\0')
        snprintf(t->why, sizeof t->why,
                 "TLS handshake: connection closed "
                 "by server");
    /* Not a TLS server, or one that refused us: a TLS failure either way. */
    return rv == 0 || rv == TB_EIO ? TB_ETLS : rv;
}

ssize_t tb__tls_send(struct tb_client *c, const void *p, size_t n)
{
    struct tb__tls *t = c->tls;
    int r, ev = 0, rv;

    ERR_clear_error();
    errno = 0;
    t->write_wants_read = 0;
    r = SSL_write(t->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
    if (r > 0)
        return r;
    rv = classify(t, r, "TLS write", &ev);
    if (rv == TB_EAGAIN)
        t->write_wants_read = ev == TB_EV_READ;
    return rv == 0 ? TB_EIO : rv;
}

ssize_t tb__tls_recv(struct tb_client *c, void *p, size_t n)
{
    struct tb__tls *t = c->tls;
    int r, ev = 0;

    ERR_clear_error();
    errno = 0;
    t->read_wants_write = 0;
    r = SSL_read(t->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
    if (r > 0)
        return r;
    r = classify(t, r, "TLS read", &ev);
    if (r == TB_EAGAIN)
        t->read_wants_write = ev == TB_EV_WRITE;
    return r;
}

int tb__tls_events(struct tb_client *c, int events)
{
    struct tb__tls *t = c->tls;

    if (t == NULL)
        return events;
    if (!t->established)
        return t->hs_events;
    if (t->write_wants_read)
        events = (events & ~TB_EV_WRITE) | TB_EV_READ;
    if (t->read_wants_write)
        events |= TB_EV_WRITE;
    return events;
}

/* Decrypted bytes not yet read, which the socket will not signal.  Not
 * SSL_has_pending: it counts a record only partly received too, which the
 * socket signals when the rest comes; taken for data, it had the driver
 * poll with no timeout meanwhile, spinning.  (read_ahead is off: OpenSSL
 * takes no more from the socket than the record it reads.) */
static int decrypted(struct tb__tls *t)
{
    return SSL_pending(t->ssl) > 0;
}

int tb__tls_read_on(struct tb_client *c, int events)
{
    struct tb__tls *t = c->tls;

    if (t == NULL)
        return events & TB_EV_READ;
    return (events & TB_EV_READ) || decrypted(t) ||
           (t->read_wants_write && (events & TB_EV_WRITE));
}

int tb__tls_pending(struct tb_client *c)
{
    return c->tls != NULL && decrypted(c->tls);
}

const char *tb__tls_why(struct tb_client *c)
{
    if (c->tls == NULL || c->tls->why[0] == '\0')
        return "TLS failure";
    return c->tls->why;
}

void tb__tls_end(struct tb_client *c)
{
    struct tb__tls *t = c->tls;

    if (t == NULL)
        return;
    c->tls = NULL;
    if (t->established && !t->fatal) {
        /* close_notify, best effort: the socket closes right after. */
        ERR_clear_error();
        (void)SSL_shutdown(t->ssl);
    }
    ERR_clear_error();
    SSL_free(t->ssl); /* and its BIO; the descriptor is the caller's */
    tb__free(t);
}
