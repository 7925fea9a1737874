/* Unit tests of the ACL rules: the permission check, IP rules and the
 * fix-up of a request's ACL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include "tree/acl.h"

/* ACL rules. */

struct ids {
    struct tb_wbuf w;
    int32_t n;
};

static void ids_add(struct ids *ids, const char *scheme, const char *id)
{
    struct tb_id x = {tb_str_c(scheme), tb_str_c(id)};

    if (ids->n == 0)
        tb_wbuf_init(&ids->w);
    tb_put_id(&ids->w, &x);
    ids->n++;
}

static struct tb_vec ids_vec(struct ids *ids)
{
    return ids->n ? tb_vec_view(&ids->w, ids->n) : (struct tb_vec){0, NULL, 0};
}

static struct tb_vec acl1(struct tb_wbuf *w, int32_t perms, const char *scheme,
                          const char *id)
{
    struct tb_acl a = {perms, {tb_str_c(scheme), tb_str_c(id)}};

    tb_wbuf_init(w);
    tb_put_acl(w, &a);
    return tb_vec_view(w, 1);
}

static void test_acl_check(void **state)
{
    struct tb_wbuf w;
    struct ids none = {0}, bob = {0}, ip = {0}, sup = {0};
    struct tb_vec acl;

    (void)state;
    ids_add(&bob, "ip", "127.0.0.1");
    ids_add(&bob, "digest", "bob:hash=");
    ids_add(&ip, "ip", "10.1.2.3");
    ids_add(&sup, "super", "");

    /* Empty or null list: anything goes. */
    assert_int_equal(tb_acl_check((struct tb_vec){0, NULL, 0}, ids_vec(&none),
                                  0, TB_PERM_ADMIN),
                     0);
    assert_int_equal(tb_acl_check((struct tb_vec){-1, NULL, 0}, ids_vec(&none),
                                  0, TB_PERM_ADMIN),
                     0);
    assert_int_equal(
        tb_acl_check(tb_acl_open_unsafe, ids_vec(&none), 0, TB_PERM_ALL), 0);
    assert_int_equal(
        tb_acl_check(tb_acl_read_unsafe, ids_vec(&none), 0, TB_PERM_READ), 0);
    assert_int_equal(
        tb_acl_check(tb_acl_read_unsafe, ids_vec(&none), 0, TB_PERM_WRITE),
        TB_ENOAUTH);
    assert_int_equal(
        tb_acl_check(tb_acl_read_unsafe, ids_vec(&none), 1, TB_PERM_WRITE), 0);
    assert_int_equal(
        tb_acl_check(tb_acl_read_unsafe, ids_vec(&sup), 0, TB_PERM_WRITE), 0);

    acl = acl1(&w, TB_PERM_READ | TB_PERM_WRITE, "digest", "bob:hash=");
    assert_int_equal(tb_acl_check(acl, ids_vec(&bob), 0, TB_PERM_WRITE), 0);
    assert_int_equal(tb_acl_check(acl, ids_vec(&bob), 0, TB_PERM_DELETE),
                     TB_ENOAUTH);
    assert_int_equal(tb_acl_check(acl, ids_vec(&ip), 0, TB_PERM_READ),
                     TB_ENOAUTH);
    tb_wbuf_free(&w);
    acl = acl1(&w, TB_PERM_READ, "digest", "bob:hash");
    assert_int_equal(tb_acl_check(acl, ids_vec(&bob), 0, TB_PERM_READ),
                     TB_ENOAUTH); /* exact match only */
    tb_wbuf_free(&w);

    acl = acl1(&w, TB_PERM_READ, "ip", "10.0.0.0/8");
    assert_int_equal(tb_acl_check(acl, ids_vec(&ip), 0, TB_PERM_READ), 0);
    assert_int_equal(tb_acl_check(acl, ids_vec(&bob), 0, TB_PERM_READ),
                     TB_ENOAUTH);
    tb_wbuf_free(&w);
    acl = acl1(&w, TB_PERM_READ, "ip", "10.1.2.3");
    assert_int_equal(tb_acl_check(acl, ids_vec(&ip), 0, TB_PERM_READ), 0);
    tb_wbuf_free(&w);
    acl = acl1(&w, TB_PERM_READ, "world", "someone");
    assert_int_equal(tb_acl_check(acl, ids_vec(&ip), 0, TB_PERM_READ),
                     TB_ENOAUTH);
    tb_wbuf_free(&w);
    /* Same id under another scheme is not a match. */
    acl = acl1(&w, TB_PERM_READ, "digest", "10.1.2.3");
    assert_int_equal(tb_acl_check(acl, ids_vec(&ip), 0, TB_PERM_READ),
                     TB_ENOAUTH);
    tb_wbuf_free(&w);
    tb_wbuf_free(&bob.w);
    tb_wbuf_free(&ip.w);
    tb_wbuf_free(&sup.w);
}

