/* A reader for JAAS login configuration files, enough of Java's grammar
 * (sun.security.provider.ConfigFile) for the files ZooKeeper's servers use:
 *
 *   Server {
 *       org.apache.zookeeper.server.auth.DigestLoginModule required
 *       user_super="adminsecret"
 *       user_bob="bobsecret";
 *   };
 *
 * Sections of entries `module flag option=value ... ;`, values bare words
 * or double-quoted strings with backslash escapes, comments in // and
 * slash-star form.  Sections other than the one asked for are parsed (a
 * syntax error anywhere is reported, as Java would) and otherwise
 * ignored. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/common.h"
#include "server/config/jaas.h"

enum tok_type { T_EOF, T_WORD, T_STRING, T_PUNCT };

struct tok {
    enum tok_type type;
    char *text; /* T_WORD, T_STRING: owned */
    char punct; /* T_PUNCT: one of { } ; = */
    int line;
};

struct lex {
    const char *p, *end;
    int line;
    const char *path;
    char *err;
    size_t errlen;
    struct tok ahead;
    int has_ahead;
};

static int fail(struct lex *lx, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct lex *lx, int line, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(lx->err, lx->errlen, "%s:%d: %s", lx->path, line, msg);
    return TB_EINVAL;
}

static int is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || (c != '\0' && strchr("._$-*", c) != NULL);
}

/* Skips blanks and comments; TB_EINVAL for a comment left open. */
static int skip_space(struct lex *lx)
{
    int start;

    while (lx->p < lx->end) {
        if (*lx->p == '\n') {
            lx->line++;
            lx->p++;
        } else if (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r') {
            lx->p++;
        } else if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '/') {
            while (lx->p < lx->end && *lx->p != '\n')
                lx->p++;
        } else if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '*') {
            start = lx->line;
            for (lx->p += 2;; lx->p++) {
                if (lx->end - lx->p < 2)
                    return fail(lx, start, "comment not closed");
                if (*lx->p == '\n')
                    lx->line++;
                if (lx->p[0] == '*' && lx->p[1] == '/')
                    break;
            }
            lx->p += 2;
        } else {
            break;
        }
    }
    return 0;
}

/* The escape at *p (past its backslash, before `end`), as Java's
 * StreamTokenizer, which reads JAAS files, reads it: \a \b \f \n \r \t
 * \v, one to three octal digits (up to \377), any other character
 * itself.  The byte it stands for; *p moves past it. */
static int unescape_one(const char **p, const char *end)
{
    const char *s = *p;
    int c = (unsigned char)*s++, v;

    if (c >= '0' && c <= '7') {
        for (v = c - '0';
             s < end && *s >= '0' && *s <= '7' && s - *p < (c <= '3' ? 3 : 2);
             s++)
            v = v * 8 + (*s - '0');
        *p = s;
        return v;
    }
    *p = s;
    switch (c) {
    case 'a':
        return '\a';
    case 'b':
        return '\b';
    case 'f':
        return '\f';
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    case 'v':
        return '\v';
    default:
        return c;
    }
}

static int read_string(struct lex *lx, struct tok *t)
{
    const char *q;
    char *out;
    size_t n = 0;
    int c;

    /* The unescaped text is never longer than the quoted one. */
    for (q = lx->p + 1; q < lx->end && *q != '"'; q++)
        if (*q == '\\' && q + 1 < lx->end)
            q++;
    if (q >= lx->end)
        return fail(lx, t->line, "string not closed");
    if ((out = malloc((size_t)(q - lx->p))) == NULL)
        return TB_ENOMEM;
    for (lx->p++; *lx->p != '"';) {
        if (*lx->p == '\n')
            lx->line++;
        if (*lx->p == '\\') {
            lx->p++;
            c = unescape_one(&lx->p, q);
        } else {
            c = (unsigned char)*lx->p++;
        }
        /* A C string cannot hold it: the password would be cut short. */
        if (c == 0) {
            free(out);
            return fail(lx, t->line, "a NUL in a string");
        }
        out[n++] = (char)c;
    }
    lx->p++;
    out[n] = '\0';
    t->type = T_STRING;
    t->text = out;
    return 0;
}

