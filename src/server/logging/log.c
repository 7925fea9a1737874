/* The server's line logger (see log.h).  The level, the format and the
 * descriptor are atomics: they are set at startup by the loop thread but
 * read by every thread that logs, and a plain int would be a data race
 * under TSan. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "common/json.h"
#include "server/logging/log.h"

/* Longer lines are cut and end in "..." rather than allocating: a text
 * line's timestamp and level take 31 bytes, its message the rest. */
#define LOG_LINE_MAX 2048
#define LOG_MSG_MAX (LOG_LINE_MAX - 31)

static _Atomic int log_level = TB_LOG_INFO;
static _Atomic int log_format = TB_LOG_TEXT;
static _Atomic int log_fd = 2;
/* logFile, kept for tb_log_reopen(); empty: none */
static char log_path[4096];

/* Lines kept while held (tb_log_hold), in order; loop thread only. */
struct held {
    struct held *next;
    int level;
    int64_t wall_ms;
    struct tb_wbuf fields; /* the fields as a JSON object's text */
    char msg[];
};
static _Atomic int holding;
static struct held *held_head, **held_tail = &held_head;

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

void tb_log_set_format(int format)
{
    atomic_store_explicit(&log_format,
                          format == TB_LOG_JSON ? TB_LOG_JSON : TB_LOG_TEXT,
                          memory_order_relaxed);
}

int tb_log_format_parse(const char *s, int *format)
{
    if (s != NULL && strcasecmp(s, "text") == 0)
        *format = TB_LOG_TEXT;
    else if (s != NULL && strcasecmp(s, "json") == 0)
        *format = TB_LOG_JSON;
    else
        return TB_EINVAL;
    return 0;
}

const char *tb_log_format_name(int format)
{
    return format == TB_LOG_TEXT ? "text" : format == TB_LOG_JSON ? "json"
                                                                 : "?";
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

/* The fields as a JSON object's text, "{...}". */
static void fields_json(struct tb_wbuf *b, const struct tb_log_field *f,
                        size_t n, uint64_t unlogged)
{
    struct json j;
    char hex[24];
    size_t i;

    json_init(&j, b);
    json_object(&j);
    for (i = 0; i < n; i++) {
        json_key(&j, f[i].key);
        if (f[i].str != NULL) {
            json_str(&j, f[i].str);
        } else if (f[i].hex) {
            snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)f[i].num);
            json_str(&j, hex);
        } else {
            json_int(&j, f[i].num);
        }
    }
    if (unlogged > 0) {
        json_key(&j, "unlogged");
        json_int(&j, (int64_t)unlogged);
    }
    json_end(&j);
}

/* One line each: a control character in what a client sent (a scheme, a
 * path) must not start a line of its own, nor move the cursor; neither
 * may Unicode's (C1, U+2028 and U+2029, which some readers take for line
 * ends) nor a byte that is no UTF-8 (0x9b alone is a terminal's CSI).
 * Each of their bytes becomes a '?'. */
static void text_safe(unsigned char *p, size_t n)
{
    size_t i = 0, k;

    while (i < n) {
        k = p[i] < 0x80 ? 1 : json_utf8_len(p + i, n - i);
        if (k == 0 || (k == 1 && (p[i] < 0x20 || p[i] == 0x7f)) ||
            (k == 2 && p[i] == 0xc2 && p[i + 1] <= 0x9f) ||
            (k == 3 && p[i] == 0xe2 && p[i + 1] == 0x80 &&
             (p[i + 2] == 0xa8 || p[i + 2] == 0xa9)))
            memset(p + i, '?', k ? k : 1);
        i += k ? k : 1;
    }
}

/* A JSON line out, `time` its first `n` bytes; 0, or -1 if there was no
 * memory to make it (nothing written). */
static int emit_json(const char *time, size_t n, int level, const char *msg,
                     const struct tb_wbuf *fields)
{
    struct tb_wbuf b;
    struct json j;
    int rv = -1;

    tb_wbuf_init(&b);
    json_init(&j, &b);
    json_object(&j);
    json_key(&j, "time");
    json_strn(&j, time, n);
    json_key(&j, "level");
    json_str(&j, tb_log_level_name(level));
    json_key(&j, "message");
    json_str(&j, msg);
    /* the fields' members, after a comma, without their braces */
    if (fields != NULL && fields->len > 2) {
        tb_wbuf_put(&b, ",", 1);
        tb_wbuf_put(&b, fields->base + 1, fields->len - 2);
    }
    tb_wbuf_put(&b, "}\n", 2);
    if (!b.oom) {
        write_all(atomic_load_explicit(&log_fd, memory_order_relaxed),
                  (const char *)b.base, b.len);
        rv = 0;
    }
    tb_wbuf_free(&b);
    return rv;
}

