/* Digest ids with Nettle (SHA-1 and base64): a small library, where
 * libcrypto's relocations and constructors cost every process start
 * 3-4 ms and 125 page faults for two functions. */
#include <nettle/base64.h>
#include <nettle/sha1.h>

#include "common/digest.h"

int tb_digest_id(struct tb_str cred, char *out, size_t cap)
{
    struct sha1_ctx ctx;
    uint8_t sha[SHA1_DIGEST_SIZE];
    size_t user = 0, n = BASE64_ENCODE_RAW_LENGTH(SHA1_DIGEST_SIZE);

    while (user < cred.len && cred.ptr[user] != ':')
        user++;
    if (cap < user + 1 + n + 1)
        return TB_EINVAL;
    sha1_init(&ctx);
    sha1_update(&ctx, cred.len, (const uint8_t *)(cred.ptr ? cred.ptr : ""));
    sha1_digest(&ctx, sizeof sha, sha);
    memcpy(out, cred.ptr, user);
    out[user] = ':';
    base64_encode_raw(out + user + 1, sizeof sha, sha);
    out[user + 1 + n] = '\0';
    return (int)(user + 1 + n);
}