static int next(struct lex *lx, struct tok *t)
{
    const char *start;
    int rv;

    if (lx->has_ahead) {
        *t = lx->ahead;
        lx->has_ahead = 0;
        return 0;
    }
    memset(t, 0, sizeof *t);
    if ((rv = skip_space(lx)) != 0)
        return rv;
    t->line = lx->line;
    if (lx->p == lx->end) {
        t->type = T_EOF;
        return 0;
    }
    if (*lx->p == '\0')
        return fail(lx, t->line, "a NUL byte");
    if (strchr("{};=", *lx->p) != NULL) {
        t->type = T_PUNCT;
        t->punct = *lx->p++;
        return 0;
    }
    if (*lx->p == '"')
        return read_string(lx, t);
    if (!is_word_char(*lx->p))
        return fail(lx, t->line, "unexpected '%c'", *lx->p);
    for (start = lx->p; lx->p < lx->end && is_word_char(*lx->p); lx->p++)
        ;
    if ((t->text = strndup(start, (size_t)(lx->p - start))) == NULL)
        return TB_ENOMEM;
    t->type = T_WORD;
    return 0;
}

static int peek_punct(struct lex *lx, char c, int *yes)
{
    int rv;

    if (!lx->has_ahead) {
        if ((rv = next(lx, &lx->ahead)) != 0)
            return rv;
        lx->has_ahead = 1;
    }
    *yes = lx->ahead.type == T_PUNCT && lx->ahead.punct == c;
    return 0;
}

static int expect_punct(struct lex *lx, char c)
{
    struct tok t;
    int rv;

    if ((rv = next(lx, &t)) != 0)
        return rv;
    free(t.text);
    if (t.type != T_PUNCT || t.punct != c)
        return fail(lx, t.line, "expected '%c'", c);
    return 0;
}

/* A word, or with `string_ok` also a quoted string; *text is the caller's. */
static int expect_text(struct lex *lx, int string_ok, const char *what,
                       char **text, int *line)
{
    struct tok t;
    int rv;

    if ((rv = next(lx, &t)) != 0)
        return rv;
    *line = t.line;
    if (t.type == T_WORD || (string_ok && t.type == T_STRING)) {
        *text = t.text;
        return 0;
    }
    free(t.text);
    return fail(lx, t.line, "expected %s", what);
}

struct users {
    struct jaas_user *v;
    size_t n;
};

static int add_user(struct users *u, const char *name, char *password)
{
    struct jaas_user *grown;
    size_t i;
    char *copy;

    for (i = 0; i < u->n; i++) {
        if (strcmp(u->v[i].name, name) == 0) {
            free(u->v[i].password);
            u->v[i].password = password;
            return 0;
        }
    }
    if ((copy = strdup(name)) == NULL)
        return TB_ENOMEM;
    if ((grown = realloc(u->v, (u->n + 1) * sizeof *grown)) == NULL) {
        free(copy);
        return TB_ENOMEM;
    }
    u->v = grown;
    u->v[u->n++] = (struct jaas_user){copy, password};
    return 0;
}