/* One line out, in the format set: `fields` (JSON text "{...}", or NULL)
 * goes into a JSON line only.  A JSON line there is no memory for is
 * written as text, on the stack, rather than lost: among such lines is
 * the one saying the server stops, out of memory. */
static void emit(int level, int64_t wall_ms, const char *msg,
                 const struct tb_wbuf *fields)
{
    char line[LOG_LINE_MAX + 1];
    size_t n;

    n = tb_log_format_time(line, sizeof line, wall_ms);
    if (atomic_load_explicit(&log_format, memory_order_relaxed) !=
            TB_LOG_TEXT &&
        emit_json(line, n, level, msg, fields) == 0)
        return;
    n += (size_t)snprintf(line + n, sizeof line - n, " %-5s %s\n",
                          tb_log_level_name(level), msg);
    n = n < sizeof line ? n : sizeof line - 1;
    text_safe((unsigned char *)line, n - 1);
    write_all(atomic_load_explicit(&log_fd, memory_order_relaxed), line, n);
}

/* One line: the message, then `r`'s count of lines unsaid (if any), then
 * the fields. */
static void vlog(int level, const struct tb_log_rate *r,
                 const struct tb_log_field *f, size_t nf, const char *fmt,
                 va_list ap) __attribute__((format(printf, 5, 0)));
static void vlog(int level, const struct tb_log_rate *r,
                 const struct tb_log_field *f, size_t nf, const char *fmt,
                 va_list ap)
{
    char msg[LOG_MSG_MAX];
    uint64_t unlogged = r != NULL ? r->skipped : 0;
    struct tb_wbuf fields;
    struct held *h;
    size_t room = sizeof msg - 1;
    int m;

    m = vsnprintf(msg, sizeof msg, fmt, ap);
    if (m < 0)
        m = 0;
    if ((size_t)m <= room && unlogged > 0)
        m += snprintf(msg + m, sizeof msg - (size_t)m,
                      " (and %llu more since the last such line)",
                      (unsigned long long)unlogged);
    if ((size_t)m > room) {
        memcpy(msg + sizeof msg - 4, "...", 4);
        m = (int)room;
    }
    if (m > 0 && msg[m - 1] == '\n')
        msg[--m] = '\0'; /* callers sometimes end with one; never two */
    tb_wbuf_init(&fields);
    if (nf > 0 || unlogged > 0)
        fields_json(&fields, f, nf, unlogged);
    if (atomic_load_explicit(&holding, memory_order_relaxed) &&
        (h = malloc(sizeof *h + (size_t)m + 1)) != NULL) {
        h->next = NULL;
        h->level = level;
        h->wall_ms = wall_ms_now();
        h->fields = fields;
        memcpy(h->msg, msg, (size_t)m + 1);
        *held_tail = h;
        held_tail = &h->next;
        return;
    }
    emit(level, wall_ms_now(), msg, &fields);
    tb_wbuf_free(&fields);
}

void tb_log_hold(void)
{
    atomic_store_explicit(&holding, 1, memory_order_relaxed);
}

void tb_log_release(void)
{
    struct held *h;

    atomic_store_explicit(&holding, 0, memory_order_relaxed);
    while ((h = held_head) != NULL) {
        held_head = h->next;
        if (tb_log_enabled(h->level))
            emit(h->level, h->wall_ms, h->msg, &h->fields);
        tb_wbuf_free(&h->fields);
        free(h);
    }
    held_tail = &held_head;
}

/* While held, every line is kept: the level is not known yet. */
static int wanted(int level)
{
    return tb_log_enabled(level) ||
           atomic_load_explicit(&holding, memory_order_relaxed);
}

void tb_log(int level, const char *fmt, ...)
{
    va_list ap;

    if (!wanted(level))
        return;
    va_start(ap, fmt);
    vlog(level, NULL, NULL, 0, fmt, ap);
    va_end(ap);
}

void tb_log_fields(int level, const struct tb_log_field *f, size_t n,
                   const char *fmt, ...)
{
    va_list ap;

    if (!wanted(level))
        return;
    va_start(ap, fmt);
    vlog(level, NULL, f, n, fmt, ap);
    va_end(ap);
}

void tb_log_rated(const struct tb_log_rate *r, int level, const char *fmt, ...)
{
    va_list ap;

    if (!wanted(level))
        return;
    va_start(ap, fmt);
    vlog(level, r, NULL, 0, fmt, ap);
    va_end(ap);
}

void tb_log_rated_fields(const struct tb_log_rate *r, int level,
                         const struct tb_log_field *f, size_t n,
                         const char *fmt, ...)
{
    va_list ap;

    if (!wanted(level))
        return;
    va_start(ap, fmt);
    vlog(level, r, f, n, fmt, ap);
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
