#!/usr/bin/env bash
# tumblerd --check-config: validates a configuration and prints every key's
# effective value, touching nothing; exit 0, or 2 with the reason.  Every key
# it prints is accepted both in a file and as --key=value, with the same
# effect (the output fed back either way prints the same).  ZooKeeper keys
# that tumblerd does not act on are accepted both ways and named, with why,
# in one warning.
#   check_config.sh      (TUMBLERD names the server binary)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
it_init
d=$(it_tmpdir cfg)
passed=0
fail() { echo "FAIL: $*"; exit 1; }
ok() { passed=$((passed + 1)); echo "ok - $*"; }

cat > "$d/zoo.cfg" <<CFG
tickTime=2500
dataDir=$d/data
initLimit=10
syncLimit=5
forceSync=no
autopurge.snapRetainCount=3
metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
metricsProvider.httpPort=7001
ssl.keyStore.password=hunter2
server.1=127.0.0.1:2888:3888;2181
server.2=127.0.0.2:2888:3888;2181
server.3=127.0.0.3:2888:3888;2181
CFG
"$TUMBLERD" --check-config "$d/zoo.cfg" --serverId=2 > "$d/out" 2> "$d/err"
rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(cat "$d/err")"
for want in 'tickTime=2500' 'minSessionTimeout=5000' 'metricsProvider.httpPort=7001' \
    'serverId=2' 'ssl.keyStore.password=********' 'server.3=127.0.0.3:2888:3888;2181'; do
    grep -qxF "$want" "$d/out" || fail "no line $want in: $(cat "$d/out")"
done
! grep -q hunter2 "$d/out" "$d/err" || fail "a password was printed"
[ "$(grep -c ' WARN ' "$d/err")" = 1 ] || fail "warnings: $(cat "$d/err")"
grep -q 'WARN  ZooKeeper keys accepted and not acted on: initLimit (.*); syncLimit (.*); forceSync (the log always syncs); autopurge.snapRetainCount (' \
    "$d/err" || fail "warning: $(cat "$d/err")"
[ ! -e "$d/data" ] || fail "--check-config created the data directory"
ok "prints the effective configuration, hides secrets, names the keys not acted on, touches nothing"

# Every key, fed back as a file and as flags: the same effective text.
grep -v '^#' "$d/out" > "$d/again.cfg"
"$TUMBLERD" --check-config "$d/again.cfg" > "$d/out_file" 2>/dev/null ||
    fail "its own output as a file was refused"
mapfile -t flags < <(grep -v '^#' "$d/out" | sed 's/^/--/')
"$TUMBLERD" --check-config "${flags[@]}" > "$d/out_flags" 2>/dev/null ||
    fail "its own output as flags was refused"
diff <(grep -v '^#' "$d/out") <(grep -v '^#' "$d/out_file") > /dev/null ||
    fail "file round trip differs: $(diff <(grep -v '^#' "$d/out") "$d/out_file")"
diff "$d/out_file" "$d/out_flags" > /dev/null ||
    fail "file and flags differ: $(diff "$d/out_file" "$d/out_flags")"
n=$(grep -c '=' "$d/out_file")
ok "all $n keys accepted in a file and as flags, to the same effect"

"$TUMBLERD" --check-config --initLimit=10 --forceSync=no > /dev/null 2> "$d/err" ||
    fail "ZooKeeper's keys as flags: $(cat "$d/err")"
grep -q 'not acted on: initLimit' "$d/err" || fail "flag warning: $(cat "$d/err")"
ok "ZooKeeper keys not acted on are accepted as flags too"

# ZooKeeper 3.8's documented keys that tumblerd does not act on, from each
# part of its administrator's guide: accepted in a file and as flags, each
# named once in the one warning.
zk_keys=(dataLogDir=/var/lib/zookeeper/log commitLogCount=500 snapSizeLimitInKb=4194304
    maxCnxns=0 connectionMaxTokens=0 requestThrottleLimit=0 watchManagerName=x
    fastleader.minNotificationInterval=200 localSessionsEnabled=false
    zookeeper.nio.numWorkerThreads=8 admin.forceHttps=false audit.enable=false
    metricsProvider.exportJvmInfo=true jute.maxbuffer.extrasize=1024 snapshot.trust.empty=false
    maxTimeToWaitForEpoch=2000 quorumCnxnTimeoutMs=-1 znode.container.maxNeverUsedIntervalMs=0
    zookeeper.ensembleAuthName=prod zookeeper.db.autocreate=false)
