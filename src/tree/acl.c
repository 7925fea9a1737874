/* ACL checking and fix-up, reproducing ZooKeeper's ZooKeeperServer.checkACL,
 * PrepRequestProcessor.fixupACL and the ip/digest providers, including
 * their Java string-splitting and Integer.parseInt quirks, so that the same
 * ACLs are accepted and rejected. */
#include <stdlib.h>

#include "tree/acl.h"

static int str_is(struct tb_str s, const char *lit)
{
    return s.ptr != NULL && tb_str_eq(s, tb_str_c(lit));
}

/* Integer.parseInt: optional sign, at least one digit, no overflow. */
static int java_parse_int(const char *p, size_t n, int32_t *out)
{
    int64_t v = 0;
    int neg = 0;
    size_t i = 0;

    if (n > 0 && (p[0] == '-' || p[0] == '+')) {
        neg = p[0] == '-';
        i = 1;
    }
    if (i == n)
        return -1;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
        if (v > (int64_t)INT32_MAX + neg)
            return -1;
    }
    *out = (int32_t)(neg ? -v : v);
    return 0;
}

/* v4addr2Bytes: split("\\.", -1) must give exactly 4 parts, each an int in
 * 0..255. */
static int v4_parse(const char *p, size_t n, uint32_t *addr)
{
    size_t start = 0, i;
    int part = 0;
    int32_t v;
    uint32_t a = 0;

    for (i = 0; i <= n; i++) {
        if (i < n && p[i] != '.')
            continue;
        if (part == 4 || java_parse_int(p + start, i - start, &v) != 0 ||
            v < 0 || v > 255)
            return -1;
        a = a << 8 | (uint32_t)v;
        part++;
        start = i + 1;
    }
    if (part != 4)
        return -1;
    *addr = a;
    return 0;
}

/* Splits "addr[/bits]" as split("/", 2) does and checks both halves. */
static int ip_expr(struct tb_str s, uint32_t *addr, int *bits)
{
    const char *slash;
    size_t alen;
    int32_t b = 32;

    if (s.ptr == NULL)
        return -1;
    slash = memchr(s.ptr, '/', s.len);
    alen = slash ? (size_t)(slash - s.ptr) : s.len;
    if (v4_parse(s.ptr, alen, addr) != 0)
        return -1;
    if (slash && (java_parse_int(slash + 1, s.len - alen - 1, &b) != 0 ||
                  b < 0 || b > 32))
        return -1;
    *bits = b;
    return 0;
}

int tb_acl_ip_valid(struct tb_str id)
{
    uint32_t a;
    int bits;

    return ip_expr(id, &a, &bits) == 0;
}

int tb_acl_ip_match(struct tb_str expr, struct tb_str addr)
{
    uint32_t a, c, mask;
    int bits;

    if (ip_expr(expr, &a, &bits) != 0 || addr.ptr == NULL ||
        v4_parse(addr.ptr, addr.len, &c) != 0)
        return 0;
    mask = bits == 0 ? 0 : 0xffffffffu << (32 - bits);
    return (a & mask) == (c & mask);
}

/* id.split(":").length == 2, with Java dropping trailing empty parts. */
int tb_acl_digest_valid(struct tb_str id)
{
    size_t i, parts = 0, nonempty_end = 0, start = 0;

    if (id.ptr == NULL || memchr(id.ptr, ':', id.len) == NULL)
        return 0; /* one part */
    for (i = 0; i <= id.len; i++) {
        if (i < id.len && id.ptr[i] != ':')
            continue;
        parts++;
        if (i > start)
            nonempty_end = parts; /* parts up to here survive */
        start = i + 1;
    }
    return nonempty_end == 2;
}

/* What Java's KerberosName accepts: a name without '@', or
 * primary[/instance]@realm with no other '/' or '@'. */
