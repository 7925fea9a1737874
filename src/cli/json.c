/* A streaming JSON writer for --json output.  It tracks only whether a
 * comma is due at each nesting level, so output goes straight to the
 * stream and nothing is built in memory.  Strings are escaped per RFC 8259
 * and are valid UTF-8 whatever bytes they are given: a byte that is not
 * part of a UTF-8 character is written as U+FFFD (node data that must
 * survive exactly goes through jw_data, as base64 when it is not text), so
 * every line is valid JSON whatever a znode or a server's answer holds. */
#include <string.h>

#include "cli/cli.h"

void jw_init(struct jw *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
}

/* Called before every value and key: the comma between siblings. */
static void sep(struct jw *w)
{
    if (w->depth > 0 && w->depth < (int)sizeof w->need_comma) {
        if (w->need_comma[w->depth])
            fputc(',', w->f);
        w->need_comma[w->depth] = 1;
    }
}

static void open(struct jw *w, int ch)
{
    sep(w);
    fputc(ch, w->f);
    w->depth++;
    if (w->depth < (int)sizeof w->need_comma)
        w->need_comma[w->depth] = 0;
}

static void close_(struct jw *w, int ch)
{
    fputc(ch, w->f);
    if (w->depth > 0)
        w->depth--;
}

void jw_obj(struct jw *w)
{
    open(w, '{');
}

void jw_end_obj(struct jw *w)
{
    close_(w, '}');
}

void jw_arr(struct jw *w)
{
    open(w, '[');
}

void jw_end_arr(struct jw *w)
{
    close_(w, ']');
}

/* s as a JSON string: ASCII escaped where JSON needs it, UTF-8 characters
 * as they are, any other byte (one that starts no character, or starts one
 * cut short, overlong, a surrogate or beyond U+10FFFF) as U+FFFD. */
static void put_escaped(FILE *f, const char *s, size_t n)
{
    size_t i, k;

    fputc('"', f);
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x80) {
            if ((k = cli_utf8_len(s + i, n - i)) == 0) {
                fputs("\\ufffd", f);
            } else {
                fwrite(s + i, 1, k, f);
                i += k - 1;
            }
            continue;
        }
        switch (ch) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (ch < 0x20 || ch == 0x7f)
                fprintf(f, "\\u%04x", ch);
            else
                fputc(ch, f);
        }
    }
    fputc('"', f);
}

void jw_key(struct jw *w, const char *k)
{
    sep(w);
    put_escaped(w->f, k, strlen(k));
    fputc(':', w->f);
    /* The value that follows writes no comma; sep() in it sets the flag
     * again for the next key. */
    if (w->depth < (int)sizeof w->need_comma)
        w->need_comma[w->depth] = 0;
}

void jw_strn(struct jw *w, const char *s, size_t n)
{
    sep(w);
    put_escaped(w->f, s, n);
}

void jw_str(struct jw *w, const char *s)
{
    if (s == NULL)
        jw_null(w);
    else
        jw_strn(w, s, strlen(s));
}

void jw_int(struct jw *w, int64_t v)
{
    sep(w);
    fprintf(w->f, "%lld", (long long)v);
}

void jw_double(struct jw *w, double v)
{
    sep(w);
    fprintf(w->f, "%.6g", v);
}

void jw_hex(struct jw *w, int64_t v)
{
    char buf[24];

    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
    jw_str(w, buf);
}

void jw_session(struct jw *w, int64_t id)
{
    char buf[CLI_SESSION_LEN];

    jw_str(w, cli_session_str(id, buf));
}

void jw_null(struct jw *w)
{
    sep(w);
    fputs("null", w->f);
}

void jw_bool(struct jw *w, int v)
{
    sep(w);
    fputs(v ? "true" : "false", w->f);
}

void jw_done(struct jw *w)
{
    fputc('\n', w->f);
    fflush(w->f);
}

void jw_begin(struct jw *w, const char *path)
{
    jw_init(w, stdout);
    jw_obj(w);
    if (path != NULL) {
        jw_key(w, "path");
        jw_str(w, path);
    }
}

void jw_finish(struct jw *w)
{
    jw_end_obj(w);
    jw_done(w);
}

void jw_stat(struct jw *w, const struct tb_stat *st)
{
    jw_obj(w);
    jw_key(w, "czxid");
    jw_int(w, st->czxid);
    jw_key(w, "mzxid");
    jw_int(w, st->mzxid);
    jw_key(w, "pzxid");
    jw_int(w, st->pzxid);
    jw_key(w, "ctime");
    jw_int(w, st->ctime);
    jw_key(w, "mtime");
    jw_int(w, st->mtime);
    jw_key(w, "version");
    jw_int(w, st->version);
    jw_key(w, "cversion");
    jw_int(w, st->cversion);
    jw_key(w, "aversion");
    jw_int(w, st->aversion);
    jw_key(w, "ephemeralOwner");
    jw_session(w, st->ephemeral_owner);
    jw_key(w, "dataLength");
    jw_int(w, st->data_length);
    jw_key(w, "numChildren");
    jw_int(w, st->num_children);
    jw_end_obj(w);
}

/* Length of the UTF-8 sequence at s (at most n bytes), or 0 if invalid
 * (overlong forms, surrogates and NUL included: they would not survive a
 * round trip through most JSON readers). */
size_t cli_utf8_len(const char *v, size_t n)
{
    const unsigned char *s = (const unsigned char *)v;
    unsigned cp;
    size_t len, i;

    if (n == 0 || s[0] == 0)
        return 0;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

static int is_text(const char *v, size_t len)
{
    size_t i = 0, k;

    while (i < len) {
        if ((k = cli_utf8_len(v + i, len - i)) == 0)
            return 0;
        i += k;
    }
    return 1;
}

static void put_base64(FILE *f, const unsigned char *s, size_t n)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i;

    fputc('"', f);
    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
        fputc(tab[v >> 18], f);
        fputc(tab[(v >> 12) & 63], f);
        fputc(tab[(v >> 6) & 63], f);
        fputc(tab[v & 63], f);
    }
    if (n - i == 1) {
        unsigned v = (unsigned)s[i] << 16;
        fprintf(f, "%c%c==", tab[v >> 18], tab[(v >> 12) & 63]);
    } else if (n - i == 2) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8;
        fprintf(f, "%c%c%c=", tab[v >> 18], tab[(v >> 12) & 63],
                tab[(v >> 6) & 63]);
    }
    fputc('"', f);
}

void jw_data(struct jw *w, const char *v, size_t len)
{
    if (v == NULL) {
        jw_key(w, "data");
        jw_null(w);
    } else if (is_text(v, len)) {
        jw_key(w, "data");
        jw_strn(w, v, len);
    } else {
        jw_key(w, "data_base64");
        sep(w);
        put_base64(w->f, (const unsigned char *)v, len);
    }
}
