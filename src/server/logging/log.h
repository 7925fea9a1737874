/* tumblerd's log: one line per event on stderr (or in logFile),
 *
 *     2026-11-22T04:28:26.123Z WARN  too many connections from 10.0.0.7
 *
 * an ISO-8601 UTC timestamp with milliseconds, the level padded to five
 * columns, the message.  With logFormat=json (--log-format=json), for log
 * shippers, each line is one JSON object instead:
 *
 *     {"time":"2026-11-22T04:28:26.123Z","level":"WARN",
 *      "message":"too many connections from 10.0.0.7","peer":"10.0.0.7"}
 *
 * (on one line): the same time, level and message, then the line's
 * structured fields (tb_log_fields), which the text form leaves out since
 * its message says them.  Strings are valid UTF-8: a byte that is not
 * becomes U+FFFD.  Each line goes out in one write(2), so lines from
 * libuv's thread pool do not interleave.  Level and format are
 * process-wide: this is the server's log, set once from the configuration;
 * the client library logs through a callback on its handle instead. */
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

enum tb_log_format {
    TB_LOG_TEXT = 0,
    TB_LOG_JSON = 1,
};

/* Lines above `level` are dropped.  The default is TB_LOG_INFO. */
void tb_log_set_level(int level);
int tb_log_get_level(void);
/* Whether a line at `level` would be written; lets callers skip work that
 * only builds a message. */
int tb_log_enabled(int level);

/* Where lines go; the default is 2 (stderr).  Tests point it at a file. */
void tb_log_set_fd(int fd);

/* TB_LOG_TEXT (the default) or TB_LOG_JSON. */
void tb_log_set_format(int format);
/* "text" or "json" (case-insensitive): 0, or TB_EINVAL. */
int tb_log_format_parse(const char *s, int *format);
/* "text", "json", or "?" */
const char *tb_log_format_name(int format);

/* Lines logged before the configuration is read cannot know its level,
 * format or file: between tb_log_hold() and tb_log_release() every line
 * (whatever its level) is kept, then written by the rules set meanwhile,
 * those above the level dropped.  Loop thread only, before other threads
 * log. */
void tb_log_hold(void);
void tb_log_release(void);

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

/* A structured field of a line: a string, a number, or a number written
 * as "0x..." (a session id, a string in JSON as ZooKeeper shows them). */
struct tb_log_field {
    const char *key;
    const char *str; /* NULL: the number */
    int64_t num;
    int hex;
};
#define TB_LOG_STR(k, v) {(k), (v), 0, 0}
#define TB_LOG_INT(k, v) {(k), NULL, (int64_t)(v), 0}
#define TB_LOG_HEX(k, v) {(k), NULL, (int64_t)(v), 1}
/* The fields, and their count, as tb_log_fields takes them:
 *     tb_log_fields(TB_LOG_INFO, TB_LOG_FIELDS(TB_LOG_HEX("session", id),
 *                   TB_LOG_INT("timeout_ms", to)), "expiring ...", ...); */
#define TB_LOG_FIELDS(...)                                                  \
    (const struct tb_log_field[]){__VA_ARGS__},                             \
        sizeof((const struct tb_log_field[]){__VA_ARGS__}) /                \
            sizeof(struct tb_log_field)

/* A line with n fields. */
void tb_log_fields(int level, const struct tb_log_field *f, size_t n,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

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
/* ... with fields; JSON adds "unlogged": r->skipped when it is not 0. */
void tb_log_rated_fields(const struct tb_log_rate *r, int level,
                         const struct tb_log_field *f, size_t n,
                         const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

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
