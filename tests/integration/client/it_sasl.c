/* The client's SASL login (tb_options.sasl_user).  What the server offers is
 * the caller's to state: IT_SASL=1 when it has the DIGEST-MD5 users of
 * tests/integration/sasl/server.jaas and the SASL provider (the
 * it_client_sasl_* runs), unset when it has no JAAS file (the plain
 * it_client runs). */
#include <stdlib.h>

#include "it_client.h"

static struct tb_client *sasl_client(const char *hosts, const char *user,
                                     const char *password, struct it_rec *st)
{
    struct tb_options o = {0};
    struct tb_client *c = NULL;

    it_rec_init(st);
    o.hosts = hosts;
    o.session_timeout_ms = 10000;
    o.state_cb = it_rec_state;
    o.data = st;
    o.sasl_user = user;
    o.sasl_password = password;
    if (tb_client_init(&c, &o) != 0)
        return NULL;
    if (tb_client_start(c) != 0) {
        tb_client_close(c);
        return NULL;
    }
    return c;
}

/* A server without a JAAS file answers the first step with no token, so
 * the login cannot go on: the session ends, AUTH_FAILED. */
static void unconfigured(void)
{
    struct it_rec st;
    struct tb_client *c = sasl_client(it_hostport, "jaasuser", "x", &st);

    CHECK(c != NULL);
    CHECK(it_rec_wait_state(&st, TB_SESSION_AUTH_FAILED, 10000) == 0);
    CHECK_RC(tb_exists_sync(c, "/", NULL, NULL, NULL), TB_EAUTHFAILED);
done:
    if (c)
        tb_client_close(c);
}

static void configured(void)
{
    static const struct tb_acl_entry mine = {TB_PERM_ALL, "sasl", "jaasuser"};
    const struct tb_acl_list acl = {1, &mine};
    const char *root = it_root("sasl");
    struct it_proxy *px = it_proxy_start(it_server_port());
    struct tb_client *c = NULL, *anon = NULL, *bad = NULL;
    struct it_rec st, bst;
    char hosts[64];

    CHECK(px != NULL);
    /* Through a proxy that can cut the connection. */
    snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(px));
    c = sasl_client(hosts, "jaasuser", "jaas_password", &st);
    CHECK(c != NULL);
    CHECK_RC(tb_client_wait_connected(c, 10000), 0);
    CHECK(it_has_id(c, "sasl:jaasuser"));
    CHECK_RC(tb_create_sync(c, root, "s", 1, &acl, 0, 0, NULL, 0, NULL), 0);
    CHECK_RC(tb_exists_sync(c, root, NULL, NULL, NULL), 0);
    anon = it_connect(it_hostport, 10000, NULL);
    CHECK(anon != NULL);
    CHECK_RC(tb_get_data_sync(anon, root, NULL, NULL, NULL, NULL, NULL),
             TB_ENOAUTH);

    /* The identity is the connection's: a new one logs in again before
     * the requests queued meanwhile go out. */
    it_proxy_cut(px);
    CHECK(it_rec_wait_state(&st, TB_SESSION_SUSPENDED, 10000) == 0);
    CHECK_RC(tb_get_data_sync(c, root, NULL, NULL, NULL, NULL, NULL), 0);
    CHECK(it_has_id(c, "sasl:jaasuser"));
    CHECK_RC(tb_delete_sync(c, root, -1), 0);

    /* A wrong password: the server refuses the login, the session ends. */
    bad = sasl_client(it_hostport, "jaasuser", "wrong", &bst);
    CHECK(bad != NULL);
    CHECK(it_rec_wait_state(&bst, TB_SESSION_AUTH_FAILED, 10000) == 0);
    CHECK_RC(tb_exists_sync(bad, "/", NULL, NULL, NULL), TB_EAUTHFAILED);
done:
    if (bad)
        tb_client_close(bad);
    if (anon)
        tb_client_close(anon);
    if (c)
        tb_client_close(c);
    if (px)
        it_proxy_stop(px);
}

static void test_sasl_login(void)
{
    const char *on = getenv("IT_SASL");

    if (on != NULL && strcmp(on, "1") == 0)
        configured();
    else
        unconfigured();
}

const struct it_test it_sasl_tests[] = {
    {"sasl_login", test_sasl_login},
    {NULL, NULL},
};
