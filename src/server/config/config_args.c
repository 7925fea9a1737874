/* Reading a zoo.cfg and the command line into struct tb_config (the two
 * texts of an ensemble, a server.N line's value and the myid file, are
 * read in config_ensemble.c).
 *
 * The file is read as Java's Properties reads it (load_text): key=value
 * lines ending at \n, \r or \r\n, continued by a trailing backslash, '#'
 * or '!' starting a comment line, whitespace around key and value
 * dropped, Java's escapes undone.  The key ends at '=', ':' or a blank, as
 * in Java (load_line), so "key: value" and "key value" are key=value too.
 * As in ZooKeeper, a '#' after a value is part of the value (and then
 * usually fails its check with a clear message), and the last of repeated
 * keys wins (server.N excepted: see config_ensemble.c), said in a warning.
 * No message quotes a whole line: it may hold a password. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/config.h"
#include "server/config/config_int.h"
#include "server/config/jaas.h"
#include "server/logging/log.h"

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Whether every \u in s is followed by four hex digits, as Java takes
 * them: strtoul would also take blanks, a sign or "0x", and the digits are
 * looked at one by one so that "\u1" at the end is not read past. */
static int escapes_valid(const char *s)
{
    int i;

    for (; *s != '\0'; s++) {
        if (*s != '\\' || s[1] == '\0')
            continue;
        if (*++s != 'u')
            continue;
        for (i = 1; i <= 4; i++)
            if (hex_digit(s[i]) < 0)
                return 0;
    }
    return 1;
}

/* Java's Properties escapes in a key or value, in place: \t \n \r \f,
 * \uXXXX (written as UTF-8), and a backslash before any other character
 * standing for that character.  0, or -1, s unchanged (for the message),
 * on a \u without four hex digits (Java refuses those too), or -2, s cut
 * before it, on \u0000, which a C string cannot hold (what follows would
 * be lost). */
static int unescape(char *s)
{
    char *o = s;
    unsigned u;
    int i;

    if (!escapes_valid(s))
        return -1;
    for (; *s != '\0'; s++) {
        if (*s != '\\' || s[1] == '\0') {
            *o++ = *s;
            continue;
        }
        switch (*++s) {
        case 't':
            *o++ = '\t';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'u': /* four hex digits: escapes_valid() */
            for (u = 0, i = 1; i <= 4; i++)
                u = u << 4 | (unsigned)hex_digit(s[i]);
            s += 4;
            if (u == 0) {
                *o = '\0';
                return -2;
            }
            if (u < 0x80) {
                *o++ = (char)u;
            } else if (u < 0x800) {
                *o++ = (char)(0xc0 | u >> 6);
                *o++ = (char)(0x80 | (u & 0x3f));
            } else {
                *o++ = (char)(0xe0 | u >> 12);
                *o++ = (char)(0x80 | (u >> 6 & 0x3f));
                *o++ = (char)(0x80 | (u & 0x3f));
            }
            break;
        default:
            *o++ = *s;
            break;
        }
    }
    *o = '\0';
    return 0;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f';
}

/* `seen` holds the keys a file gave so far, each "key\0" followed by its
 * first line (an int): a key given again is warned of (a dataDir written
 * twice takes the server to another tree without a word). */
static void note_key(struct tb_wbuf *seen, const char *key,
                     const struct tb_config_origin *at)
{
    size_t off = 0, n;
    int line;

    while (off < seen->len) {
        n = strlen((const char *)seen->base + off) + 1;
        memcpy(&line, seen->base + off + n, sizeof line);
        if (strcmp((const char *)seen->base + off, key) == 0) {
            tb_log(TB_LOG_WARN,
                   "%s:%d: %s given again (first on line %d): the later "
                   "value holds, as in ZooKeeper",
                   at->file, at->line, key, line);
            return;
        }
        off += n + sizeof line;
    }
    tb_wbuf_put(seen, key, strlen(key) + 1);
    tb_wbuf_put(seen, &at->line, sizeof at->line);
}

