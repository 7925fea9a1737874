/* The checks once every key is read (tb_config_finish): keys that must
 * agree with each other, files and folders they name, what follows from
 * them (session timeouts from tickTime, enforce.auth's schemes).  Reading
 * the keys is config.c's and config_args.c's; an ensemble's lines,
 * config_ensemble.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/config/config.h"
#include "server/config/config_int.h"
#include "server/logging/log.h"

static void timeout_text(char *buf, size_t cap, int value, int set,
                         int factor)
{
    if (set)
        snprintf(buf, cap, "%d", value);
    else
        snprintf(buf, cap, "%d, %d x tickTime", value, factor);
}

/* enforce.auth as ZooKeeper's AuthenticationHelper resolves it: the
 * schemes must be given, and each must have a provider here.  The list
 * is rewritten without the blanks around its names, as Java trims them,
 * and resolved to bits once, so that a request tests a mask. */
static int finish_enforce_auth(struct tb_config *cfg, char *err, size_t errlen)
{
    const char *list;
    struct tb_str it;
    char *out, *o;
    unsigned bit, mask = 0;

    if (cfg->session_require_sasl)
        cfg->enforce_auth = 1;
    list = cfg->session_require_sasl ? "sasl" : cfg->enforce_auth_schemes;
    if (!cfg->enforce_auth)
        return 0;
    if (list == NULL) {
        set_err(err, errlen,
                "enforce.auth.enabled is true: "
                "enforce.auth.schemes must be configured");
        return TB_EINVAL;
    }
    if ((o = out = malloc(strlen(list) + 1)) == NULL) {
        set_err(err, errlen, "out of memory");
        return TB_ENOMEM;
    }
    while (tb_config_list_next(&list, &it)) {
        bit = tb_config_scheme_bit(it.ptr, it.len);
        if (bit == 0 || (bit == TB_SCHEME_SASL && !cfg->sasl_acls) ||
            (bit == TB_SCHEME_X509 && cfg->tls.port == 0)) {
            set_err(err, errlen,
                    "enforce.auth.schemes: the scheme \"%.*s\" "
                    "is not available%s",
                    (int)it.len, it.ptr,
                    bit == TB_SCHEME_SASL
                        ? " (authProvider.N=org.apache.zookeeper.server.auth."
                          "SASLAuthenticationProvider makes it so)"
                    : bit == TB_SCHEME_X509 ? " (secureClientPort makes it so)"
                                            : "");
            free(out);
            return TB_EINVAL;
        }
        mask |= bit;
        o += sprintf(o, "%s%.*s", o == out ? "" : ",", (int)it.len, it.ptr);
    }
    free(cfg->enforce_auth_schemes);
    cfg->enforce_auth_schemes = out;
    cfg->enforce_auth_mask = mask;
    return 0;
}

/* What can be checked without reading the stores (net/tls.c does that
 * when the port opens): a TLS port needs the server's key store, and
 * ssl.clientAuth is one of ZooKeeper's three words, in any case. */
#define PROMETHEUS_PROVIDER                                                 \
    "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider"

/* metricsProvider.className names the one provider that serves anything,
 * or one of ZooKeeper's two that serve nothing; admin.commandURL is a
 * path. */
static int finish_http(struct tb_config *cfg, char *err, size_t errlen)
{
    const char *cls = cfg->metrics.class_name, *url = cfg->admin.command_url;
    size_t n;

    cfg->metrics.enabled = cls != NULL && strcmp(cls, PROMETHEUS_PROVIDER) == 0;
    if (cls != NULL && !cfg->metrics.enabled &&
        strcmp(cls, "org.apache.zookeeper.metrics.impl.DefaultMetricsProvider")
            != 0 &&
        strcmp(cls, "org.apache.zookeeper.metrics.impl.NullMetricsProvider") !=
            0) {
        set_err(err, errlen, "metricsProvider.className: unknown provider "
                "\"%s\"; expected " PROMETHEUS_PROVIDER, cls);
        return TB_EINVAL;
    }
    if (url == NULL || url[0] != '/') {
        set_err(err, errlen, "admin.commandURL: expected a path such as "
                "/commands, got \"%s\"", url ? url : "");
        return TB_EINVAL;
    }
    /* "/" becomes "": the commands are then /srvr, not //srvr. */
    n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        cfg->admin.command_url[--n] = '\0';
    return 0;
}

