/* JSON writer (json.h).  Strings are escaped as RFC 8259 asks: quote,
 * backslash and control characters; UTF-8 passes as it is, and a byte that
 * does not begin a well-formed sequence is written as U+FFFD, as Java's
 * decoder reads it, so that the text is always valid JSON. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

void json_init(struct json *j, struct tb_wbuf *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

/* Before any value: the comma that separates it from the one before. */
static void value(struct json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth > 0 && j->more[j->depth - 1])
        tb_wbuf_put(j->out, ",", 1);
    if (j->depth > 0)
        j->more[j->depth - 1] = 1;
}

static void open(struct json *j, char c)
{
    value(j);
    tb_wbuf_put(j->out, &c, 1);
    if (TB_NEVER(j->depth == JSON_MAX_DEPTH)) {
        j->out->oom = 1; /* the answer is refused whole (500) */
        return;
    }
    j->more[j->depth] = 0;
    j->closer[j->depth] = c == '{' ? '}' : ']';
    j->depth++;
}

void json_object(struct json *j)
{
    open(j, '{');
}

void json_array(struct json *j)
{
    open(j, '[');
}

void json_end(struct json *j)
{
    if (TB_NEVER(j->depth == 0))
        return;
    j->depth--;
    tb_wbuf_put(j->out, &j->closer[j->depth], 1);
}

size_t json_utf8_len(const unsigned char *p, size_t left)
{
    size_t n, i;
    unsigned lo = 0x80, hi = 0xbf;

    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        n = 3;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        n = 4;
    else
        return 0;
    if (p[0] == 0xe0)
        lo = 0xa0;
    else if (p[0] == 0xed)
        hi = 0x9f;
    else if (p[0] == 0xf0)
        lo = 0x90;
    else if (p[0] == 0xf4)
        hi = 0x8f;
    if (left < n || p[1] < lo || p[1] > hi)
        return 0;
    for (i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return n;
}

static void put_string(struct json *j, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, from = 0, n;
    char esc[6];

    tb_wbuf_put(j->out, "\"", 1);
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            n = json_utf8_len((const unsigned char *)s + i, len - i);
            if (n > 0) {
                i += n - 1;
                continue;
            }
            tb_wbuf_put(j->out, s + from, i - from);
            from = i + 1;
            tb_wbuf_put(j->out, "\\ufffd", 6);
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        tb_wbuf_put(j->out, s + from, i - from);
        from = i + 1;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            tb_wbuf_put(j->out, esc, 2);
        } else {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            tb_wbuf_put(j->out, esc, 6);
        }
    }
    tb_wbuf_put(j->out, s + from, len - from);
    tb_wbuf_put(j->out, "\"", 1);
}

void json_keyn(struct json *j, const char *key, size_t len)
{
    value(j);
    put_string(j, key, len);
    tb_wbuf_put(j->out, ":", 1);
    j->after_key = 1;
}

void json_key(struct json *j, const char *key)
{
    json_keyn(j, key, strlen(key));
}

void json_strn(struct json *j, const char *s, size_t len)
{
    value(j);
    put_string(j, s, len);
}

void json_str(struct json *j, const char *s)
{
    if (s == NULL) {
        json_null(j);
        return;
    }
    json_strn(j, s, strlen(s));
}

void json_int(struct json *j, int64_t v)
{
    value(j);
    tb_wbuf_printf(j->out, "%" PRId64, v);
}

void json_double(struct json *j, double v)
{
    value(j);
    char num[40];
    int prec;

    if (isfinite(v)) {
        /* the shortest digits that read back as v: 0.5, not 0.50000000 */
        for (prec = 1; prec < 17; prec++) {
            snprintf(num, sizeof num, "%.*g", prec, v);
            if (strtod(num, NULL) == v)
                break;
        }
        snprintf(num, sizeof num, "%.*g", prec, v);
        tb_wbuf_put(j->out, num, strlen(num));
        /* a double stays one for the reader, as Java writes it: 0.0 */
        if (strpbrk(num, ".e") == NULL)
            tb_wbuf_put(j->out, ".0", 2);
    } else
        tb_wbuf_put(j->out, "null", 4); /* JSON has no NaN nor infinity */
}

void json_bool(struct json *j, int v)
{
    value(j);
    tb_wbuf_put(j->out, v ? "true" : "false", v ? 4 : 5);
}

void json_null(struct json *j)
{
    value(j);
    tb_wbuf_put(j->out, "null", 4);
}

void json_raw(struct json *j, const char *text, size_t len)
{
    value(j);
    tb_wbuf_put(j->out, text, len);
}
