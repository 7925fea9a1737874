/* ZooKeeper 3.8's documented keys that tumblerd does not act on, each with
 * why.  A zoo.cfg written for ZooKeeper starts: the keys here are accepted
 * (in a file and as flags) and named, with the reason, in the start-up's
 * one warning (tb_config_finish); a few are refused instead, because to
 * go on without them would change what the operator asked for in a way
 * that matters (a different quorum, members kept in another file).  Any
 * key neither here nor in config.c's table is an error.
 *
 * Keys are as zoo.cfg spells them, or as the system property without its
 * "zookeeper." prefix (which tb_config_set strips); a trailing '*'
 * matches a prefix.  Keys config.c's table knows are looked up there
 * first, so a key tumblerd comes to act on leaves this list by being
 * added there. */
#include <string.h>
#include <strings.h>

#include "server/config/config_int.h"

#define RAFT_TIMES "raft's electionTimeout and heartbeatInterval time the " \
                   "ensemble"
#define PEERS      "the links between members are tumblerd's own"
#define ONE_LOOP   "one event loop serves every connection"
#define NO_JVM     "there is no JVM"
#define THROTTLE   "globalOutstandingLimit bounds each connection's requests"
#define CNX_LIMIT  "maxClientCnxns and the open-file limit bound connections"
#define WATCHES    "the watch manager is tumblerd's own"
#define SNAPS      "snapshots are taken by snapCount and the log's size"
#define PROMETHEUS_TUNING                                                      \
    "the Prometheus provider's tuning: there is no JVM and no worker thread"

