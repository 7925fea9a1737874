/* The JAAS reader: the users of one section, Java's syntax around them, and
 * an error that names the file and line for what tumblerd cannot use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "server/config/jaas.h"

static char path[64];

static const char *write_bytes(const char *text, size_t len)
{
    int fd;

    snprintf(path, sizeof path, "/tmp/test_jaas.XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

static const char *write_file(const char *text)
{
    return write_bytes(text, strlen(text));
}

/* Loads `text`'s section `section`; returns the status, err filled. */
static int load(const char *text, const char *section, struct jaas_user **u,
                size_t *n, char *err, size_t cap)
{
    int rv;

    *u = NULL;
    *n = 0;
    err[0] = '\0';
    rv = jaas_load_users(write_file(text), section, u, n, err, cap);
    unlink(path);
    return rv;
}

static void test_users(void **state)
{
    struct jaas_user *u;
    size_t n;
    char err[256];

    (void)state;
    assert_int_equal(
        load("/* the server's users\n"
             "   over two lines */\n"
             "Client {\n"
             "  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
             "  user_nobody=\"x\" username=\"bob\";\n"
             "};\n"
             "Server { // ZooKeeper's section\n"
             "  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
             "  user_super=\"adminsecret\"\n"
             "  user_bob=\"say \\\"hi\\\"\\\\\"\n"
             "  debug=true\n"
             "  user_=\"not a user\"\n"
             "  user_carol=plain-word.1;\n"
             "  com.example.Other OPTIONAL user_bob=\"second\" user_dan=\"\";\n"
             "};\n",
             "Server", &u, &n, err, sizeof err),
        0);
    assert_int_equal(n, 4);
    assert_string_equal(u[0].name, "super");
    assert_string_equal(u[0].password, "adminsecret");
    /* a later option for the same user wins, even in another module */
    assert_string_equal(u[1].name, "bob");
    assert_string_equal(u[1].password, "second");
    assert_string_equal(u[2].name, "carol");
    assert_string_equal(u[2].password, "plain-word.1");
    assert_string_equal(u[3].name, "dan");
    assert_string_equal(u[3].password, "");
    jaas_free_users(u, n);

    /* escapes */
    assert_int_equal(load("S { m required user_a=\"q\\\"b\\\\s\\n\"; };", "S",
                          &u, &n, err, sizeof err),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(u[0].password, "q\"b\\s\n");
    jaas_free_users(u, n);
    /* ... as Java's StreamTokenizer reads them: a Java client's password */
    assert_int_equal(load("S { m required user_a=\"x\\101\\r\\a\\v\\b\\f\\4012"
                          "\\7\\q\"; };",
                          "S", &u, &n, err, sizeof err),
                     0);
    /* \4012: two digits at most after a 4 (\40, a blank), then "12" */
    assert_string_equal(u[0].password, "xA\r\a\v\b\f 12\aq");
    jaas_free_users(u, n);
}

static void expect_error(const char *text, const char *message)
{
    struct jaas_user *u;
    size_t n;
    char err[256];

    assert_int_equal(load(text, "Server", &u, &n, err, sizeof err), TB_EINVAL);
    assert_null(u);
    if (strstr(err, message) == NULL)
        fail_msg("error \"%s\" lacks \"%s\"", err, message);
    assert_non_null(strstr(err, "/tmp/test_jaas."));
}

static void test_errors(void **state)
{
    struct jaas_user *u;
    size_t n;
    char err[256];

    (void)state;
    expect_error("Client { m required user_a=\"b\"; };", "no section Server");
    expect_error("Server { m required debug=true; };",
                 "section Server has no user_<name> option");
    expect_error("Server {\n"
                 "  com.sun.security.auth.module.Krb5LoginModule required\n"
                 "  keyTab=\"/k\" principal=\"zookeeper/h@R\";\n"
                 "};\n",
                 ":2: com.sun.security.auth.module.Krb5LoginModule: Kerberos "
                 "(GSSAPI) is not supported");
    expect_error("Server {\n m mandatory user_a=\"b\";\n};",
                 ":2: mandatory: expected required, requisite, sufficient "
                 "or optional");
    expect_error("Server {\n m required\n user_a=\"b\n", ":3: string not "
                                                         "closed");
    expect_error("Server { m required user_a \"b\"; };", ":1: expected '='");
    expect_error("Server { m required user_a=\"b\" }; };", ":1: expected "
                                                           "an option name");
    expect_error("Server { m required user_a=\"b\"; }", ":1: expected ';'");
    expect_error("Server\n/* open", ":2: comment not closed");
    expect_error("Server { m required user_a=\"b\"; };\n\n  ~",
                 ":3: unexpected '~'");
    expect_error("Server { m required user_a=\"b\\0c\"; };",
                 ":1: a NUL in a string");
    /* a NUL byte: no word, no punctuation, no string's */
    {
        static const char nul[] = "Server { m required user_a=b\0c; };";
        static const char nul2[] = "Server { m required user_a=\"b\0c\"; };";

        assert_int_equal(jaas_load_users(write_bytes(nul, sizeof nul - 1),
                                         "Server", &u, &n, err, sizeof err),
                         TB_EINVAL);
        unlink(path);
        assert_non_null(strstr(err, ":1: a NUL byte"));
        assert_int_equal(jaas_load_users(write_bytes(nul2, sizeof nul2 - 1),
                                         "Server", &u, &n, err, sizeof err),
                         TB_EINVAL);
        unlink(path);
        assert_non_null(strstr(err, ":1: a NUL in a string"));
    }
    /* a Kerberos module elsewhere is none of our business */
    assert_int_equal(load("Client { com.sun.security.auth.module."
                          "Krb5LoginModule required; };\n"
                          "Server { m required user_a=\"b\"; };",
                          "Server", &u, &n, err, sizeof err),
                     0);
    jaas_free_users(u, n);

    err[0] = '\0';
    assert_int_equal(jaas_load_users("/nonexistent/jaas.conf", "Server", &u, &n,
                                     err, sizeof err),
                     TB_EIO);
    assert_string_equal(err, "/nonexistent/jaas.conf: cannot be read");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_users),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