int tb_acl_sasl_valid(struct tb_str id)
{
    const char *at, *p;
    size_t slashes = 0;

    if (id.ptr == NULL || (at = memchr(id.ptr, '@', id.len)) == NULL)
        return id.ptr != NULL;
    for (p = id.ptr; p < id.ptr + id.len; p++) {
        if (*p == '@' && p != at)
            return 0;
        if (*p == '/' && (p > at || ++slashes > 1))
            return 0;
    }
    return 1;
}

static int id_matches(struct tb_id acl_id, struct tb_id caller)
{
    if (!tb_str_eq(acl_id.scheme, caller.scheme) || caller.id.ptr == NULL ||
        acl_id.id.ptr == NULL)
        return 0;
    if (str_is(acl_id.scheme, "digest"))
        return tb_str_eq(acl_id.id, caller.id);
    if (str_is(acl_id.scheme, "ip"))
        return tb_acl_ip_match(acl_id.id, caller.id);
    if (str_is(acl_id.scheme, "sasl"))
        return str_is(caller.id, "super") || tb_str_eq(acl_id.id, caller.id);
    if (str_is(acl_id.scheme, "x509"))
        return tb_str_eq(acl_id.id, caller.id);
    return 0; /* no provider for that scheme */
}

static int caller_is_super(struct tb_vec ids)
{
    struct tb_rd it = tb_vec_reader(ids);
    struct tb_id id;

    while (tb_vec_next_id(&it, &id) == 1)
        if (str_is(id.scheme, "super"))
            return 1;
    return 0;
}

int tb_acl_check(struct tb_vec acl, struct tb_vec ids, int super, int perm)
{
    struct tb_rd it = tb_vec_reader(acl), ci;
    struct tb_acl a;
    struct tb_id caller;

    if (acl.n <= 0 || super || caller_is_super(ids))
        return 0;
    while (tb_vec_next_acl(&it, &a) == 1) {
        if ((a.perms & perm) == 0)
            continue;
        if (str_is(a.id.scheme, "world") && str_is(a.id.id, "anyone"))
            return 0;
        ci = tb_vec_reader(ids);
        while (tb_vec_next_id(&ci, &caller) == 1)
            if (id_matches(a.id, caller))
                return 0;
    }
    return TB_ENOAUTH;
}

/* Duplicate detection over the encoded entries: an entry's bytes encode
 * perms, scheme and id (null distinct from empty), so equal bytes mean
 * equal ACLs.  Small lists compare pairwise; big ones use a hash set so a
 * hostile list of 80,000 entries costs linear time on every replica. */
struct span {
    const uint8_t *p;
    size_t len;
};

struct dedup {
    struct span *seen;
    uint32_t *slots; /* index + 1 into seen, 0 empty */
    size_t nseen;
    size_t nslots;
};

static uint32_t span_hash(struct span s)
{
    uint32_t h = 2166136261u;
    size_t i;

    for (i = 0; i < s.len; i++)
        h = (h ^ s.p[i]) * 16777619u;
    return h;
}

static int span_eq(struct span a, struct span b)
{
    return a.len == b.len && memcmp(a.p, b.p, a.len) == 0;
}

/* 1 if new (and remembered), 0 if a duplicate. */
static int dedup_add(struct dedup *d, struct span s)
{
    size_t i, j;

    if (d->slots == NULL) {
        for (i = 0; i < d->nseen; i++)
            if (span_eq(d->seen[i], s))
                return 0;
        d->seen[d->nseen++] = s;
        return 1;
    }
    for (j = span_hash(s) & (d->nslots - 1); d->slots[j] != 0;
         j = (j + 1) & (d->nslots - 1))
        if (span_eq(d->seen[d->slots[j] - 1], s))
            return 0;
    d->seen[d->nseen++] = s;
    d->slots[j] = (uint32_t)d->nseen;
    return 1;
}

static int dedup_init(struct dedup *d, size_t n)
{
    memset(d, 0, sizeof *d);
    d->seen = malloc(n * sizeof *d->seen);
    if (d->seen == NULL)
        return TB_ENOMEM;
    if (n > 16) {
        d->nslots = 32;
        while (d->nslots < 2 * n)
            d->nslots *= 2;
        d->slots = calloc(d->nslots, sizeof *d->slots);
        if (d->slots == NULL) {
            free(d->seen);
            return TB_ENOMEM;
        }
    }
    return 0;
}

