/* The integration test runner: selection by name, per-test watchdog, summary line.
 * See itest.h for why this is not cmocka. */
#include "itest.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

const char *it_hostport;
const char *it_self;

static int cur_failed;
static char alarm_msg[512];
static size_t alarm_len;

void it_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stdout, "  %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
    cur_failed = 1;
}

int64_t it_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void it_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

const char *it_path(const char *prefix, const char *name)
{
    static char bufs[4][256];
    static int slot;
    char *b = bufs[slot++ % 4];
    snprintf(b, sizeof bufs[0], "/%s%ld-%s", prefix, (long)getpid(), name);
    return b;
}

/* The watchdog cannot safely format text, so the message is prepared before each test. */
static void on_alarm(int sig)
{
    (void)sig;
    ssize_t r = write(STDOUT_FILENO, alarm_msg, alarm_len);
    (void)r;
    _exit(1);
}

/* argv[2..] name the tests to run by substring, or with a leading '-' the
 * tests to skip; with no names to run, every test not skipped runs. */
static int selected(const char *name, int argc, char **argv)
{
    int named = 0, wanted = 0;

    for (int i = 2; i < argc; i++) {
        if (argv[i][0] == '-') {
            if (strstr(name, argv[i] + 1) != NULL)
                return 0;
        } else {
            named = 1;
            wanted |= strstr(name, argv[i]) != NULL;
        }
    }
    return !named || wanted;
}

int it_main(int argc, char **argv, const struct it_test *tests, size_t n)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s HOST:PORT [NAME-SUBSTRING ...]\n", argv[0]);
        return 2;
    }
    it_hostport = argv[1];
    it_self = argv[0];
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGALRM, on_alarm);

    int passed = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!selected(tests[i].name, argc, argv))
            continue;
        int limit = tests[i].timeout_s > 0 ? tests[i].timeout_s : 60;
        int len = snprintf(alarm_msg, sizeof alarm_msg,
                           "  watchdog: test ran longer than %d s\nFAIL %s\n"
                           "%d passed, %d failed\n",
                           limit, tests[i].name, passed, failed + 1);
        alarm_len = len > 0 ? (size_t)len : 0;
        if (alarm_len > sizeof alarm_msg)
            alarm_len = sizeof alarm_msg;
        cur_failed = 0;
        int64_t t0 = it_now_ms();
        alarm((unsigned)limit);
        tests[i].fn();
        alarm(0);
        long ms = (long)(it_now_ms() - t0);
        if (cur_failed) {
            failed++;
            printf("FAIL %s (%ld ms)\n", tests[i].name, ms);
        } else {
            passed++;
            printf("PASS %s (%ld ms)\n", tests[i].name, ms);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
}

int it_server_is_tumblerd(void)
{
    const char *kind = getenv("IT_SERVER_KIND");

    return kind != NULL && strcmp(kind, "tumblerd") == 0;
}
