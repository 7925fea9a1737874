/* The server's line logger (see log.h).  The level and the descriptor are
 * atomics: they are set at startup by the loop thread but read by every
 * thread that logs, and a plain int would be a data race under TSan. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "server/logging/log.h"

/* Longer messages are cut and end in "..." rather than allocating. */
#define LOG_LINE_MAX 2048

static _Atomic int log_level = TB_LOG_INFO;
static _Atomic int log_fd = 2;
/* logFile, kept for tb_log_reopen(); empty: none */
static char log_path[4096];

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

void tb_log_set_level(int level)
{
    if (level < TB_LOG_ERROR)
        level = TB_LOG_ERROR;
    if (level > TB_LOG_DEBUG)
        level = TB_LOG_DEBUG;
    atomic_store_explicit(&log_level, level, memory_order_relaxed);
}

int tb_log_get_level(void)
{
    return atomic_load_explicit(&log_level, memory_order_relaxed);
}

int tb_log_enabled(int level)
{
    return level <= tb_log_get_level();
}

void tb_log_set_fd(int fd)
{
    log_path[0] = '\0'; /* a descriptor given is not reopened by a path */
    atomic_store_explicit(&log_fd, fd, memory_order_relaxed);
}

int tb_log_open(const char *path)
{
    int fd;

    if (strlen(path) >= sizeof log_path)
        return -ENAMETOOLONG;
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0)
        return -errno;
    tb_log_set_fd(fd);
    strcpy(log_path, path);
    return 0;
}

int tb_log_reopen(void)
{
    int fd, old = atomic_load_explicit(&log_fd, memory_order_relaxed);

    if (log_path[0] == '\0')
        return 0;
    fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0)
        return -errno;
    if (dup3(fd, old, O_CLOEXEC) < 0) {
        int rv = -errno;
        close(fd);
        return rv;
    }
    close(fd);
    return 0;
}

const char *tb_log_level_name(int level)
{
    if (level < TB_LOG_ERROR || level > TB_LOG_DEBUG)
        return "?";
    return level_names[level];
}

int tb_log_level_parse(const char *s, int *level)
{
    int i;

    if (s == NULL)
        return TB_EINVAL;
    for (i = TB_LOG_ERROR; i <= TB_LOG_DEBUG; i++) {
        if (strcasecmp(s, level_names[i]) == 0) {
            *level = i;
            return 0;
        }
    }
    if (strcasecmp(s, "warning") == 0) {
        *level = TB_LOG_WARN;
        return 0;
    }
    return TB_EINVAL;
}

size_t tb_log_format_time(char *buf, size_t cap, int64_t wall_ms)
{
    struct tm tm;
    time_t secs;
    int ms, n;

    if (cap < 25)
        return 0;
    /* floor division keeps times before 1970 well-formed */
    secs = (time_t)(wall_ms / 1000 - (wall_ms % 1000 < 0));
    ms = (int)(wall_ms - (int64_t)secs * 1000);
    if (gmtime_r(&secs, &tm) == NULL)
        return 0;
    n = snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec, ms);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static int64_t wall_ms_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One write, retried on a short write; a log line is best effort, so an
 * error ends it quietly. */
static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* One line: the message, then `more` (if any) after a space. */
static void vlog(int level, const char *more, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void vlog(int level, const char *more, const char *fmt, va_list ap)
{
    char line[LOG_LINE_MAX];
    size_t n, room;
    int m;

    n = tb_log_format_time(line, sizeof line, wall_ms_now());
    n += (size_t)snprintf(line + n, sizeof line - n, " %-5s ",
                          tb_log_level_name(level));
    room = sizeof line - n - 1; /* keep one byte for the newline */
    m = vsnprintf(line + n, room + 1, fmt, ap);
    if (m < 0)
        m = 0;
    if ((size_t)m <= room && more != NULL)
        m += snprintf(line + n + m, room + 1 - (size_t)m, " %s", more);
    if ((size_t)m > room) {
        memcpy(line + sizeof line - 4, "...", 3);
        m = (int)room;
    }
    n += (size_t)m;
    if (n > 0 && line[n - 1] == '\n')
        n--; /* callers sometimes end with one; never print two */
    line[n++] = '\n';
    write_all(atomic_load_explicit(&log_fd, memory_order_relaxed), line, n);
}

void tb_log(int level, const char *fmt, ...)
{
    va_list ap;

    if (!tb_log_enabled(level))
        return;
    va_start(ap, fmt);
    vlog(level, NULL, fmt, ap);
    va_end(ap);
}

void tb_log_rated(const struct tb_log_rate *r, int level, const char *fmt, ...)
{
    char more[64];
    va_list ap;

    if (!tb_log_enabled(level))
        return;
    snprintf(more, sizeof more, "(and %llu more since the last such line)",
             (unsigned long long)r->skipped);
    va_start(ap, fmt);
    vlog(level, r->skipped > 0 ? more : NULL, fmt, ap);
    va_end(ap);
}

int tb_log_due(struct tb_log_rate *r, uint64_t now_ms)
{
    if (now_ms < r->next_ms) {
        r->unlogged++;
        return 0;
    }
    r->skipped = r->unlogged;
    r->unlogged = 0;
    r->next_ms = now_ms + 1000;
    return 1;
}