static int finish_tls(struct tb_config *cfg, char *err, size_t errlen)
{
    static const char *const words[] = {"none", "want", "need"}; /* TB_TLS_ */
    const char *name = cfg->tls.client_auth_name;
    int i = TB_TLS_NEED;

    if (name != NULL)
        for (i = 0; i < 3 && strcasecmp(name, words[i]) != 0; i++)
            ;
    if (i == 3) {
        set_err(err, errlen,
                "ssl.clientAuth: expected need, want or none, got \"%s\"",
                name);
        return TB_EINVAL;
    }
    cfg->tls.client_auth = i;
    /* Security a client would count on that is not here: refused, never
     * ignored. */
    name = cfg->tls.crl ? "ssl.crl" : cfg->tls.ocsp ? "ssl.ocsp"
           : cfg->tls.port_unification ? "client.portUnification" : NULL;
    if (name != NULL) {
        set_err(err, errlen, "%s=true is not supported", name);
        return TB_EINVAL;
    }
    if (cfg->tls.port == 0)
        return 0;
    if (cfg->tls.key_store == NULL) {
        set_err(err, errlen, "secureClientPort is set: ssl.keyStore.location "
                "must name the server's key and certificate");
        return TB_EINVAL;
    }
    /* Checked against the system's CAs, any certificate a public CA signed
     * would be an x509 id; ZooKeeper's provider refuses every client then. */
    if (cfg->tls.client_auth != TB_TLS_NONE && cfg->tls.trust_store == NULL) {
        set_err(err, errlen,
                "ssl.clientAuth=%s: ssl.trustStore.location must "
                "name the CAs whose clients' certificates are taken (or "
                "ssl.clientAuth=none)",
                words[cfg->tls.client_auth]);
        return TB_EINVAL;
    }
    /* As ZooKeeper does: with no clientPort written down, or 0 (its
     * "not set"), the TLS port is the only one (an ensemble's server line
     * may still name a plain one).  A TLS-only configuration must not
     * open an unencrypted port. */
    if (cfg->origin_client_port.line < 0 || cfg->client_port == 0)
        cfg->client_port = -1;
    return 0;
}

/* sslQuorum needs this member's key store (tumblerd reads the stores at
 * start-up); what a member must present is not negotiable. */
static int finish_quorum_tls(struct tb_config *cfg, char *err, size_t errlen)
{
    const char *name = cfg->quorum_tls.client_auth_name;

    if (name != NULL && strcasecmp(name, "need") != 0) {
        set_err(err, errlen, "ssl.quorum.clientAuth: only need is supported "
                "(members authenticate each other), got \"%s\"", name);
        return TB_EINVAL;
    }
    name = cfg->quorum_tls.crl ? "ssl.quorum.crl"
           : cfg->quorum_tls.ocsp ? "ssl.quorum.ocsp" : NULL;
    if (name != NULL) {
        set_err(err, errlen, "%s=true is not supported", name);
        return TB_EINVAL;
    }
    name = cfg->quorum_tls.enabled            ? "sslQuorum"
           : cfg->quorum_tls.port_unification ? "portUnification" : NULL;
    if (name != NULL && cfg->quorum_tls.key_store == NULL) {
        set_err(err, errlen, "%s is true: ssl.quorum.keyStore.location "
                "must name this member's key and certificate", name);
        return TB_EINVAL;
    }
    return 0;
}

/* datadir.autocreate=false, as in ZooKeeper: a dataDir that is not there
 * stops the start, so that a mistyped one does not serve an empty tree.
 * Checked here, before anything is created (and by --check-config). */
