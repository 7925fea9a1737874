/* Reading a zoo.cfg and the command line into struct tb_config (the two
 * texts of an ensemble, a server.N line's value and the myid file, are
 * read in config_ensemble.c).
 *
 * The file format is the subset of Java properties that zoo.cfg files use:
 * one key=value per line, '#' or '!' starting a comment line, whitespace
 * around key and value dropped.  As in ZooKeeper, a '#' after a value is
 * part of the value (and then usually fails its check with a clear
 * message), and the last of repeated keys wins (server.N excepted: see
 * config_ensemble.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/config.h"
#include "server/config/config_int.h"
#include "server/logging/log.h"

/* One line of the file: 0 (set or skipped), or a negative code with err. */
static int load_line(struct tb_config *cfg, char *line,
                     const struct tb_config_origin *at, char *err,
                     size_t errlen)
{
    char *key, *eq, *value;
    int rv;

    key = trim(line);
    if (*key == '\0' || *key == '#' || *key == '!')
        return 0;
    eq = strchr(key, '=');
    if (eq == NULL || eq == key) {
        snprintf(err, errlen, "%s:%d: expected key=value, got \"%s\"",
                 at->file, at->line, key);
        return TB_EINVAL;
    }
    *eq = '\0';
    key = trim(key);
    value = trim(eq + 1);
    rv = tb_config_set(cfg, key, value, at, err, errlen);
    return rv < 0 ? rv : 0;
}

int tb_config_load_file(struct tb_config *cfg, const char *path, char *err,
                        size_t errlen)
{
    struct tb_config_origin at = {path, 0};
    char *line = NULL;
    size_t cap = 0;
    FILE *f;
    int rv = 0;

    f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return TB_EIO;
    }
    while (rv == 0 && getline(&line, &cap, f) >= 0) {
        at.line++;
        rv = load_line(cfg, line, &at, err, errlen);
    }
    if (rv == 0 && ferror(f)) {
        /* fopen takes a directory; its first read fails with EISDIR. */
        if (errno == EISDIR)
            snprintf(err, errlen, "%s is a directory, not a zoo.cfg file",
                     path);
        else
            snprintf(err, errlen, "%s:%d: cannot read: %s", path, at.line,
                     strerror(errno));
        rv = TB_EIO;
    }
    free(line);
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
    print_effective(cfg);
    return TB_CONFIG_EXIT;
}
