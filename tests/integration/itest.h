/* A tiny runner for the integration test programs (zkc_ops, raw_proto).
 *
 * These programs talk to a live server over real sockets, so they are not cmocka unit tests: a
 * test may wait for a session to expire, and one hung server call must not hang the whole run.
 * The runner prints one line per test ("PASS name" / "FAIL name"), the reason for each failure,
 * and a closing "N passed, N failed" line that CI reads.  Every test runs under a watchdog
 * alarm; a test that overruns it counts as failed and ends the run.
 *
 * Usage of a test program: PROG HOST:PORT [NAME-SUBSTRING ...]: the tests
 * whose names contain one of them (all if none), less those whose names
 * contain one given after a '-' (-NAME-SUBSTRING).
 *
 * Inside a test, the IT_* check macros jump to the test's `done:` label on failure, where the
 * test releases what it holds (sessions, sockets), so the next test starts clean. */
#ifndef TB_ITEST_H
#define TB_ITEST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct it_test {
    const char *name;
    void (*fn)(void);
    int timeout_s; /* 0: the default (60 s) */
};

/* host:port of the server under test (argv[1]). */
extern const char *it_hostport;
/* Path of the running executable (for re-executing itself as a helper process). */
extern const char *it_self;

/* Record a failure of the current test (printed at once). */
void it_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Run the tests argv[2..] select (see above), print the summary line and
 * return the process exit status. */
int it_main(int argc, char **argv, const struct it_test *tests, size_t n);

/* Monotonic milliseconds. */
int64_t it_now_ms(void);
void it_sleep_ms(int ms);

/* A path unique to this run: "/<prefix><pid>-<name>", so reruns against a long-lived server do
 * not collide.  Returns a static buffer per call slot (4 slots rotate). */
const char *it_path(const char *prefix, const char *name);

/* Whether the server under test is tumblerd (with_server.sh exports
 * IT_SERVER_KIND), for the few checks where it differs on purpose. */
int it_server_is_tumblerd(void);

#define IT_CHECK(cond)                                                    \
    do {                                                                  \
        if (!(cond)) {                                                    \
            it_fail(__FILE__, __LINE__, "check failed: %s", #cond);       \
            goto done;                                                    \
        }                                                                 \
    } while (0)

#define IT_CHECKF(cond, ...)                                              \
    do {                                                                  \
        if (!(cond)) {                                                    \
            it_fail(__FILE__, __LINE__, __VA_ARGS__);                     \
            goto done;                                                    \
        }                                                                 \
    } while (0)

#define IT_EQ(got, want)                                                  \
    do {                                                                  \
        long long got_ = (long long)(got), want_ = (long long)(want);     \
        if (got_ != want_) {                                              \
            it_fail(__FILE__, __LINE__, "%s == %s: got %lld, want %lld",  \
                    #got, #want, got_, want_);                            \
            goto done;                                                    \
        }                                                                 \
    } while (0)

#define IT_EQ_STR(got, want)                                              \
    do {                                                                  \
        const char *gs_ = (got), *ws_ = (want);                           \
        if (gs_ == NULL || ws_ == NULL || strcmp(gs_, ws_) != 0) {        \
            it_fail(__FILE__, __LINE__, "%s == %s: got \"%s\", want \"%s\"", \
                    #got, #want, gs_ ? gs_ : "(null)", ws_ ? ws_ : "(null)"); \
            goto done;                                                    \
        }                                                                 \
    } while (0)

#endif
