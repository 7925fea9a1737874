/* Unit tests for the server's logger: the time format, levels, a line's
 * shape and its cut, logFile and its reopening, the JSON lines with their
 * fields, a JSON line there is no memory for, and the lines held until
 * the configuration is read. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "address_space.h"
#include "common/common.h"
#include "log_capture.h"
#include "server/logging/log.h"

static void test_log_time(void **state)
{
    char buf[32];

    (void)state;
    assert_int_equal(tb_log_format_time(buf, sizeof buf, 0), 24);
    assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
    assert_int_equal(tb_log_format_time(buf, sizeof buf, 1795321607305), 24);
    assert_string_equal(buf, "2026-11-22T04:26:47.305Z");
    assert_int_equal(tb_log_format_time(buf, sizeof buf, -1), 24);
    assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
    assert_int_equal(tb_log_format_time(buf, 24, 0), 0); /* no room for NUL */
}

static void test_log_levels(void **state)
{
    int level = -1;

    (void)state;
    assert_int_equal(tb_log_level_parse("error", &level), 0);
    assert_int_equal(level, TB_LOG_ERROR);
    assert_int_equal(tb_log_level_parse("WARN", &level), 0);
    assert_int_equal(level, TB_LOG_WARN);
    assert_int_equal(tb_log_level_parse("warning", &level), 0);
    assert_int_equal(level, TB_LOG_WARN);
    assert_int_equal(tb_log_level_parse("Info", &level), 0);
    assert_int_equal(level, TB_LOG_INFO);
    assert_int_equal(tb_log_level_parse("debug", &level), 0);
    assert_int_equal(level, TB_LOG_DEBUG);
    assert_int_equal(tb_log_level_parse("trace", &level), TB_EINVAL);
    assert_string_equal(tb_log_level_name(TB_LOG_WARN), "WARN");
    assert_string_equal(tb_log_level_name(9), "?");
}

static void test_log_lines(void **state)
{
    struct capture cap;
    char *text, stamp[32], level[8], msg[64];
    char big[3000];

    (void)state;
    tb_log_set_level(TB_LOG_INFO);
    capture_start(&cap);
    tb_log(TB_LOG_INFO, "listening on %s:%d", "127.0.0.1", 2181);
    tb_log(TB_LOG_DEBUG, "dropped");
    tb_log(TB_LOG_ERROR, "ends in a newline\n");
    tb_log_set_level(TB_LOG_ERROR);
    tb_log(TB_LOG_WARN, "dropped too");
    assert_false(tb_log_enabled(TB_LOG_WARN));
    assert_true(tb_log_enabled(TB_LOG_ERROR));
    text = capture_end(&cap);
    tb_log_set_level(TB_LOG_INFO);

    /* "YYYY-MM-DDTHH:MM:SS.mmmZ LEVEL message\n", two lines */
    assert_int_equal(sscanf(text, "%31s %7s %63[^\n]", stamp, level, msg), 3);
    assert_int_equal(strlen(stamp), 24);
    assert_int_equal(stamp[10], 'T');
    assert_int_equal(stamp[19], '.');
    assert_int_equal(stamp[23], 'Z');
    assert_string_equal(level, "INFO");
    assert_string_equal(msg, "listening on 127.0.0.1:2181");
    assert_int_equal(text[24], ' ');
    assert_memory_equal(text + 25, "INFO  listening", 15);
    assert_non_null(strstr(text, " ERROR ends in a newline\n"));
    assert_null(strstr(text, "newline\n\n"));
    assert_null(strstr(text, "dropped"));
    assert_int_equal(strchr(strchr(text, '\n') + 1, '\n')[1], '\0');
    free(text);

    /* a long message is cut to one line of 2048 bytes ending "...\n" */
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    capture_start(&cap);
    tb_log(TB_LOG_WARN, "%s", big);
    text = capture_end(&cap);
    assert_int_equal(strlen(text), 2048);
    assert_string_equal(text + 2044, "...\n");
    free(text);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text = calloc(1, 4096);

    assert_non_null(f);
    assert_non_null(text);
    assert_true(fread(text, 1, 4095, f) < 4095);
    fclose(f);
    return text;
}

/* logFile and SIGHUP under logrotate: lines go to the file as it was
 * opened until it is reopened, then to a new file at the same path. */