/* One logical line of the file: 0 (set or skipped), or a negative code
 * with err.  Split as Java's Properties splits it, so that a zoo.cfg
 * ZooKeeper takes is read alike: the key ends at the first '=', ':' or
 * blank not escaped; blanks, then one '=' or ':', then blanks lead to the
 * value; a key alone has the empty value. */
static int load_line(struct tb_config *cfg, char *line,
                     const struct tb_config_origin *at, struct tb_wbuf *seen,
                     char *err, size_t errlen)
{
    char *key, *end, *value;
    int rv;

    /* The blanks after the value go once its escapes are undone: an
     * escaped one is the value's until then, as in Java, whose value
     * ZooKeeper trims. */
    for (key = line; is_blank(*key) || *key == '\r' || *key == '\n'; key++)
        ; /* '\f' too, as Java */
    if (*key == '\0' || *key == '#' || *key == '!')
        return 0;
    for (end = key;
         *end != '\0' && *end != '=' && *end != ':' && !is_blank(*end); end++)
        if (*end == '\\' && end[1] != '\0')
            end++;
    if (end == key) {
        /* What follows may be a password: the line number says where. */
        snprintf(err, errlen, "%s:%d: expected key=value, found no key",
                 at->file, at->line);
        return TB_EINVAL;
    }
    for (value = end; is_blank(*value); value++)
        ;
    if (*value == '=' || *value == ':')
        value++;
    while (is_blank(*value))
        value++;
    *end = '\0';
    if ((rv = unescape(key)) != 0 || (rv = unescape(value)) != 0) {
        snprintf(err, errlen,
                 rv == -2 ? "%s:%d: %s: \\u0000 (a NUL) cannot be in a key "
                            "or a value"
                          : "%s:%d: %s: malformed \\uxxxx escape: \\u needs "
                            "four hex digits after it",
                 at->file, at->line, key);
        return TB_EINVAL;
    }
    value = trim(value);
    if (strncmp(key, "server.", 7) != 0) /* config_ensemble.c's to refuse */
        note_key(seen, key, at);
    rv = tb_config_set(cfg, key, value, at, err, errlen);
    return rv < 0 ? rv : 0;
}

/* Whether a line (len bytes at p) ends in an odd number of backslashes:
 * Java's continuation onto the next line.  A comment is never continued:
 * the line after "# C:\zk\" is a key of its own. */
static int continued(const char *p, size_t len)
{
    size_t n = 0, b = 0;

    while (b < len && (p[b] == ' ' || p[b] == '\t' || p[b] == '\f'))
        b++;
    if (b < len && (p[b] == '#' || p[b] == '!'))
        return 0;
    while (n < len && p[len - 1 - n] == '\\')
        n++;
    return n % 2 == 1;
}

/* The file is read as Java's Properties reads it, so that every zoo.cfg
 * ZooKeeper takes is read alike: lines end at \n, \r or \r\n; a line
 * ending in an odd number of backslashes goes on at the next, whose
 * leading blanks are dropped; keys and values are unescaped.  A NUL byte
 * is refused (Java would read it as part of a key). */
static int load_text(struct tb_config *cfg, const char *text, size_t len,
                     struct tb_config_origin *at, char *err, size_t errlen)
{
    struct tb_wbuf l, seen;
    size_t i = 0, j;
    int rv = 0, natural = 0, start, first;

    if (memchr(text, '\0', len) != NULL) {
        snprintf(err, errlen, "%s: a NUL byte: not a zoo.cfg file", at->file);
        return TB_EINVAL;
    }
    tb_wbuf_init(&l);
    tb_wbuf_init(&seen);
    while (rv == 0 && i < len) {
        start = natural + 1;
        l.len = 0;
        for (first = 1;; first = 0) {
            natural++;
            if (!first)
                while (i < len &&
                       (text[i] == ' ' || text[i] == '\t' || text[i] == '\f'))
                    i++;
            for (j = i; j < len && text[j] != '\n' && text[j] != '\r'; j++)
                ;
            tb_wbuf_put(&l, text + i, j - i);
            i = j +
                (j + 1 < len && text[j] == '\r' && text[j + 1] == '\n' ? 2 : 1);
            if (!continued((const char *)l.base, l.len))
                break;
            l.len--; /* the backslash that joins */
            if (i >= len)
                break;
        }
        tb_wbuf_put(&l, "", 1);
        if (l.oom) {
            snprintf(err, errlen, "out of memory");
            rv = TB_ENOMEM;
            break;
        }
        at->line = start;
        rv = load_line(cfg, (char *)l.base, at, &seen, err, errlen);
    }
    tb_wbuf_free(&l);
    tb_wbuf_free(&seen);
    return rv;
}

