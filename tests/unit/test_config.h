/* Helpers shared by the configuration's unit tests: test_config.c (keys,
 * files, the command line, `conf`, the logger) and test_config_ensemble.c
 * (server.N lines, myid, the ensemble's checks and text). */
#ifndef TB_TEST_CONFIG_H
#define TB_TEST_CONFIG_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

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

#endif
