/* An OpenSSL context from one set of ZooKeeper's TLS keys: ssl.* for the
 * secure client port (tls.c), ssl.quorum.* for the links between the
 * members of an ensemble (peer/tunnel.c).  Both read their stores the same
 * way, as ZooKeeper's Java reads them: PKCS12 or PEM, the type from
 * *.type or else the file's name, the password from *.passwordPath's file
 * or else *.password. */
#ifndef TBD_TLS_CTX_H
#define TBD_TLS_CTX_H

#include <stddef.h>
#include <uv.h>

struct ssl_ctx_st;
struct ssl_method_st;

/* The settings of one context, borrowed; NULL: not set. */
struct tls_keys {
    const char *prefix; /* "ssl" or "ssl.quorum": how messages name keys */
    const char *key_store, *key_password, *key_password_path, *key_type;
    const char *trust_store, *trust_password, *trust_password_path,
        *trust_type;
    const char *protocol, *protocols, *ciphersuites;
};

/* A context of `method` with the key store's key and chain, the trust
 * store's CAs (the system's without one), the versions and the suites
 * set; how peers are verified is the caller's.  NULL after logging why,
 * naming the key and the file. */
struct ssl_ctx_st *tls_ctx_new(const struct ssl_method_st *method,
                               const struct tls_keys *k);

/* A stat of the key store's and the trust store's files a second, off the
 * loop, as ZooKeeper watches them (client.certReload,
 * sslQuorumReloadCertFiles): cb(data) runs when one has changed and is
 * there, so it sees a file written again, renamed over, or a link turned
 * to another file, as certificate tools renew them.  A store caught half
 * written is refused by the reload, and read again at its next change.
 * A store not set, or not watchable, is left out (its handle not active);
 * the handles are the owner's to close. */
struct tls_watch {
    uv_fs_poll_t stores[2]; /* the key store's, the trust store's */
    void (*cb)(void *data);
    void *data;
};
void tls_stores_watch(uv_loop_t *loop, struct tls_watch *w,
                      const struct tls_keys *k, void (*cb)(void *data),
                      void *data);
/* Closes the handles tls_stores_watch started, if any. */
void tls_stores_unwatch(struct tls_watch *w);

/* x509_id.c: the subject n into out as Java's X500Principal.getName()
 * writes it, ZooKeeper's x509 id; 0, or -1 if it cannot be encoded. */
struct X509_name_st;
struct bio_st;
int tls_subject_id(const struct X509_name_st *n, struct bio_st *out);

/* OpenSSL's reason for the last failure into buf, its queue emptied. */
const char *tls_why(char *buf, size_t n);

/* A memory BIO's buffer never shrinks (a read moves past what it read),
 * so one large message would leave a connection holding 4/3 of it for
 * good.  An empty memory BIO to put in place of b (SSL_set0_rbio or
 * SSL_set0_wbio, which free b) once b is drained and its buffer grew past
 * TLS_BIO_KEEP; NULL to keep b (or when no other can be had: b still
 * works).  For the client port (tls.c) and the members' links (tunnel.c). */
#define TLS_BIO_KEEP (16u << 10)
struct bio_st *tls_bio_renewed(struct bio_st *b);

#endif
