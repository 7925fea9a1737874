/* tumblerd's log: one line per event on stderr (or in logFile),
 *
 *     2026-11-22T04:28:26.123Z WARN  too many connections from 10.0.0.7
 *
 * an ISO-8601 UTC timestamp with milliseconds, the level padded to five
 * columns, the message.  Each line goes out in one write(2), so lines from
 * libuv's thread pool do not interleave.  The level is process-wide: this
 * is the server's log, set once from the configuration (logLevel); the
 * client library logs through a callback on its handle instead. */
#ifndef TB_LOG_H
#define TB_LOG_H

#include <stddef.h>
#include <stdint.h>

enum tb_log_level {
    TB_LOG_ERROR = 0,
    TB_LOG_WARN = 1,
    TB_LOG_INFO = 2,
    TB_LOG_DEBUG = 3,
};

/* Lines above `level` are dropped.  The default is TB_LOG_INFO. */
void tb_log_set_level(int level);
int tb_log_get_level(void);
/* Whether a line at `level` would be written; lets callers skip work that
 * only builds a message. */
int tb_log_enabled(int level);

/* Where lines go; the default is 2 (stderr).  Tests point it at a file. */
void tb_log_set_fd(int fd);

/* logFile: lines are appended to `path` (created 0640) from now on.
 * tb_log_reopen() opens the same path again, for SIGHUP after logrotate
 * moved the file away: the new file takes the old one's descriptor with
 * dup2(2), so a thread writing meanwhile writes to one or the other, never
 * to a closed descriptor.  Both return 0 or a negative errno; on an error
 * the log keeps going where it went.  Only the loop thread calls them. */
int tb_log_open(const char *path);
int tb_log_reopen(void);

void tb_log(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A line a second at most for one kind of event, that may come in floods:
 * tb_log_due counts the event and returns 1 when its line is due, with
 * r->skipped the events left unlogged since the previous line, which
 * tb_log_rated then adds to the line ("(and N more since the last such
 * line)"). */
struct tb_log_rate {
    uint64_t next_ms;
    uint64_t unlogged;
    uint64_t skipped;
};
int tb_log_due(struct tb_log_rate *r, uint64_t now_ms);
void tb_log_rated(const struct tb_log_rate *r, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "error", "warn", "info", "debug" (case-insensitive; "warning" too).
 * Returns 0, or TB_EINVAL for any other text. */
int tb_log_level_parse(const char *s, int *level);
/* "ERROR", "WARN", "INFO", "DEBUG", or "?" */
const char *tb_log_level_name(int level);

/* Writes "YYYY-MM-DDTHH:MM:SS.mmmZ" for `wall_ms` (milliseconds since the
 * epoch) into buf, NUL-terminated.  Returns the length (24), or 0 if cap
 * is too small. */
size_t tb_log_format_time(char *buf, size_t cap, int64_t wall_ms);

#endif
