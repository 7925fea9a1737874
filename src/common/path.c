/* Path validation as ZooKeeper's PathUtils: characters are checked as
 * UTF-16 code units, so anything outside the BMP (which needs surrogates)
 * is refused, as are controls, DEL/C1, the private-use area and specials. */
#include "common/path.h"

/* Decodes one UTF-8 sequence; returns its length or 0 if malformed. */
static size_t utf8_next(const unsigned char *p, size_t n, uint32_t *cp)
{
    size_t len, i;
    uint32_t c = p[0];

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if ((c & 0xe0) == 0xc0)
        len = 2, c &= 0x1f;
    else if ((c & 0xf0) == 0xe0)
        len = 3, c &= 0x0f;
    else if ((c & 0xf8) == 0xf0)
        len = 4, c &= 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (p[i] & 0x3f);
    }
    /* An overlong form (0xc0 0x80 for NUL) decodes, in Java, to U+FFFD,
     * which the rules refuse anyway: refuse it here too. */
    if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) ||
        (len == 4 && c < 0x10000))
        return 0;
    *cp = c;
    return len;
}

static int char_allowed(uint32_t c)
{
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
        return 0;
    if (c >= 0xd800 && c <= 0xf8ff)
        return 0;
    if (c >= 0xfff0 && c <= 0xffff)
        return 0;
    return c <= 0xffff; /* needs a surrogate pair in UTF-16 */
}

int tb_path_validate(struct tb_str path)
{
    const unsigned char *p = (const unsigned char *)path.ptr;
    size_t i = 1, comp = 1, len;
    uint32_t c;

    if (p == NULL || path.len == 0 || p[0] != '/')
        return TB_EBADARGUMENTS;
    if (path.len == 1)
        return 0;
    if (p[path.len - 1] == '/')
        return TB_EBADARGUMENTS;
    while (i <= path.len) {
        if (i == path.len || p[i] == '/') {
            len = i - comp;
            if (len == 0 || (len == 1 && p[comp] == '.') ||
                (len == 2 && p[comp] == '.' && p[comp + 1] == '.'))
                return TB_EBADARGUMENTS;
            comp = i + 1;
            i++;
            continue;
        }
        len = utf8_next(p + i, path.len - i, &c);
        if (len == 0 || !char_allowed(c))
            return TB_EBADARGUMENTS;
        i += len;
    }
    return 0;
}

struct tb_str tb_path_parent(struct tb_str path)
{
    size_t i = path.len;

    while (i > 0 && path.ptr[i - 1] != '/')
        i--;
    return (struct tb_str){path.ptr, i > 1 ? i - 1 : 1};
}

struct tb_str tb_path_basename(struct tb_str path)
{
    size_t i = path.len;

    while (i > 0 && path.ptr[i - 1] != '/')
        i--;
    return (struct tb_str){path.ptr + i, path.len - i};
}