static void test_log_file_reopen(void **state)
{
    char dir[] = "/tmp/tb_test_logfile_XXXXXX", path[64], moved[64];
    char *text;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/tumblerd.log", dir);
    snprintf(moved, sizeof moved, "%s/tumblerd.log.1", dir);
    assert_int_equal(tb_log_open(path), 0);
    tb_log(TB_LOG_INFO, "first");
    assert_int_equal(rename(path, moved), 0);
    tb_log(TB_LOG_INFO, "second");
    assert_int_equal(tb_log_reopen(), 0);
    tb_log(TB_LOG_INFO, "third");
    tb_log_set_fd(2);
    assert_int_equal(tb_log_reopen(), 0); /* no file now: a no-op */

    text = slurp(moved);
    assert_non_null(strstr(text, "INFO  first\n"));
    assert_non_null(strstr(text, "INFO  second\n"));
    assert_null(strstr(text, "third"));
    free(text);
    text = slurp(path);
    assert_non_null(strstr(text, "INFO  third\n"));
    assert_null(strstr(text, "second"));
    free(text);

    assert_int_equal(tb_log_open("/nonexistent-dir/tumblerd.log"), -ENOENT);
    assert_int_equal(unlink(moved), 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* --log-format=json: one object a line with time, level, message and the
 * fields; the text form leaves the fields out. */
static void test_log_json(void **state)
{
    struct tb_log_rate r = {0, 0, 3};
    struct capture cap;
    char *text;
    int f;

    (void)state;
    tb_log_set_level(TB_LOG_INFO);
    capture_start(&cap);
    tb_log_fields(TB_LOG_INFO,
                  TB_LOG_FIELDS(TB_LOG_HEX("session", 0x1234),
                                TB_LOG_INT("timeout_ms", -5),
                                TB_LOG_STR("peer", "a\"b")),
                  "expiring %s\n", "x\x01y");
    tb_log_set_format(TB_LOG_JSON);
    tb_log_fields(TB_LOG_INFO,
                  TB_LOG_FIELDS(TB_LOG_HEX("session", 0x1234),
                                TB_LOG_INT("timeout_ms", -5),
                                TB_LOG_STR("peer", "a\"b")),
                  "expiring %s\n", "x\x01y");
    tb_log(TB_LOG_WARN, "plain \xff");
    tb_log_set_format(TB_LOG_TEXT);
    tb_log(TB_LOG_WARN,
           "unicode \xc2\x85|\xe2\x80\xa8|\x9b|\xc3\xa9|\xe2\x82\xac");
    tb_log_set_format(TB_LOG_JSON);
    tb_log_fields(TB_LOG_DEBUG, TB_LOG_FIELDS(TB_LOG_INT("n", 1)), "dropped");
    tb_log_rated_fields(&r, TB_LOG_WARN, TB_LOG_FIELDS(TB_LOG_STR("k", "v")),
                        "rated");
    tb_log_set_format(TB_LOG_TEXT);
    text = capture_end(&cap);

    /* a control byte in a text line is a '?': no line forged by a client */
    assert_non_null(strstr(text, " INFO  expiring x?y\n{\"time\":\""));
    /* so are Unicode's line ends and C1 controls, and a byte no UTF-8;
     * other UTF-8 passes */
    assert_non_null(
        strstr(text, " WARN  unicode ??|???|?|\xc3\xa9|\xe2\x82\xac\n"));
    assert_non_null(strstr(text, "Z\",\"level\":\"INFO\",\"message\":"
                                 "\"expiring x\\u0001y\",\"session\":"
                                 "\"0x1234\",\"timeout_ms\":-5,\"peer\":"
                                 "\"a\\\"b\"}\n"));
    assert_non_null(strstr(text, "\"level\":\"WARN\",\"message\":\"plain "
                                 "\\ufffd\"}\n"));
    assert_null(strstr(text, "dropped"));
    assert_non_null(strstr(text, "\"message\":\"rated (and 3 more since the "
                                 "last such line)\",\"k\":\"v\","
                                 "\"unlogged\":3}\n"));
    /* {"time":"YYYY-MM-DDTHH:MM:SS.mmmZ", */
    assert_int_equal(strchr(text, '{')[34], ',');
    free(text);

    assert_int_equal(tb_log_format_parse("JSON", &f), 0);
    assert_int_equal(f, TB_LOG_JSON);
    assert_int_equal(tb_log_format_parse("xml", &f), TB_EINVAL);
    assert_string_equal(tb_log_format_name(TB_LOG_TEXT), "text");
}

/* A JSON line there is no memory for comes out as text, not at all else:
 * among such lines, the one saying that the server stops out of memory.
 * In a child whose address space is limited to what it has and whose
 * heap is used up.  Not under ASan, whose allocator stops the process
 * itself once no address space is left. */
static void test_log_json_without_memory(void **state)
{
#ifdef __SANITIZE_ADDRESS__
    (void)state;
    skip();
#else
    static const size_t sizes[] = {1 << 16, 1 << 12, 1 << 8, 16};
    struct capture cap;
    char *text;
    int status;
    size_t i;
    pid_t pid;

    (void)state;
    capture_start(&cap);
    tb_log_set_format(TB_LOG_JSON);
    fflush(NULL);
    if ((pid = fork()) == 0) {
        if (address_space_limit(0) != 0)
            _exit(2);
        for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            while (malloc(sizes[i]) != NULL)
                ;
        tb_log(TB_LOG_ERROR, "out of memory; stopping (exit %d)", 74);
        _exit(0);
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    tb_log_set_format(TB_LOG_TEXT);
    text = capture_end(&cap);
    assert_non_null(
        strstr(text, "Z ERROR out of memory; stopping (exit 74)\n"));
    free(text);
#endif
}

/* Lines held before the configuration is read come out after, by its
 * rules: its level, its format, its file. */
static void test_log_hold(void **state)
{
    struct capture cap;
    char *text;

    (void)state;
    capture_start(&cap);
    tb_log_set_level(TB_LOG_INFO);
    tb_log_hold();
    tb_log(TB_LOG_DEBUG, "held debug");
    tb_log_fields(TB_LOG_WARN, TB_LOG_FIELDS(TB_LOG_INT("line", 3)),
                  "held warn");
    text = capture_end(&cap);
    assert_string_equal(text, ""); /* nothing yet */
    free(text);

    capture_start(&cap);
    tb_log_set_level(TB_LOG_WARN);
    tb_log_set_format(TB_LOG_JSON);
    tb_log_release();
    tb_log(TB_LOG_WARN, "after");
    tb_log_set_format(TB_LOG_TEXT);
    tb_log_set_level(TB_LOG_INFO);
    text = capture_end(&cap);
    assert_null(strstr(text, "held debug"));
    assert_non_null(strstr(text, "\"message\":\"held warn\",\"line\":3}\n{"));
    assert_non_null(strstr(text, "\"message\":\"after\"}\n"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_time),
        cmocka_unit_test(test_log_levels),
        cmocka_unit_test(test_log_lines),
        cmocka_unit_test(test_log_file_reopen),
        cmocka_unit_test(test_log_json),
        cmocka_unit_test(test_log_json_without_memory),
        cmocka_unit_test(test_log_hold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