/* `module flag option=value ... ;`, its users added if `wanted`. */
static int parse_entry(struct lex *lx, int wanted, struct users *u)
{
    char *module = NULL, *flag = NULL, *key = NULL, *value = NULL;
    int line, end, rv;

    if ((rv = expect_text(lx, 0, "a login module", &module, &line)) != 0)
        return rv;
    if (wanted && strstr(module, "Krb5LoginModule") != NULL) {
        rv = fail(lx, line,
                  "%s: Kerberos (GSSAPI) is not supported; "
                  "tumblerd offers DIGEST-MD5 with user_<name> options",
                  module);
        goto out;
    }
    if ((rv = expect_text(lx, 0, "a control flag", &flag, &line)) != 0)
        goto out;
    if (strcasecmp(flag, "required") != 0 &&
        strcasecmp(flag, "requisite") != 0 &&
        strcasecmp(flag, "sufficient") != 0 &&
        strcasecmp(flag, "optional") != 0) {
        rv = fail(lx, line,
                  "%s: expected required, requisite, sufficient "
                  "or optional",
                  flag);
        goto out;
    }
    for (;;) {
        if ((rv = peek_punct(lx, ';', &end)) != 0 || end)
            break;
        if ((rv = expect_text(lx, 0, "an option name", &key, &line)) != 0 ||
            (rv = expect_punct(lx, '=')) != 0 ||
            (rv = expect_text(lx, 1, "an option value", &value, &line)) != 0)
            break;
        if (wanted && strncmp(key, "user_", 5) == 0 && key[5] != '\0') {
            if ((rv = add_user(u, key + 5, value)) != 0)
                break;
            value = NULL;
        }
        free(key);
        free(value);
        key = value = NULL;
    }
    if (rv == 0)
        rv = expect_punct(lx, ';');
out:
    free(module);
    free(flag);
    free(key);
    free(value);
    return rv;
}

static int parse(struct lex *lx, const char *section, struct users *u,
                 int *found)
{
    struct tok t;
    int wanted, end, rv;

    for (;;) {
        if ((rv = next(lx, &t)) != 0)
            return rv;
        if (t.type == T_EOF)
            return 0;
        if (t.type != T_WORD) {
            free(t.text);
            return fail(lx, t.line, "expected a section name");
        }
        wanted = strcmp(t.text, section) == 0;
        *found |= wanted;
        free(t.text);
        if ((rv = expect_punct(lx, '{')) != 0)
            return rv;
        for (;;) {
            if ((rv = peek_punct(lx, '}', &end)) != 0)
                return rv;
            if (end)
                break;
            if ((rv = parse_entry(lx, wanted, u)) != 0)
                return rv;
        }
        if ((rv = expect_punct(lx, '}')) != 0 ||
            (rv = expect_punct(lx, ';')) != 0)
            return rv;
    }
}

static int read_file(const char *path, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL, *grown;
    size_t cap = 0, n = 0, got;

    if (f == NULL)
        return TB_EIO;
    do {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            if (cap > (1u << 24) || (grown = realloc(buf, cap)) == NULL) {
                free(buf);
                fclose(f);
                return TB_ENOMEM;
            }
            buf = grown;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return TB_EIO;
    }
    fclose(f);
    *text = buf;
    *len = n;
    return 0;
}

int jaas_load_users(const char *path, const char *section,
                    struct jaas_user **users, size_t *n, char *err,
                    size_t errlen)
{
    struct lex lx = {0};
    struct users u = {NULL, 0};
    char *text;
    size_t len;
    int found = 0, rv;

    snprintf(err, errlen, "%s: out of memory", path);
    if ((rv = read_file(path, &text, &len)) != 0) {
        snprintf(err, errlen, "%s: %s", path,
                 rv == TB_EIO ? "cannot be read" : "too large");
        return rv;
    }
    lx = (struct lex){text, text + len, 1, path, err, errlen, {0}, 0};
    rv = parse(&lx, section, &u, &found);
    if (lx.has_ahead)
        free(lx.ahead.text);
    free(text);
    if (rv == 0 && u.n == 0) {
        snprintf(err, errlen,
                 found ? "%s: section %s has no user_<name> "
                         "option"
                       : "%s: no section %s",
                 path, section);
        rv = TB_EINVAL;
    }
    if (rv != 0) {
        jaas_free_users(u.v, u.n);
        return rv;
    }
    *users = u.v;
    *n = u.n;
    return 0;
}

void jaas_free_users(struct jaas_user *users, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(users[i].name);
        free(users[i].password);
    }
    free(users);
}
