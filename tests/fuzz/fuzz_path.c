/* Fuzz target: tb_path_validate against a reference written here the way
 * ZooKeeper gets there: the wire bytes become a Java String (UTF-8
 * decoding in which any malformed sequence - overlong forms, encoded
 * surrogates, code points above U+10FFFF, truncated sequences - becomes
 * U+FFFD), and PathUtils.validatePath then looks at UTF-16 code units.
 * The two must agree on every input.
 *
 * For valid paths other than "/", tb_path_parent and tb_path_basename must
 * split the path at its last '/' into a valid parent and a non-empty
 * name. */
#include "common/path.h"
#include "fuzz.h"

/* Java's UTF-8 decoder, one code point (or U+FFFD) per call; *len is the
 * bytes it took. */
static uint32_t java_utf8_next(const uint8_t *p, size_t n, size_t *len)
{
    uint32_t c = p[0], min;
    size_t need, i;

    *len = 1;
    if (c < 0x80)
        return c;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1, c &= 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        need = 2, c &= 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        need = 3, c &= 0x07, min = 0x10000;
    else
        return 0xfffd; /* continuation byte, C0/C1, F5..FF */
    for (i = 1; i <= need; i++) {
        if (i >= n || (p[i] & 0xc0) != 0x80)
            return 0xfffd;
        c = c << 6 | (p[i] & 0x3f);
    }
    *len = need + 1;
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0xfffd;
    return c;
}

/* The String as UTF-16 code units; returns the count. */
static size_t to_utf16(const uint8_t *p, size_t n, uint16_t *out)
{
    size_t i = 0, k = 0, len;
    uint32_t c;

    while (i < n) {
        c = java_utf8_next(p + i, n - i, &len);
        i += len;
        if (c >= 0x10000) {
            c -= 0x10000;
            out[k++] = (uint16_t)(0xd800 | c >> 10);
            out[k++] = (uint16_t)(0xdc00 | (c & 0x3ff));
        } else {
            out[k++] = (uint16_t)c;
        }
    }
    return k;
}

/* PathUtils.validatePath over code units: 1 valid, 0 not. */
static int java_validate(const uint16_t *s, size_t n)
{
    uint16_t c, last = '/';
    size_t i;

    if (n == 0 || s[0] != '/')
        return 0;
    if (n == 1)
        return 1;
    if (s[n - 1] == '/')
        return 0;
    for (i = 1; i < n; last = s[i], i++) {
        c = s[i];
        if (c == 0)
            return 0;
        if (c == '/' && last == '/')
            return 0;
        if (c == '.' && last == '.') {
            if (s[i - 2] == '/' && (i + 1 == n || s[i + 1] == '/'))
                return 0;
        } else if (c == '.') {
            if (s[i - 1] == '/' && (i + 1 == n || s[i + 1] == '/'))
                return 0;
        } else if ((c > 0 && c <= 0x1f) || (c >= 0x7f && c <= 0x9f) ||
                   (c >= 0xd800 && c <= 0xf8ff) || c >= 0xfff0) {
            return 0;
        }
    }
    return 1;
}

static void check_split(struct tb_str path)
{
    struct tb_str parent = tb_path_parent(path);
    struct tb_str base = tb_path_basename(path);
    size_t sep = parent.len == 1 ? 1 : parent.len + 1;

    FZ_CHECK(parent.ptr == path.ptr && parent.len < path.len,
             "parent is not a prefix");
    FZ_CHECK(tb_path_validate(parent) == 0, "parent %.*s invalid",
             (int)parent.len, parent.ptr);
    FZ_CHECK(base.len > 0 && base.ptr == path.ptr + sep &&
                 sep + base.len == path.len && path.ptr[sep - 1] == '/' &&
                 memchr(base.ptr, '/', base.len) == NULL,
             "basename is not the last component");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tb_str path = {(const char *)data, size};
    uint16_t *units = malloc((size + 1) * sizeof *units);
    int ours, ref;
    char hex[80];

    FZ_CHECK(units != NULL, "out of memory");
    ref = java_validate(units, to_utf16(data, size, units));
    ours = tb_path_validate(path) == 0;
    FZ_CHECK(ours == ref, "tb_path_validate says %s, ZooKeeper %s: %s",
             ours ? "valid" : "invalid", ref ? "valid" : "invalid",
             fz_hex(data, size < 32 ? size : 32, hex, sizeof hex));
    FZ_CHECK(tb_path_validate(TB_STR_NULL) != 0, "null path accepted");
    if (ours && size > 1)
        check_split(path);
    free(units);
    return 0;
}
