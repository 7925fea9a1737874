/* The SASL request (opcode 102) on the wire.  Its expectations depend on the
 * server's setup, which the caller states: IT_SASL=1 when the server has a JAAS
 * Server section with DIGEST-MD5 users (sasl.sh), IT_SASL=enforce when it also
 * enforces authentication (sasl.sh's second server), unset for a server
 * without one (the plain raw_proto run).  The exchange that succeeds is checked
 * with real clients (zkCli in sasl.sh, kazoo's suite); here are the answers a
 * client library hides. */
#include "raw_proto.h"

#include <stdlib.h>
#include <string.h>

/* Sends a GetSASLRequest {buffer token} with xid and reads the reply; its token
 * into tok
 * (-1 for null).  0, or -1 for a transport failure. */
static int sasl_step(struct rz *z, int32_t xid, const char *token, int32_t len,
                     struct rz_reply *rep, char *tok, size_t cap,
                     int32_t *toklen)
{
    struct rz_w w = {0};
    int rc;

    rz_w_buf(&w, token, len);
    rc = rz_send_req(z, xid, 102, &w);
    rz_w_free(&w);
    if (rc != 0 || rz_read_reply(z, rep, 5000) != 0)
        return -1;
    /* A token follows every SASL reply header, an error's too. */
    *toklen = rz_r_str(&rep->body, tok, cap);
    return rep->body.bad ? -1 : 0;
}

/* No JAAS Server section: ZooKeeper answers every token with no token and the
 * connection serves on. */
static void unconfigured(void)
{
    struct rz z;
    struct rz_reply rep;
    char tok[512];
    int32_t len;

    rz_init(&z);
    ROPEN(z);
    IT_EQ(sasl_step(&z, 1, "", 0, &rep, tok, sizeof tok, &len), 0);
    IT_EQ(rep.xid, 1);
    IT_EQ(rep.zxid, 0);
    IT_EQ(rep.err, 0);
    IT_EQ(len, -1);
    IT_EQ(sasl_step(&z, 2, "hello", 5, &rep, tok, sizeof tok, &len), 0);
    IT_EQ(rep.err, 0);
    IT_EQ(len, -1);
    IT_EQ(rz_exists(&z, "/", 0, NULL), 0);
done:
    rz_close(&z);
}

/* DIGEST-MD5: the server speaks first, so the first token is ignored and
 * answered with the challenge, realm zk-sasl-md5; a response that is no
 * digest-response fails the login: AuthFailed with a null token, then the
 * connection closes, and other sessions serve on. */
static void digest(void)
{
    struct rz a, b, c;
    struct rz_reply rep;
    char tok[1024];
    int32_t len;
    struct rz_w w = {0};

    rz_init(&a);
    rz_init(&b);
    rz_init(&c);
    ROPEN(a);
    ROPEN(b);
    IT_EQ(sasl_step(&a, 7, "anything", 8, &rep, tok, sizeof tok, &len), 0);
    IT_EQ(rep.xid, 7);
    IT_EQ(rep.zxid, 0);
    IT_EQ(rep.err, 0);
    IT_CHECKF(len > 0 && strstr(tok, "realm=\"zk-sasl-md5\"") != NULL &&
                  strstr(tok, "nonce=\"") != NULL &&
                  strstr(tok, "algorithm=md5-sess") != NULL,
              "challenge: %s", tok);
    IT_EQ(sasl_step(&a, 8, "username=\"x\"", 12, &rep, tok, sizeof tok, &len),
          0);
    IT_EQ(rep.xid, 8);
    IT_EQ(rep.err, -115);
    IT_EQ(len, -1);
    IT_EQ(rz_expect_close(&a, 5000), 1);
    IT_EQ(rz_exists(&b, "/", 0, NULL), 0);

    /* A token longer than its frame: ZooKeeper closes at once; tumblerd says
     * MarshallingError (with a null token) first. */
    ROPEN(c);
    rz_w_i32(&w, 50);
    rz_w_raw(&w, "abc", 3);
    IT_EQ(rz_send_req(&c, 9, 102, &w), 0);
    if (it_server_is_tumblerd()) {
        IT_EQ(rz_read_reply(&c, &rep, 5000), 0);
        IT_EQ(rep.err, -5);
        IT_EQ(rz_r_str(&rep.body, tok, sizeof tok), -1);
    }
    IT_EQ(rz_expect_close(&c, 5000), 1);
    IT_EQ(rz_exists(&b, "/", 0, NULL), 0);
done:
    rz_w_free(&w);
    rz_drop(&a);
    rz_close(&b);
    rz_drop(&c);
}

/* enforce.auth.schemes=sasl,digest: until a connection has one of those ids,
 * any request but setAuth and SASL (a ping, a closeSession) gets
 * SessionClosedRequireAuth (-124) and the connection closes; a failed SASL
 * login ends with -124 too. */
static void enforced(void)
{
    struct rz a, b, c, d;
    struct rz_reply rep;
    char tok[1024];
    int32_t len;

    rz_init(&a);
    rz_init(&b);
    rz_init(&c);
    rz_init(&d);
    ROPEN(a);
    IT_EQ(rz_send_req(&a, -2, RZ_OP_PING, NULL), 0);
    IT_EQ(rz_read_reply(&a, &rep, 5000), 0);
    IT_EQ(rep.xid, -2);
    IT_EQ(rep.err, -124);
    IT_EQ(rep.len, 16);
    IT_EQ(rz_expect_close(&a, 5000), 1);

    ROPEN(b);
    IT_EQ(rz_send_req(&b, 1, RZ_OP_CLOSE, NULL), 0);
    IT_EQ(rz_read_reply(&b, &rep, 5000), 0);
    IT_EQ(rep.err, -124);
    IT_EQ(rz_expect_close(&b, 5000), 1);

    ROPEN(c);
    IT_EQ(rz_auth(&c, "digest", "bob:pw"), 0);
    IT_EQ(rz_exists(&c, "/", 0, NULL), 0);

    ROPEN(d);
    IT_EQ(sasl_step(&d, 1, "", 0, &rep, tok, sizeof tok, &len), 0);
    IT_EQ(rep.err, 0);
    IT_EQ(sasl_step(&d, 2, "x", 1, &rep, tok, sizeof tok, &len), 0);
    IT_EQ(rep.err, -124);
    IT_EQ(len, -1);
    IT_EQ(rz_expect_close(&d, 5000), 1);
done:
    rz_drop(&a);
    rz_drop(&b);
    rz_close(&c);
    rz_drop(&d);
}

void t_sasl(void)
{
    const char *on = getenv("IT_SASL");

    if (on != NULL && strcmp(on, "1") == 0)
        digest();
    else if (on != NULL && strcmp(on, "enforce") == 0)
        enforced();
    else
        unconfigured();
}
