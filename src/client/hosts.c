/* The connection string ("h1:p1,[::1]:p2/chroot") and the chroot applied to
 * every path going out and stripped from every path coming back.  The
 * chroot is purely client-side: the server never sees it (wire doc 8.3). */
#include <stdlib.h>

#include "client/client.h"
#include "common/path.h"

static int add_host(struct tb_client *c, const char *s, size_t n)
{
    const char *colon = NULL, *name = s;
    size_t name_len = n, i;
    struct host *h = &c->hosts[c->nhosts];

    if (n == 0)
        return TB_EINVAL;
    if (s[0] == '[') { /* [v6]:port */
        const char *close = memchr(s, ']', n);
        if (close == NULL)
            return TB_EINVAL;
        name = s + 1;
        name_len = (size_t)(close - s) - 1;
        if (close + 1 < s + n) {
            if (close[1] != ':')
                return TB_EINVAL;
            colon = close + 1;
        }
    } else {
        colon = memchr(s, ':', n);
        if (colon != NULL)
            name_len = (size_t)(colon - s);
    }
    if (name_len == 0)
        return TB_EINVAL;
    if (colon != NULL) {
        size_t plen = (size_t)(s + n - colon - 1);
        long port = 0;
        if (plen == 0 || plen > 5)
            return TB_EINVAL;
        for (i = 1; i <= plen; i++)
            if (colon[i] < '0' || colon[i] > '9')
                return TB_EINVAL;
            else
                port = port * 10 + (colon[i] - '0');
        if (port > 65535) /* getaddrinfo would wrap it */
            return TB_EINVAL;
        h->port = tb__strndup(colon + 1, plen);
    } else {
        h->port = tb__strndup("2181", 4);
    }
    h->name = tb__strndup(name, name_len);
    c->nhosts++;
    if (h->port == NULL || h->name == NULL)
        return TB_ENOMEM;
    return 0;
}

static int set_chroot(struct tb_client *c, const char *root)
{
    struct tb_str r = tb_str_c(root);

    if (tb_path_validate(r) != 0)
        return TB_EINVAL;
    if (r.len == 1) /* "/" is no chroot at all */
        return 0;
    c->chroot = tb__strndup(r.ptr, r.len);
    c->chroot_len = r.len;
    return c->chroot ? 0 : TB_ENOMEM;
}

int tb__hosts_parse(struct tb_client *c, const char *spec)
{
    const char *slash, *p, *q, *end, *comma;
    size_t n = 1;
    int rv;

    if (spec == NULL)
        return TB_EINVAL;
    slash = strchr(spec, '/');
    end = slash ? slash : spec + strlen(spec);
    for (p = spec; p < end; p++)
        n += *p == ',';
    c->hosts = tb__calloc(n, sizeof *c->hosts);
    if (c->hosts == NULL)
        return TB_ENOMEM;
    for (p = spec; p < end; p = comma + 1) {
        comma = memchr(p, ',', (size_t)(end - p));
        if (comma == NULL)
            comma = end;
        /* Each entry trimmed, as Java's client trims it: "a ,b" is a */
        for (q = comma; q > p && q[-1] == ' '; q--)
            ;
        while (p < q && *p == ' ')
            p++;
        if ((rv = add_host(c, p, (size_t)(q - p))) != 0)
            return rv;
        if (comma == end)
            break;
    }
    if (slash != NULL && (rv = set_chroot(c, slash)) != 0)
        return rv;
    return 0;
}

void tb__hosts_free(struct tb_client *c)
{
    size_t i;

    for (i = 0; i < c->nhosts; i++) {
        if (c->hosts[i].lookup != NULL)
            tb__lookup_abandon(c->hosts[i].lookup);
        tb__free(c->hosts[i].name);
        tb__free(c->hosts[i].port);
    }
    tb__free(c->hosts);
    tb__free(c->chroot);
    c->hosts = NULL;
    c->chroot = NULL;
    c->nhosts = 0;
}

/* Fisher-Yates with a splitmix64 stream: spreads clients over the servers
 * without touching the C library's global rand() state. */
void tb__hosts_shuffle(struct tb_client *c, uint64_t seed)
{
    size_t i, j;
    struct host t;

    for (i = c->nhosts; i > 1; i--) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        j = (size_t)(z % i);
        t = c->hosts[i - 1];
        c->hosts[i - 1] = c->hosts[j];
        c->hosts[j] = t;
    }
}

int tb__path_server(struct tb_client *c, const char *path, int seq,
                    struct tb_wbuf *scratch, struct tb_str *out)
{
    struct tb_str p = tb_str_c(path);
    int rv;

    if (p.ptr == NULL)
        return TB_EBADARGUMENTS;
    if (seq && p.len > 0 && p.ptr[p.len - 1] == '/') {
        /* "/parent/" + suffix is valid: check it with a stand-in suffix. */
        tb_wbuf_put(scratch, p.ptr, p.len);
        tb_wbuf_put(scratch, "1", 1);
        rv = scratch->oom ? TB_ENOMEM
                          : tb_path_validate((struct tb_str){
                                (const char *)scratch->base, scratch->len});
        scratch->len = 0;
    } else {
        rv = tb_path_validate(p);
    }
    if (rv != 0)
        return rv;
    if (c->chroot == NULL) {
        *out = p;
        return 0;
    }
    scratch->len = 0;
    tb_wbuf_put(scratch, c->chroot, c->chroot_len);
    if (p.len > 1 || seq) /* "/" alone is the chroot itself */
        tb_wbuf_put(scratch, p.ptr, p.len);
    if (scratch->oom)
        return TB_ENOMEM;
    *out = (struct tb_str){(const char *)scratch->base, scratch->len};
    return 0;
}

const char *tb__path_strip(struct tb_client *c, const char *p, size_t len,
                           size_t *out_len)
{
    size_t n = c->chroot_len;

    if (c->chroot != NULL && len >= n && memcmp(p, c->chroot, n) == 0) {
        if (len == n) {
            *out_len = 1;
            return "/";
        }
        if (p[n] == '/') {
            *out_len = len - n;
            return p + n;
        }
    }
    *out_len = len;
    return p;
}
