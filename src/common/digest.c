/* Digest ids with OpenSSL's libcrypto (SHA-1 and base64). */
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "common/digest.h"

int tb_digest_id(struct tb_str cred, char *out, size_t cap)
{
    unsigned char sha[SHA_DIGEST_LENGTH];
    size_t user = 0;
    int n;

    while (user < cred.len && cred.ptr[user] != ':')
        user++;
    if (cap < user + 1 + 29)
        return TB_EINVAL;
    SHA1((const unsigned char *)(cred.ptr ? cred.ptr : ""), cred.len, sha);
    memcpy(out, cred.ptr, user);
    out[user] = ':';
    n = EVP_EncodeBlock((unsigned char *)out + user + 1, sha, sizeof sha);
    out[user + 1 + (size_t)n] = '\0';
    return (int)(user + 1 + (size_t)n);
}