static void test_acl_ip_rules(void **state)
{
    (void)state;
    assert_true(tb_acl_ip_valid(TB_STR("1.2.3.4")));
    assert_true(tb_acl_ip_valid(TB_STR("1.2.3.4/0")));
    assert_true(tb_acl_ip_valid(TB_STR("1.2.3.4/32")));
    assert_true(tb_acl_ip_valid(TB_STR("+1.2.3.4"))); /* Integer.parseInt */
    assert_false(tb_acl_ip_valid(TB_STR("999.1.1.1")));
    assert_false(tb_acl_ip_valid(TB_STR("1.2.3.4/33")));
    assert_false(tb_acl_ip_valid(TB_STR("1.2.3.4/-1")));
    assert_false(tb_acl_ip_valid(TB_STR("1.2.3.4/")));
    assert_false(tb_acl_ip_valid(TB_STR("1.2.3")));
    assert_false(tb_acl_ip_valid(TB_STR("1.2.3.4.")));
    assert_false(tb_acl_ip_valid(TB_STR("1..3.4")));
    assert_false(tb_acl_ip_valid(TB_STR("::1")));
    assert_false(tb_acl_ip_valid(TB_STR("")));
    assert_true(
        tb_acl_ip_match(TB_STR("192.168.1.0/24"), TB_STR("192.168.1.77")));
    assert_false(
        tb_acl_ip_match(TB_STR("192.168.1.0/24"), TB_STR("192.168.2.77")));
    assert_true(
        tb_acl_ip_match(TB_STR("192.168.1.0/23"), TB_STR("192.168.0.1")));
    assert_true(tb_acl_ip_match(TB_STR("0.0.0.0/0"), TB_STR("8.8.8.8")));
    assert_true(tb_acl_ip_match(TB_STR("10.0.0.1/31"), TB_STR("10.0.0.0")));
    assert_false(tb_acl_ip_match(TB_STR("10.0.0.1"), TB_STR("10.0.0.0")));
    assert_false(tb_acl_ip_match(TB_STR("10.0.0.1"), TB_STR("::1")));
    assert_true(tb_acl_digest_valid(TB_STR("bob:h=")));
    assert_true(tb_acl_digest_valid(TB_STR(":h")));
    assert_true(tb_acl_digest_valid(TB_STR("a:b:"))); /* trailing dropped */
    assert_false(tb_acl_digest_valid(TB_STR("a:")));
    assert_false(tb_acl_digest_valid(TB_STR("a")));
    assert_false(tb_acl_digest_valid(TB_STR("a:b:c")));
    assert_false(tb_acl_digest_valid(TB_STR("a::b")));
    assert_false(tb_acl_digest_valid(TB_STR(":")));
    assert_false(tb_acl_digest_valid(TB_STR("")));
}

static int fixup_rc(struct tb_vec acl, struct tb_vec ids, struct tb_wbuf *out,
                    int32_t *n)
{
    tb_wbuf_init(out);
    return tb_acl_fixup(acl, ids, 0, out, n);
}