static void dedup_free(struct dedup *d)
{
    free(d->seen);
    free(d->slots);
}

/* Whether the scheme has a provider: the optional ones as `opt` says. */
static int known_scheme(struct tb_str s, unsigned opt)
{
    return str_is(s, "world") || str_is(s, "digest") || str_is(s, "ip") ||
           ((opt & TB_ACL_SASL) && str_is(s, "sasl")) ||
           ((opt & TB_ACL_X509) && str_is(s, "x509"));
}

/* Appends one entry per authenticated id of the caller; InvalidACL if the
 * caller has none.  ip is not an authenticated scheme, and sasl and x509
 * count only with their providers. */
static int expand_auth(int32_t perms, struct tb_vec ids, unsigned opt,
                       struct tb_wbuf *out, int32_t *n)
{
    struct tb_rd it = tb_vec_reader(ids);
    struct tb_id id;
    struct tb_acl a;
    int any = 0;

    while (tb_vec_next_id(&it, &id) == 1) {
        if (str_is(id.scheme, "ip") || str_is(id.scheme, "world") ||
            !known_scheme(id.scheme, opt) || id.id.ptr == NULL)
            continue;
        a.perms = perms;
        a.id = id;
        tb_put_acl(out, &a);
        (*n)++;
        any = 1;
    }
    return any ? 0 : TB_EINVALIDACL;
}

static int fix_one(const struct tb_acl *a, struct span raw, struct tb_vec ids,
                   unsigned opt, struct tb_wbuf *out, int32_t *n)
{
    if (a->id.scheme.ptr == NULL)
        return TB_EINVALIDACL;
    /* "auth" ignores its id, which kazoo sends as null for "". */
    if (str_is(a->id.scheme, "auth"))
        return expand_auth(a->perms, ids, opt, out, n);
    /* ZooKeeper's providers fail on a null id: MarshallingError. */
    if (a->id.id.ptr == NULL)
        return known_scheme(a->id.scheme, opt) ? TB_EMARSHALLING
                                               : TB_EINVALIDACL;
    if ((str_is(a->id.scheme, "world") && str_is(a->id.id, "anyone")) ||
        (str_is(a->id.scheme, "digest") && tb_acl_digest_valid(a->id.id)) ||
        (str_is(a->id.scheme, "ip") && tb_acl_ip_valid(a->id.id)) ||
        ((opt & TB_ACL_SASL) && str_is(a->id.scheme, "sasl") &&
         tb_acl_sasl_valid(a->id.id)) ||
        ((opt & TB_ACL_X509) && str_is(a->id.scheme, "x509"))) {
        tb_wbuf_put(out, raw.p, raw.len);
        (*n)++;
        return 0;
    }
    return TB_EINVALIDACL;
}

int tb_acl_fixup(struct tb_vec acl, struct tb_vec ids, unsigned opt,
                 struct tb_wbuf *out, int32_t *n)
{
    struct tb_rd it = tb_vec_reader(acl);
    struct tb_acl a;
    struct span raw;
    struct dedup d;
    const uint8_t *start;
    int32_t i = 0;
    int rv = 0;

    *n = 0;
    if (acl.n <= 0)
        return TB_EINVALIDACL;
    if (dedup_init(&d, (size_t)acl.n) != 0)
        return TB_ENOMEM;
    for (start = it.pos; i++ < acl.n && tb_vec_next_acl(&it, &a) == 1;
         start = it.pos) {
        raw.p = start;
        raw.len = (size_t)(it.pos - start);
        if (dedup_add(&d, raw) &&
            (rv = fix_one(&a, raw, ids, opt, out, n)) != 0)
            break;
    }
    dedup_free(&d);
    if (rv == 0 && out->oom)
        rv = TB_ENOMEM;
    return rv;
}