printf '%s\n' "${zk_keys[@]}" > "$d/zk.cfg"
"$TUMBLERD" --check-config "$d/zk.cfg" > /dev/null 2> "$d/err" || fail "ZooKeeper's keys in a file: $(cat "$d/err")"
mapfile -t flags < <(printf -- '--%s\n' "${zk_keys[@]}")
"$TUMBLERD" --check-config "${flags[@]}" > /dev/null 2> "$d/err_flags" ||
    fail "ZooKeeper's keys as flags: $(cat "$d/err_flags")"
for f in "$d/err" "$d/err_flags"; do
    [ "$(grep -c ' WARN ' "$f")" = 1 ] || fail "warnings: $(cat "$f")"
    for kv in "${zk_keys[@]}"; do
        k=${kv%%=*}
        k=${k#zookeeper.}
        grep -qF " $k (" "$f" || fail "$k not named in: $(cat "$f")"
    done
done
ok "ZooKeeper's documented keys not acted on: accepted in a file and as flags, each named"

printf 'tickTime=2000\nsomeNewKey=1\n' > "$d/unknown.cfg"
"$TUMBLERD" --check-config "$d/unknown.cfg" > "$d/out" 2> "$d/err"
rc=$?
[ "$rc" = 2 ] || fail "unknown key: exit $rc"
grep -q "unknown.cfg:2: someNewKey: unknown key, neither tumblerd's nor one of ZooKeeper's" "$d/err" ||
    fail "unknown key: $(cat "$d/err")"
"$TUMBLERD" --check-config --group.1=1:2:3 > /dev/null 2> "$d/err"
[ $? = 2 ] && grep -q 'group.1: hierarchical quorums are not supported' "$d/err" ||
    fail "group.1: $(cat "$d/err")"
"$TUMBLERD" --check-config --java.security.auth.login.config="$d/missing.jaas" > /dev/null \
    2> "$d/err"
[ $? = 2 ] && grep -q "missing.jaas" "$d/err" || fail "a missing JAAS file: $(cat "$d/err")"
ok "an unknown key, one of ZooKeeper's that cannot be done without, or a JAAS file that cannot be read stops the start"

# A running server's conf: ZooKeeper's lines first, then every other key's
# effective value, a secret hidden.
port=$(free_port)
start_tumblerd "$d/run" "$port" --logLevel=warn --slowRequestMs=250 --ssl.keyStore.password=hunter2
wait_serving "$port" 30 "$SERVER_PID" || fail "the server did not start"
four_letter "$port" conf > "$d/conf"
[ "$(head -1 "$d/conf")" = "clientPort=$port" ] || fail "conf begins: $(head -3 "$d/conf")"
for want in 'logLevel=warn' 'slowRequestMs=250' 'tickTime=2000' 'ssl.keyStore.password=********' \
    'logFormat=text'; do
    [ "$(grep -cxF "$want" "$d/conf")" = 1 ] || fail "conf has not one line $want: $(cat "$d/conf")"
done
! grep -q hunter2 "$d/conf" || fail "conf printed a password"
stop_server "$SERVER_PID" 10
ok "conf shows every key's effective value after ZooKeeper's lines"

printf 'tickTime=fast\n' > "$d/bad.cfg"
"$TUMBLERD" --check-config "$d/bad.cfg" > "$d/out" 2> "$d/err"
rc=$?
[ "$rc" = 2 ] || fail "bad file: exit $rc"
grep -q "bad.cfg:1: tickTime: expected an integer, got \"fast\"" "$d/err" || fail "bad file: $(cat "$d/err")"
[ ! -s "$d/out" ] || fail "bad file printed a configuration"
"$TUMBLERD" --check-config --metricsProvider.className=x > /dev/null 2> "$d/err"
[ $? = 2 ] && grep -q 'unknown provider "x"' "$d/err" || fail "bad provider: $(cat "$d/err")"
"$TUMBLERD" --check-config --dataDir="$d/typo" --datadir.autocreate=false > /dev/null 2> "$d/err"
rc=$?
[ "$rc" = 2 ] && grep -qF "dataDir $d/typo does not exist and datadir.autocreate is false" "$d/err" ||
    fail "datadir.autocreate=false, no dataDir: exit $rc: $(cat "$d/err")"
[ ! -e "$d/typo" ] || fail "datadir.autocreate=false: the data directory was created"
ok "a bad configuration exits 2 naming the key"
echo "$passed passed, 0 failed"
