/* Capturing what the server's logger writes, for the unit tests that
 * check its lines: test_log.c (the logger) and test_config.c (the
 * configuration's warnings). */
#ifndef TB_LOG_CAPTURE_H
#define TB_LOG_CAPTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/logging/log.h"

/* Captures what the logger writes while a test runs. */
struct capture {
    int fd;
    char path[64];
};

static inline void capture_start(struct capture *c)
{
    snprintf(c->path, sizeof c->path, "/tmp/tb_test_log_XXXXXX");
    c->fd = mkstemp(c->path);
    assert_true(c->fd >= 0);
    tb_log_set_fd(c->fd);
}

/* Returns what was logged (free() it) and restores stderr. */
static inline char *capture_end(struct capture *c)
{
    off_t n = lseek(c->fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)n + 1);

    assert_non_null(text);
    assert_int_equal(pread(c->fd, text, (size_t)n, 0), (ssize_t)n);
    tb_log_set_fd(2);
    close(c->fd);
    unlink(c->path);
    return text;
}

#endif