static const struct zk_key {
    const char *key;
    /* 1: a start with it set would not be what was asked; 2: so only if
     * it is true (what it switches on is not here). */
    int refused;
    const char *why;
} zk_keys[] = {
    /* the ensemble */
    {"initLimit", 0, RAFT_TIMES},
    {"syncLimit", 0, RAFT_TIMES},
    {"connectToLearnerMasterLimit", 0, RAFT_TIMES},
    {"cnxTimeout", 0, RAFT_TIMES},
    {"quorumCnxnTimeoutMs", 0, RAFT_TIMES},
    {"maxTimeToWaitForEpoch", 0, RAFT_TIMES},
    {"electionAlg", 0, "raft elects the leader"},
    {"fastleader.*", 0, "raft elects the leader"},
    {"peerType", 0, "server.N's :observer says it"},
    {"standaloneEnabled", 0,
     "no server.N line, or one, is standalone (an ensemble of one does not "
     "grow: start it with its members' lines)"},
    {"quorumListenOnAllIPs", 0,
     "the quorum ports listen on server.N's "
     "address"},
    {"syncEnabled", 0, "observers always keep the log"},
    {"observerMasterPort", 0, "observers follow the leader over raft"},
    {"observer.*", 0, "observers follow the leader over raft"},
    {"leaderServes", 0, "the leader always serves clients"},
    {"electionPortBindRetry", 0, PEERS},
    {"quorum.cnxn.threads.size", 0, PEERS},
    {"oraclePath", 0,
     "not supported: a majority of the voters is needed, as without it"},
    {"tcpKeepAlive", 0, PEERS},
    {"multiAddress.*", 0, "a member has one address"},
    {"learner.*", 0, PEERS},
    {"leader.*", 0, PEERS},
    {"maxConcurrentSnapSyncs", 0, "followers catch up through raft"},
    {"maxConcurrentDiffSyncs", 0, "followers catch up through raft"},
    {"localSessionsEnabled", 0, "every session is global"},
    {"localSessionsUpgradingEnabled", 0, "every session is global"},
    {"group.*", 1,
     "hierarchical quorums are not supported: the quorum "
     "would be another than the one configured"},
    {"weight.*", 1,
     "weighted quorums are not supported: the quorum would "
     "be another than the one configured"},
    {"dynamicConfigFile", 1,
     "not supported: write the server.N lines in "
     "this file"},
    {"quorum.auth.enableSasl", 2, "SASL between members is not supported"},
    {"quorum.auth.learnerRequireSasl", 2,
     "SASL between members is not supported"},
    {"quorum.auth.serverRequireSasl", 2,
     "SASL between members is not supported"},
    {"quorum.auth.*", 0, "SASL between members is not supported"},
    /* the log and snapshots */
    {"dataLogDir", 0, "the log is kept in dataDir"},
    {"preAllocSize", 0, "log segments are sized by tumblerd"},
    {"forceSync", 0, "the log always syncs"},
    {"fsync.warningthresholdms", 0, "the log's write times are metrics"},
    {"commitLogCount", 0, SNAPS},
    {"snapSizeLimitInKb", 0, SNAPS},
    {"txnLogSizeLimitInKb", 0, SNAPS},
    {"snapshot.*", 0, "snapshots have tumblerd's own format"},
    {"snapshotSizeFactor", 0, SNAPS},
    {"serializeLastProcessedZxid.enabled", 0,
     "snapshots have tumblerd's "
     "own format"},
    {"autopurge.*", 0,
     "old snapshots and log segments are removed as they "
     "are replaced"},
    /* ZooKeeper's guard for a wiped member is tumblerd's at every start
     * (replog/fresh.c). */
    {"db.autocreate", 0,
     "a member whose dataDir was emptied votes only once a leader has caught "
     "it up"},
    {"digest.enabled", 0, "not supported"},
    /* connections and requests */
    {"serverCnxnFactory", 0, "the TLS port needs no Netty"},
    {"netty.*", 0, "the TLS port needs no Netty"},
    {"nio.*", 0, ONE_LOOP},
    {"commitProcessor.*", 0, ONE_LOOP},
    {"flushDelay", 0, ONE_LOOP},
    {"maxWriteQueuePollTime", 0, ONE_LOOP},
    {"maxBatchSize", 0, ONE_LOOP},
    {"maxCnxns", 0, CNX_LIMIT},
    {"connectionMaxTokens", 0, CNX_LIMIT},
    {"connectionTokenFillTime", 0, CNX_LIMIT},
    {"connectionTokenFillCount", 0, CNX_LIMIT},
    {"connectionFreezeTime", 0, CNX_LIMIT},
    {"connectionDropIncrease", 0, CNX_LIMIT},
    {"connectionDropDecrease", 0, CNX_LIMIT},
    {"connectionDecreaseRatio", 0, CNX_LIMIT},
    {"connection_throttle_*", 0, CNX_LIMIT},
    {"clientTcpKeepAlive", 0, "not supported"},
    {"requestThrottleLimit", 0, THROTTLE},
    {"requestThrottleStallTime", 0, THROTTLE},
    {"requestThrottleDropStale", 0, THROTTLE},
    {"requestStaleLatencyCheck", 0, THROTTLE},
    {"requestStaleConnectionCheck", 0, THROTTLE},
    {"request_throttler.*", 0, THROTTLE},
    /* RequestThrottler's system properties, as zoo.cfg may spell them */
    {"request_throttle_*", 0, THROTTLE},
    {"request_stale_*", 0, THROTTLE},
    {"throttled_op_wait_time", 0, THROTTLE},
    {"throttledOpWaitTime", 0, THROTTLE},
    {"outstandingHandshake.limit", 0, CNX_LIMIT},
    {"advancedFlowControlEnabled", 0, THROTTLE},
    {"largeRequestMaxBytes", 0, "jute.maxbuffer bounds a request"},
    {"largeRequestThreshold", 0, "jute.maxbuffer bounds a request"},
    {"jute.maxbuffer.extrasize", 0, "jute.maxbuffer bounds a request"},
    {"maxResponseCacheSize", 0, "replies are not cached"},
    {"maxGetChildrenResponseCacheSize", 0, "replies are not cached"},
    {"closeSessionTxn.enabled", 0, "sessions are closed through the log"},
    {"enableEagerACLCheck", 0, "not supported"},
    {"skipACL", 0, "ACLs are always checked"},
    {"readonlymode.enabled", 0, "a member without a leader refuses clients"},
    {"emulate353TTLNodes", 0, "not supported"},
    {"znode.container.maxNeverUsedIntervalMs", 0,
     "a container is deleted only once it has had a child, as by its "
     "default 0"},
    /* watches */
    {"watchManagerName", 0, WATCHES},
    {"watcherCleanThreadsNum", 0, WATCHES},
    {"watcherCleanThreshold", 0, WATCHES},
    {"watcherCleanIntervalInSeconds", 0, WATCHES},
    {"maxInProcessingDeadWatchers", 0, WATCHES},
    {"bitHashCacheSize", 0, WATCHES},
    /* security */
    {"DigestAuthenticationProvider.digestAlg", 0,
     "digests are SHA-1, "
     "ZooKeeper's default"},
    {"ssl.authProvider", 0, "x509 is the TLS port's provider"},
    {"ssl.context.supplier.class", 0, NO_JVM},
    {"ssl.sslProvider", 0, "TLS is the system's OpenSSL"},
    {"fips-mode", 0, "TLS is the system's OpenSSL"},
    {"ssl.hostnameVerification", 0,
     "clients' certificates are checked "
     "against the trust store"},
    {"ssl.handshakeDetectionTimeoutMillis", 0, "not supported"},
    {"ssl.quorum.context.supplier.class", 0, NO_JVM},
    {"ssl.quorum.sslProvider", 0, "TLS is the system's OpenSSL"},
    {"ssl.quorum.handshakeDetectionTimeoutMillis", 0, "not supported"},
    {"kerberos.*", 0, "SASL is DIGEST-MD5 only"},
    {"ensembleAuthName", 0, "the ensemble scheme's provider is not supported"},
    {"audit.*", 0, "there is no audit log"},
    /* the AdminServer, metrics, the JVM */
    {"admin.portUnification", 0, "the AdminServer is plain HTTP"},
    {"admin.forceHttps", 0, "the AdminServer is plain HTTP"},
    /* The Prometheus provider's own keys, named: a misspelt httpHost must
     * not pass as tuning and leave /metrics on every interface. */
    {"metricsProvider.exportJvmInfo", 0, PROMETHEUS_TUNING},
    {"metricsProvider.numWorkerThreads", 0, PROMETHEUS_TUNING},
    {"metricsProvider.maxQueueSize", 0, PROMETHEUS_TUNING},
    {"metricsProvider.workerShutdownTimeoutMs", 0, PROMETHEUS_TUNING},
    {"metricsProvider.prometheusMetricsSummaryRotateIntervalSeconds", 0,
     PROMETHEUS_TUNING},
    {"messageTracker.*", 0, "not supported"},
    {"pathStats.*", 0, "not supported"},
    {"jvm.pause.*", 0, NO_JVM},
    {"jmx.*", 0, NO_JVM},
};

/* The entry for `name`, or NULL. */
static const struct zk_key *lookup(const char *name)
{
    size_t i, n;

    for (i = 0; i < sizeof zk_keys / sizeof zk_keys[0]; i++) {
        n = strlen(zk_keys[i].key);
        if (zk_keys[i].key[n - 1] == '*' ? strncmp(name, zk_keys[i].key,
                                                   n - 1) == 0
                                         : strcmp(name, zk_keys[i].key) == 0)
            return &zk_keys[i];
    }
    return NULL;
}

const char *config__zk_key(const char *name, const char *value, int *refused)
{
    const struct zk_key *k = lookup(name);

    if (k == NULL)
        return NULL;
    *refused = k->refused == 1 || (k->refused == 2 && value != NULL &&
                                   strcasecmp(value, "true") == 0);
    return k->why;
}
