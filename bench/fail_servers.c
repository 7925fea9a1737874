/* The servers tbfail is given (--servers A,B,...), and opening a session on
 * them: on each in turn until one takes it, or again on the same one. */
#include <stdio.h>
#include <string.h>

#include "tbfail.h"

struct tf_srv tf_srvs[TF_MAX_SRV];
int tf_nsrv;

int tf_parse_servers(const char *list)
{
    char buf[1024], *save = NULL, *tok;

    snprintf(buf, sizeof(buf), "%s", list);
    tf_nsrv = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (tf_nsrv == TF_MAX_SRV ||
            bn_resolve(tok, &tf_srvs[tf_nsrv].ss, &tf_srvs[tf_nsrv].len) != 0) {
            fprintf(stderr, "tbfail: cannot resolve %s\n", tok);
            return -1;
        }
        snprintf(tf_srvs[tf_nsrv].name, sizeof(tf_srvs[tf_nsrv].name), "%s",
                 tok);
        tf_nsrv++;
    }
    return tf_nsrv > 0 ? 0 : -1;
}

/* Opens on server `first`, trying the others in turn, until `deadline`. */
int tf_sess_open_any(struct tf_sess *s, int first, int n, uint64_t deadline,
                     int *at)
{
    int i = first, rc = TB_EOPTIMEOUT;

    while (bn_now_ns() < deadline) {
        uint64_t d = bn_now_ns() + 2000000000ull;
        rc = tf_sess_open(s, &tf_srvs[i % n], d < deadline ? d : deadline);
        if (rc == 0) {
            if (at != NULL)
                *at = i % n;
            return 0;
        }
        i++;
        bn_sleep_ms(20);
    }
    return rc;
}

/* Opens on server `v` alone, again every 20 ms until `deadline` (a member
 * just started may close new connections until it has a leader link). */
int tf_sess_open_retry(struct tf_sess *s, const struct tf_srv *v,
                       uint64_t deadline)
{
    int rc;

    for (;;) {
        uint64_t d = bn_now_ns() + 2000000000ull;
        rc = tf_sess_open(s, v, d < deadline ? d : deadline);
        if (rc == 0 || bn_now_ns() >= deadline)
            return rc;
        bn_sleep_ms(20);
    }
}
