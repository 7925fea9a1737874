/* The public face of the digest ACL scheme's id computation, so that an
 * application can build digest ACLs for tb_set_acl / tb_create. */
#include "client/client.h"
#include "common/digest.h"

int tb_digest_acl_id(const char *user_password, char *out, size_t cap)
{
    if (user_password == NULL || out == NULL)
        return TB_EINVAL;
    return tb_digest_id(tb_str_c(user_password), out, cap);
}