int tb_config_load_file(struct tb_config *cfg, const char *path, char *err,
                        size_t errlen)
{
    struct tb_config_origin at = {path, 0};
    struct tb_wbuf text;
    size_t n;
    FILE *f;
    int rv = 0;

    f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return TB_EIO;
    }
    tb_wbuf_init(&text);
    do {
        if (tb_wbuf_reserve(&text, 65536) != 0)
            break;
        n = fread(text.base + text.len, 1, 65536, f);
        text.len += n;
    } while (n > 0);
    if (ferror(f)) {
        /* fopen takes a directory; its first read fails with EISDIR. */
        if (errno == EISDIR)
            snprintf(err, errlen, "%s is a directory, not a zoo.cfg file",
                     path);
        else
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        rv = TB_EIO;
    } else if (text.oom) {
        snprintf(err, errlen, "out of memory");
        rv = TB_ENOMEM;
    } else {
        rv =
            load_text(cfg, (const char *)text.base, text.len, &at, err, errlen);
    }
    tb_wbuf_free(&text);
    fclose(f);
    if (rv == 0) {
        free(cfg->config_file);
        if ((cfg->config_file = strdup(path)) == NULL) {
            snprintf(err, errlen, "out of memory");
            rv = TB_ENOMEM;
        }
    }
    return rv;
}

static int is_opt(const char *a, const char *name)
{
    return strcmp(a, name) == 0;
}

/* --check-config: the effective configuration on stdout. */
static void print_effective(const struct tb_config *cfg)
{
    struct tb_wbuf b;

    tb_wbuf_init(&b);
    tb_config_render_effective(cfg, &b);
    fwrite(b.base, 1, b.len, stdout);
    tb_wbuf_free(&b);
}

static void print_usage(void)
{
    struct tb_wbuf b;

    tb_wbuf_init(&b);
    tb_config_usage(&b);
    if (b.len > 0)
        fwrite(b.base, 1, b.len, stdout);
    tb_wbuf_free(&b);
}

/* --survivor=DIR: a data directory --recover-ensemble compares with. */
static int add_survivor(struct tb_config *cfg, const char *dir, char *err,
                        size_t errlen)
{
    char **p;

    if (dir[0] == '\0') {
        snprintf(err, errlen, "--survivor=: expected a data directory");
        return TB_EINVAL;
    }
    p = realloc(cfg->survivors, (cfg->nsurvivors + 1) * sizeof *p);
    if (p == NULL || (p[cfg->nsurvivors] = strdup(dir)) == NULL) {
        if (p != NULL)
            cfg->survivors = p;
        snprintf(err, errlen, "out of memory");
        return TB_EINVAL;
    }
    cfg->survivors = p;
    cfg->nsurvivors++;
    return 0;
}

/* First pass: --help/--version, the file's name, and a check that every
 * other argument is --key=value, so nothing is applied from a command line
 * that is wrong further on. */
