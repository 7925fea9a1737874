/* Tumbler error codes: one table, ZooKeeper's wire values.
 *
 * The values are the `err` field of a ZooKeeper reply header, so a code
 * read off the wire is already a tb error and needs no mapping.  Codes that
 * ZooKeeper only produces on the client side (connection loss, timeouts)
 * keep ZooKeeper's values too.  Tumbler's own client-side codes sit below
 * -1000, out of ZooKeeper's range.  Functions return 0 or a negative code. */
#ifndef TUMBLER_ERRORS_H
#define TUMBLER_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TB_API
#define TB_API __attribute__((visibility("default")))
#endif

/* X(name, value, message) */
#define TB_ERRORS(X)                                                        \
    X(OK, 0, "ok")                                                          \
    X(ESYSTEM, -1, "system error")                                          \
    X(ERUNTIMEINCONSISTENCY, -2, "not executed: an earlier operation failed") \
    X(EDATAINCONSISTENCY, -3, "data inconsistency")                         \
    X(ECONNECTIONLOSS, -4, "connection lost")                               \
    X(EMARSHALLING, -5, "malformed record")                                 \
    X(EUNIMPLEMENTED, -6, "operation not implemented")                      \
    X(EOPTIMEOUT, -7, "operation timed out")                                \
    X(EBADARGUMENTS, -8, "bad arguments")                                   \
    X(EUNKNOWNSESSION, -12, "unknown session")                              \
    X(ENEWCONFIGNOQUORUM, -13, "new configuration has no quorum")           \
    X(ERECONFIGINPROGRESS, -14, "reconfiguration in progress")              \
    X(EAPI, -100, "api error")                                              \
    X(ENONODE, -101, "node does not exist")                                 \
    X(ENOAUTH, -102, "not authorized")                                      \
    X(EBADVERSION, -103, "version conflict")                                \
    X(ENOCHILDRENFOREPHEMERALS, -108, "ephemeral nodes may not have children") \
    X(ENODEEXISTS, -110, "node already exists")                             \
    X(ENOTEMPTY, -111, "node has children")                                 \
    X(ESESSIONEXPIRED, -112, "session expired")                             \
    X(EINVALIDCALLBACK, -113, "invalid callback")                           \
    X(EINVALIDACL, -114, "invalid acl")                                     \
    X(EAUTHFAILED, -115, "authentication failed")                           \
    X(ECLOSING, -116, "handle is closing")                                  \
    X(ENOTHING, -117, "no server responses to process")                     \
    X(ESESSIONMOVED, -118, "session moved to another server")               \
    X(ENOTREADONLY, -119, "server refuses writes (read-only or low disk)")  \
    X(EEPHEMERALONLOCALSESSION, -120, "ephemeral node on a local session")  \
    X(ENOWATCHER, -121, "no such watch")                                    \
    X(EREQUESTTIMEOUT, -122, "request timed out")                           \
    X(ERECONFIGDISABLED, -123, "reconfiguration disabled")                  \
    X(ESESSIONCLOSEDREQUIRESASLAUTH, -124, "session requires sasl authentication") \
    X(EQUOTAEXCEEDED, -125, "quota exceeded")                               \
    X(ETHROTTLEDOP, -127, "operation throttled")                            \
    X(ENOMEM, -1001, "out of memory")                                       \
    X(EAGAIN, -1002, "incomplete input")                                    \
    X(EINVAL, -1003, "invalid argument")                                    \
    X(ECANCELED, -1004, "canceled")                                         \
    X(ETIMEDOUT, -1005, "timed out")                                        \
    X(EIO, -1006, "i/o error")                                              \
    X(ETOOBIG, -1007, "frame too large")                                    \
    X(ELOCKLOST, -1008, "lock lost")                                        \
    X(ENOTHELD, -1009, "lock not held")                                     \
    X(ETLS, -1010, "TLS handshake or certificate verification failed")      \
    X(EFOREIGNLOCK, -1011, "lock path holds another recipe's nodes")       \
    X(EBROKEN, -1012, "barrier broken")

#define TB__ERR_ENUM(name, value, msg) TB_##name = (value),
enum tb_err { TB_ERRORS(TB__ERR_ENUM) };
#undef TB__ERR_ENUM

/* A static message for `rc`; unknown codes get a generic text. */
TB_API const char *tb_strerror(int rc);
/* The code's name without the TB_ prefix ("ENONODE"), or "UNKNOWN". */
TB_API const char *tb_errname(int rc);

#ifdef __cplusplus
}
#endif
#endif
