/* Helpers shared by the configuration's unit tests: test_config.c (keys,
 * the command line, `conf`), test_config_file.c (how a zoo.cfg is read)
 * and test_config_ensemble.c (server.N lines, myid, the ensemble's checks
 * and text). */
#ifndef TB_TEST_CONFIG_H
#define TB_TEST_CONFIG_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/config/config.h"

/* A temporary zoo.cfg holding `text`; returns its path (static buffer). */
static inline const char *write_cfg(const char *text)
{
    static char path[64];
    int fd;

    snprintf(path, sizeof path, "/tmp/tb_test_cfg_XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static inline int parse(struct tb_config *cfg, char *err, size_t errlen, ...)
{
    char *argv[32];
    va_list ap;
    int argc = 0;

    argv[argc++] = "tumblerd";
    va_start(ap, errlen);
    while ((argv[argc] = va_arg(ap, char *)) != NULL)
        argc++;
    va_end(ap);
    return tb_config_parse_args(cfg, argc, argv, err, errlen);
}

/* Loads `text` as a file and expects failure with `msg` after "PATH:". */
static inline void expect_file_error(const char *text, const char *msg)
{
    struct tb_config cfg;
    char err[512] = "", want[512];
    const char *path = write_cfg(text);

    tb_config_init(&cfg);
    assert_int_equal(parse(&cfg, err, sizeof err, "-c", path, NULL),
                     TB_EINVAL);
    snprintf(want, sizeof want, "%s:%s", path, msg);
    assert_string_equal(err, want);
    tb_config_free(&cfg);
    unlink(path);
}

static inline void expect_args_error(const char *msg, ...)
{
    struct tb_config cfg;
    char *argv[16], err[512] = "";
    va_list ap;
    int argc = 0;

    argv[argc++] = "tumblerd";
    va_start(ap, msg);
    while ((argv[argc] = va_arg(ap, char *)) != NULL)
        argc++;
    va_end(ap);
    tb_config_init(&cfg);
    assert_true(tb_config_parse_args(&cfg, argc, argv, err, sizeof err) < 0);
    assert_string_equal(err, msg);
    tb_config_free(&cfg);
}

#endif