static int scan_args(struct tb_config *cfg, int argc, char **argv,
                     const char **file, char *err, size_t errlen)
{
    const char *a, *name;
    int i;

    for (i = 1; i < argc; i++) {
        a = argv[i];
        name = NULL;
        if (is_opt(a, "--help") || is_opt(a, "-h")) {
            print_usage();
            return TB_CONFIG_EXIT;
        }
        if (is_opt(a, "--version") || is_opt(a, "-V")) {
            printf("tumblerd %s (ZooKeeper 3.8 client protocol)\n",
                   tb_config_version());
            return TB_CONFIG_EXIT;
        }
        if (is_opt(a, "--repair-log")) {
            cfg->repair_log = 1;
            continue;
        }
        if (is_opt(a, "--check-config")) {
            cfg->check_config = 1;
            continue;
        }
        if (is_opt(a, "--recover-ensemble")) {
            cfg->recover_ensemble = 1;
            continue;
        }
        if (strncmp(a, "--survivor=", 11) == 0) {
            if (add_survivor(cfg, a + 11, err, errlen) != 0)
                return TB_EINVAL;
            continue;
        }
        if (is_opt(a, "-c") || is_opt(a, "--config")) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "%s: expected a file name", a);
                return TB_EINVAL;
            }
            name = argv[++i];
        } else if (strncmp(a, "--config=", 9) == 0) {
            name = a + 9;
        } else if (a[0] != '-') {
            name = a;
        } else if (strncmp(a, "--", 2) != 0 || strchr(a, '=') == NULL) {
            snprintf(err, errlen, "%s: unknown option; expected --key=value "
                     "(see --help)", a);
            return TB_EINVAL;
        }
        if (name != NULL && *file != NULL) {
            snprintf(err, errlen, "two configuration files: \"%s\" and \"%s\"",
                     *file, name);
            return TB_EINVAL;
        }
        if (name != NULL)
            *file = name;
    }
    if (cfg->nsurvivors > 0 && !cfg->recover_ensemble) {
        snprintf(err, errlen, "--survivor=%s: only with --recover-ensemble",
                 cfg->survivors[0]);
        return TB_EINVAL;
    }
    return TB_CONFIG_RUN;
}

/* Second pass: every --key=value, in order. */
static int apply_overrides(struct tb_config *cfg, int argc, char **argv,
                           char *err, size_t errlen)
{
    char key[256];
    const char *a, *eq;
    size_t n;
    int i, rv;

    for (i = 1; i < argc; i++) {
        a = argv[i];
        if (is_opt(a, "-c") || is_opt(a, "--config")) {
            i++;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || strncmp(a, "--config=", 9) == 0 ||
            is_opt(a, "--repair-log") || is_opt(a, "--check-config") ||
            is_opt(a, "--recover-ensemble") ||
            strncmp(a, "--survivor=", 11) == 0)
            continue;
        eq = strchr(a, '=');
        n = (size_t)(eq - (a + 2));
        if (n == 0 || n >= sizeof key) {
            snprintf(err, errlen, "%s: expected --key=value", a);
            return TB_EINVAL;
        }
        memcpy(key, a + 2, n);
        key[n] = '\0';
        if (strcmp(key, "log-format") == 0) /* as other daemons spell it */
            snprintf(key, sizeof key, "logFormat");
        if (!tb_config_has_key(key)) {
            snprintf(err, errlen, "--%s: unknown key (see --help)", key);
            return TB_EINVAL;
        }
        rv = tb_config_set(cfg, key, eq + 1, NULL, err, errlen);
        if (rv < 0)
            return rv;
    }
    return 0;
}

int tb_config_parse_args(struct tb_config *cfg, int argc, char **argv,
                         char *err, size_t errlen)
{
    const char *file = NULL;
    int rv;

    rv = scan_args(cfg, argc, argv, &file, err, errlen);
    if (rv != TB_CONFIG_RUN)
        return rv;
    if (file != NULL && (rv = tb_config_load_file(cfg, file, err, errlen)))
        return rv;
    if ((rv = apply_overrides(cfg, argc, argv, err, errlen)) != 0)
        return rv;
    if ((rv = tb_config_finish(cfg, err, errlen)) != 0 || !cfg->check_config)
        return rv;
    /* The JAAS file too, which a start reads next (proc/sasl.c). */
    if (cfg->jaas_file != NULL) {
        struct jaas_user *users;
        size_t n;

        if ((rv = jaas_load_users(cfg->jaas_file,
                                  cfg->jaas_section ? cfg->jaas_section
                                                    : "Server",
                                  &users, &n, err, errlen)) != 0)
            return rv;
        jaas_free_users(users, n);
    }
    print_effective(cfg);
    return TB_CONFIG_EXIT;
}
