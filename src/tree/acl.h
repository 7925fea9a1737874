/* ACL checks and ACL validation with ZooKeeper's server semantics (wire
 * doc §12): shared by the reads the server answers directly and by the fsm
 * when it applies writes.  Identities (`ids`) are an encoded vector<Id> as
 * carried in a txn: "digest:user:hash", "ip:a.b.c.d", "sasl:user" after a
 * SASL login, "x509:<subject>" on a TLS connection with a client
 * certificate, and "super" if the caller authenticated as the super user. */
#ifndef TB_ACL_H
#define TB_ACL_H

#include "proto/proto.h"

/* 0 when `perm` is granted, else TB_ENOAUTH.  An empty or null list allows
 * everything; `super` (or an id of scheme "super") allows everything;
 * otherwise an entry with the bit must be world:anyone or match one of the
 * caller's ids of the same scheme (digest, x509: exact; ip: CIDR; sasl:
 * exact, and the SASL user named "super" matches every sasl entry, as
 * ZooKeeper's SASLAuthenticationProvider does). */
int tb_acl_check(struct tb_vec acl, struct tb_vec ids, int super, int perm);

/* The schemes whose providers a server may or may not have: sasl with
 * ZooKeeper's SASL provider configured, x509 with a TLS port. */
enum { TB_ACL_SASL = 1, TB_ACL_X509 = 2 };

/* ZooKeeper's fixupACL for create and setACL: removes duplicates, keeps
 * world:anyone, expands each `auth` entry into one entry per authenticated
 * (digest, and sasl and x509 as `opt` has them) identity of the caller with
 * the same perms, and validates the rest (digest: exactly two ':'-separated
 * parts; ip: IPv4 with optional /0-32; sasl: a Kerberos name; x509: any).
 * `opt` holds TB_ACL_* bits.  Appends the resulting elements to `out` and
 * stores their count in *n.  Returns 0, TB_EINVALIDACL, TB_EMARSHALLING (a
 * null id), or TB_ENOMEM. */
int tb_acl_fixup(struct tb_vec acl, struct tb_vec ids, unsigned opt,
                 struct tb_wbuf *out, int32_t *n);

/* The id rules of the ip and digest schemes (1 valid, 0 not). */
int tb_acl_ip_valid(struct tb_str id);
int tb_acl_digest_valid(struct tb_str id);
int tb_acl_sasl_valid(struct tb_str id);
/* 1 when address `addr` ("a.b.c.d") falls in `expr` ("a.b.c.d[/bits]"). */
int tb_acl_ip_match(struct tb_str expr, struct tb_str addr);

#endif