static int finish_data_dir(const struct tb_config *cfg, char *err,
                           size_t errlen)
{
    struct stat st;

    if (cfg->data_dir_autocreate)
        return 0;
    if (stat(cfg->data_dir, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            set_err(err, errlen,
                    "dataDir %s does not exist and "
                    "datadir.autocreate is false: create it first (or set "
                    "datadir.autocreate=true)",
                    cfg->data_dir);
        else
            set_err(err, errlen, "dataDir %s: %s", cfg->data_dir,
                    strerror(errno));
        return TB_EINVAL;
    }
    if (!S_ISDIR(st.st_mode)) {
        set_err(err, errlen, "dataDir %s is not a directory", cfg->data_dir);
        return TB_EINVAL;
    }
    return 0;
}

/* joinEnsemble waits for a leader to send the log; with no server.N lines
 * there is none to wait for, and the server would never serve. */
static int finish_join(const struct tb_config *cfg, char *err, size_t errlen)
{
    if (cfg->join_ensemble && cfg->nservers == 0) {
        set_err(err, errlen,
                "joinEnsemble is true but there are no server.N "
                "lines: a joining server needs the ensemble's members and "
                "its own line (or joinEnsemble=false to run alone)");
        return TB_EINVAL;
    }
    return 0;
}

int tb_config_finish(struct tb_config *cfg, char *err, size_t errlen)
{
    const struct tb_config_origin *o;
    char at[512], min_txt[64], max_txt[64];
    const char *key;
    int rv;

    if (cfg->data_dir == NULL || cfg->client_port_address == NULL ||
        cfg->fourlw_whitelist == NULL) {
        set_err(err, errlen, "out of memory");
        return TB_ENOMEM;
    }
    if (cfg->ignored != NULL && !cfg->ignored_told) {
        tb_log(TB_LOG_WARN, "ZooKeeper keys accepted and not acted on: %s",
               cfg->ignored);
        cfg->ignored_told = 1;
    }
    if ((rv = finish_data_dir(cfg, err, errlen)) != 0 ||
        (rv = finish_join(cfg, err, errlen)) != 0 ||
        (rv = finish_tls(cfg, err, errlen)) != 0 ||
        (rv = finish_quorum_tls(cfg, err, errlen)) != 0 ||
        (rv = finish_http(cfg, err, errlen)) != 0 ||
        (rv = finish_enforce_auth(cfg, err, errlen)) != 0 ||
        (rv = config__finish_ensemble(cfg, err, errlen)) != 0)
        return rv;
    /* The client port's address as finally set: an ensemble's server line
     * may give it. */
    if (cfg->tls.port != 0 && cfg->tls.address == NULL &&
        (cfg->tls.address = strdup(cfg->client_port_address)) == NULL) {
        set_err(err, errlen, "out of memory");
        return TB_ENOMEM;
    }
    if (cfg->heartbeat_interval >= cfg->election_timeout) {
        set_err(err, errlen, "heartbeatInterval (%d ms) must be less than "
                "electionTimeout (%d ms)", cfg->heartbeat_interval,
                cfg->election_timeout);
        return TB_EINVAL;
    }
    if (!cfg->min_session_timeout_set)
        cfg->min_session_timeout = 2 * cfg->tick_time;
    if (!cfg->max_session_timeout_set)
        cfg->max_session_timeout = 20 * cfg->tick_time;
    if (cfg->min_session_timeout <= cfg->max_session_timeout)
        return 0;
    /* Blame the key that was written down; min if both were. */
    if (cfg->min_session_timeout_set) {
        o = &cfg->origin_min_to;
        key = "minSessionTimeout";
    } else {
        o = &cfg->origin_max_to;
        key = "maxSessionTimeout";
    }
    where(at, sizeof at, o, key);
    timeout_text(min_txt, sizeof min_txt, cfg->min_session_timeout,
                 cfg->min_session_timeout_set, 2);
    timeout_text(max_txt, sizeof max_txt, cfg->max_session_timeout,
                 cfg->max_session_timeout_set, 20);
    set_err(err, errlen, "%s: minSessionTimeout (%s) must not be larger than "
            "maxSessionTimeout (%s)", at, min_txt, max_txt);
    return TB_EINVAL;
}
