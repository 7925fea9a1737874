/* The digest ACL scheme's id: "user:" + base64(sha1("user:password")). */
#ifndef TB_DIGEST_H
#define TB_DIGEST_H

#include "common/common.h"

/* Writes the id for the credentials "user:password" (the whole string is
 * hashed; the user is everything before the first ':') as a NUL-terminated
 * string into `out`, which needs room for the user plus 30 bytes.
 * Returns the id's length or a negative TB_E code. */
int tb_digest_id(struct tb_str credentials, char *out, size_t cap);

#endif