static void test_acl_fixup(void **state)
{
    struct tb_wbuf in, out, expect;
    struct ids bob = {0}, iponly = {0};
    struct tb_acl a;
    int32_t n;
    int i;

    (void)state;
    ids_add(&bob, "ip", "127.0.0.1");
    ids_add(&bob, "digest", "bob:h1=");
    ids_add(&bob, "super", "");
    ids_add(&bob, "digest", "al:h2=");
    ids_add(&iponly, "ip", "127.0.0.1");

    assert_int_equal(
        fixup_rc((struct tb_vec){0, NULL, 0}, ids_vec(&bob), &out, &n),
        TB_EINVALIDACL);
    tb_wbuf_free(&out);
    assert_int_equal(
        fixup_rc((struct tb_vec){-1, NULL, 0}, ids_vec(&bob), &out, &n),
        TB_EINVALIDACL);
    tb_wbuf_free(&out);
    assert_int_equal(fixup_rc(tb_acl_open_unsafe, ids_vec(&iponly), &out, &n),
                     0);
    assert_int_equal(n, 1);
    assert_memory_equal(out.base, tb_acl_open_unsafe.raw, out.len);
    tb_wbuf_free(&out);

    /* auth expands to the digest ids only, with the entry's perms. */
    assert_int_equal(fixup_rc(tb_acl_creator_all, ids_vec(&bob), &out, &n), 0);
    assert_int_equal(n, 2);
    tb_wbuf_init(&expect);
    a = (struct tb_acl){31, {TB_STR("digest"), TB_STR("bob:h1=")}};
    tb_put_acl(&expect, &a);
    a.id.id = TB_STR("al:h2=");
    tb_put_acl(&expect, &a);
    assert_int_equal(out.len, expect.len);
    assert_memory_equal(out.base, expect.base, out.len);
    tb_wbuf_free(&expect);
    tb_wbuf_free(&out);
    assert_int_equal(fixup_rc(tb_acl_creator_all, ids_vec(&iponly), &out, &n),
                     TB_EINVALIDACL);
    tb_wbuf_free(&out);

    /* One bad entry spoils the list. */
    {
        const char *bad[][2] = {{"world", "someone"}, {"digest", "nocolon"},
                                {"ip", "999.1.1.1"},  {"ip", "1.2.3.4/33"},
                                {"sasl", "bob"},      {"super", ""},
                                {"x509", "CN=a"}};
        for (i = 0; i < 7; i++) {
            tb_wbuf_init(&in);
            tb_wbuf_put(&in, tb_acl_open_unsafe.raw, tb_acl_open_unsafe.len);
            a = (struct tb_acl){1, {tb_str_c(bad[i][0]), tb_str_c(bad[i][1])}};
            tb_put_acl(&in, &a);
            assert_int_equal(
                fixup_rc(tb_vec_view(&in, 2), ids_vec(&bob), &out, &n),
                TB_EINVALIDACL);
            tb_wbuf_free(&out);
            tb_wbuf_free(&in);
        }
    }
    /* A null id: ignored under auth (kazoo sends "" so), MarshallingError
     * under a scheme whose provider would read it, as ZooKeeper answers. */
    {
        static const struct {
            const char *scheme;
            int rc;
        } nulls[] = {{"auth", 0},
                     {"world", TB_EMARSHALLING},
                     {"digest", TB_EMARSHALLING},
                     {"ip", TB_EMARSHALLING},
                     {"bogus", TB_EINVALIDACL}};
        for (i = 0; i < 5; i++) {
            tb_wbuf_init(&in);
            a = (struct tb_acl){1, {tb_str_c(nulls[i].scheme), TB_STR_NULL}};
            tb_put_acl(&in, &a);
            assert_int_equal(
                fixup_rc(tb_vec_view(&in, 1), ids_vec(&bob), &out, &n),
                nulls[i].rc);
            if (nulls[i].rc == 0)
                assert_int_equal(n, 2); /* bob's two digest ids */
            tb_wbuf_free(&out);
            tb_wbuf_free(&in);
        }
    }

    /* Duplicates go, first occurrence order stays; perms make a
     * difference.  Large lists take the hashed path. */
    for (int big = 0; big < 2; big++) {
        int copies = big ? 500 : 3;
        tb_wbuf_init(&in);
        for (i = 0; i < copies; i++) {
            a = (struct tb_acl){1, {TB_STR("ip"), TB_STR("10.0.0.1")}};
            tb_put_acl(&in, &a);
            a = (struct tb_acl){3, {TB_STR("ip"), TB_STR("10.0.0.1")}};
            tb_put_acl(&in, &a);
            tb_wbuf_put(&in, tb_acl_open_unsafe.raw, tb_acl_open_unsafe.len);
        }
        assert_int_equal(
            fixup_rc(tb_vec_view(&in, 3 * copies), ids_vec(&bob), &out, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(out.len, in.len / (size_t)copies);
        assert_memory_equal(out.base, in.base, out.len);
        tb_wbuf_free(&out);
        tb_wbuf_free(&in);
    }
    tb_wbuf_free(&bob.w);
    tb_wbuf_free(&iponly.w);
}

/* The sasl scheme, as ZooKeeper's SASLAuthenticationProvider: ids are
 * Kerberos names, "super" matches every sasl entry, and without the
 * provider (sasl = 0) the scheme is unknown. */
static void test_acl_sasl(void **state)
{
    struct tb_wbuf w, out, expect;
    struct ids carol = {0}, super = {0}, bob = {0};
    struct tb_vec acl;
    struct tb_acl a;
    int32_t n;

    (void)state;
    ids_add(&carol, "ip", "127.0.0.1");
    ids_add(&carol, "sasl", "carol");
    ids_add(&carol, "digest", "al:h2=");
    ids_add(&super, "sasl", "super");
    ids_add(&bob, "digest", "carol");

    assert_true(tb_acl_sasl_valid(TB_STR("carol")));
    assert_true(tb_acl_sasl_valid(TB_STR("")));
    assert_true(tb_acl_sasl_valid(TB_STR("a/b/c"))); /* no realm: a name */
    assert_true(tb_acl_sasl_valid(TB_STR("zk/host@EXAMPLE.COM")));
    assert_true(tb_acl_sasl_valid(TB_STR("carol@EXAMPLE.COM")));
    assert_true(tb_acl_sasl_valid(TB_STR("@")));
    assert_false(tb_acl_sasl_valid(TB_STR("a@b@c")));
    assert_false(tb_acl_sasl_valid(TB_STR("a/b/c@R")));
    assert_false(tb_acl_sasl_valid(TB_STR("a@R/x")));
    assert_false(tb_acl_sasl_valid((struct tb_str){NULL, 0}));

    acl = acl1(&w, TB_PERM_READ, "sasl", "carol");
    assert_int_equal(tb_acl_check(acl, ids_vec(&carol), 0, TB_PERM_READ), 0);
    assert_int_equal(tb_acl_check(acl, ids_vec(&super), 0, TB_PERM_READ), 0);
    assert_int_equal(tb_acl_check(acl, ids_vec(&bob), 0, TB_PERM_READ),
                     TB_ENOAUTH);
    assert_int_equal(tb_acl_check(acl, ids_vec(&carol), 0, TB_PERM_WRITE),
                     TB_ENOAUTH);

    /* Valid only with the provider; MarshallingError for a null id. */
    tb_wbuf_init(&out);
    assert_int_equal(tb_acl_fixup(acl, ids_vec(&carol), 1, &out, &n), 0);
    assert_int_equal(n, 1);
    assert_memory_equal(out.base, acl.raw, acl.len);
    tb_wbuf_free(&out);
    tb_wbuf_init(&out);
    assert_int_equal(tb_acl_fixup(acl, ids_vec(&carol), 0, &out, &n),
                     TB_EINVALIDACL);
    tb_wbuf_free(&out);
    tb_wbuf_free(&w);
    acl = acl1(&w, TB_PERM_READ, "sasl", "a@b@c");
    tb_wbuf_init(&out);
    assert_int_equal(tb_acl_fixup(acl, ids_vec(&carol), 1, &out, &n),
                     TB_EINVALIDACL);
    tb_wbuf_free(&out);
    tb_wbuf_free(&w);
    tb_wbuf_init(&w);
    a = (struct tb_acl){TB_PERM_READ, {TB_STR("sasl"), {NULL, 0}}};
    tb_put_acl(&w, &a);
    tb_wbuf_init(&out);
    assert_int_equal(
        tb_acl_fixup(tb_vec_view(&w, 1), ids_vec(&carol), 1, &out, &n),
        TB_EMARSHALLING);
    tb_wbuf_free(&out);
    tb_wbuf_init(&out);
    assert_int_equal(
        tb_acl_fixup(tb_vec_view(&w, 1), ids_vec(&carol), 0, &out, &n),
        TB_EINVALIDACL);
    tb_wbuf_free(&out);
    tb_wbuf_free(&w);

    /* auth expands to the sasl id too, with the provider only. */
    tb_wbuf_init(&out);
    assert_int_equal(
        tb_acl_fixup(tb_acl_creator_all, ids_vec(&carol), 1, &out, &n), 0);
    assert_int_equal(n, 2);
    tb_wbuf_init(&expect);
    a = (struct tb_acl){31, {TB_STR("sasl"), TB_STR("carol")}};
    tb_put_acl(&expect, &a);
    a.id = (struct tb_id){TB_STR("digest"), TB_STR("al:h2=")};
    tb_put_acl(&expect, &a);
    assert_int_equal(out.len, expect.len);
    assert_memory_equal(out.base, expect.base, out.len);
    tb_wbuf_free(&expect);
    tb_wbuf_free(&out);
    tb_wbuf_init(&out);
    assert_int_equal(
        tb_acl_fixup(tb_acl_creator_all, ids_vec(&super), 0, &out, &n),
        TB_EINVALIDACL);
    tb_wbuf_free(&out);

    tb_wbuf_free(&carol.w);
    tb_wbuf_free(&super.w);
    tb_wbuf_free(&bob.w);
}

static void test_acl_x509(void **state)
{
    struct tb_wbuf w, out, expect;
    struct ids tls = {0}, other = {0}, sasl = {0};
    struct tb_vec acl;
    struct tb_acl a;
    int32_t n;

    (void)state;
    ids_add(&tls, "ip", "127.0.0.1");
    ids_add(&tls, "x509", "CN=client,OU=test,O=Tumbler");
    ids_add(&other, "x509", "CN=client,OU=test,O=Rogue");
    ids_add(&sasl, "sasl", "super"); /* super in sasl only, not x509 */

    /* Exact match of the subject. */
    acl = acl1(&w, TB_PERM_READ, "x509", "CN=client,OU=test,O=Tumbler");
    assert_int_equal(tb_acl_check(acl, ids_vec(&tls), 0, TB_PERM_READ), 0);
    assert_int_equal(tb_acl_check(acl, ids_vec(&other), 0, TB_PERM_READ),
                     TB_ENOAUTH);
    assert_int_equal(tb_acl_check(acl, ids_vec(&sasl), 0, TB_PERM_READ),
                     TB_ENOAUTH);

    /* Valid with a TLS port only; any id will do. */
    tb_wbuf_init(&out);
    assert_int_equal(tb_acl_fixup(acl, ids_vec(&tls), TB_ACL_X509, &out, &n),
                     0);
    assert_int_equal(n, 1);
    assert_memory_equal(out.base, acl.raw, acl.len);
    tb_wbuf_free(&out);
    tb_wbuf_init(&out);
    assert_int_equal(tb_acl_fixup(acl, ids_vec(&tls), TB_ACL_SASL, &out, &n),
                     TB_EINVALIDACL);
    tb_wbuf_free(&out);
    tb_wbuf_free(&w);

    /* auth expands to the x509 id with a TLS port, never to ip. */
    tb_wbuf_init(&out);
    assert_int_equal(
        tb_acl_fixup(tb_acl_creator_all, ids_vec(&tls), TB_ACL_X509, &out, &n),
        0);
    assert_int_equal(n, 1);
    tb_wbuf_init(&expect);
    a = (struct tb_acl){
        31, {TB_STR("x509"), TB_STR("CN=client,OU=test,O=Tumbler")}};
    tb_put_acl(&expect, &a);
    assert_int_equal(out.len, expect.len);
    assert_memory_equal(out.base, expect.base, out.len);
    tb_wbuf_free(&expect);
    tb_wbuf_free(&out);
    tb_wbuf_init(&out);
    assert_int_equal(
        tb_acl_fixup(tb_acl_creator_all, ids_vec(&tls), 0, &out, &n),
        TB_EINVALIDACL);
    tb_wbuf_free(&out);

    tb_wbuf_free(&tls.w);
    tb_wbuf_free(&other.w);
    tb_wbuf_free(&sasl.w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acl_check), cmocka_unit_test(test_acl_ip_rules),
        cmocka_unit_test(test_acl_fixup), cmocka_unit_test(test_acl_sasl),
        cmocka_unit_test(test_acl_x509),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
