# Starting and stopping the servers under test, for bench/smoke.sh and bench/compare.sh (sourced).
#
# Both servers get the same durability (every write synced before it is acknowledged: tumblerd's
# raft log is opened O_DSYNC, Apache ZooKeeper runs with its default forceSync=yes), listen on
# 127.0.0.1, accept any number of connections per address, and keep their data in a fresh directory
# on the same disk.  ZooKeeper runs on the JVM's defaults plus the heap limit of Apache's own
# zkEnv.sh (-Xmx1000m); the only other change is logging at WARN to a file, so it does not spend
# time logging every session.
#
# Every server started here is remembered and stopped by bs_cleanup (installed as the EXIT trap by
# bs_init).  All waits are bounded.

BS_PIDS=()
BS_ROOT=""
BS_TMPFS="" # compare.sh's and ensemble.sh's directory on tmpfs, removed with BS_ROOT

bs_init()
{
    BS_ROOT=$(mktemp -d "${BS_TMPDIR:-/var/tmp}/tbbench.XXXXXX") || exit 1
    trap bs_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

bs_cleanup()
{
    local rc=$? pid
    for pid in "${BS_PIDS[@]}"; do
        bs_stop "$pid"
    done
    BS_PIDS=()
    if [ -n "$BS_ROOT" ] && [ -d "$BS_ROOT" ]; then
        if [ "$rc" != 0 ]; then
            for f in "$BS_ROOT"/*/server.log; do
                [ -f "$f" ] && { echo "---- $f" >&2; tail -n 20 "$f" >&2; }
            done
        fi
        [ "${BS_KEEP:-0}" = 1 ] && echo "kept $BS_ROOT" >&2 || rm -rf "$BS_ROOT"
    fi
    [ -n "$BS_TMPFS" ] && rm -rf "$BS_TMPFS"
    return "$rc"
}

# shellcheck source=../scripts/port.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/port.sh"

# bs_start KIND NAME PORT: start tumblerd ($TUMBLERD) or zookeeper in $BS_ROOT/NAME on PORT,
# in the background, without waiting.  Sets BS_PID and BS_EXEC_US (wall clock of the start,
# microseconds, taken just before the fork).  With BS_TLS=DIR (certificates of
# tests/integration/tls/mkcerts.sh) the server also has a TLS port, PORT + 1, that requires
# client certificates; ZooKeeper then runs on Netty, which its TLS port needs.
bs_start()
{
    local kind=$1 dir=$BS_ROOT/$2 port=$3
    mkdir -p "$dir/data"
    case "$kind" in
        tumbler)
            # Made before the clock starts: the pipeline's processes took
            # 20 ms, counted as tumblerd's start-up.
            local tls=() line
            while IFS= read -r line; do
                [[ $line == serverCnxnFactory=* ]] || tls+=("--$line")
            done < <(bs_tls_cfg "$port")
            BS_EXEC_US=${EPOCHREALTIME/./}
            "$TUMBLERD" --clientPort="$port" --clientPortAddress=127.0.0.1 \
                --dataDir="$dir/data" --maxClientCnxns=0 --tickTime=2000 \
                --4lw.commands.whitelist='*' --logLevel=warn "${tls[@]}" \
                > "$dir/server.log" 2>&1 < /dev/null &
            ;;
        zookeeper)
            cat > "$dir/zoo.cfg" <<EOF
tickTime=2000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
forceSync=yes
4lw.commands.whitelist=*
admin.enableServer=false
$(bs_tls_cfg "$port")
EOF
            local j=/usr/share/java n cp
            cp="$j/zookeeper.jar:$j/zookeeper-jute.jar:$j/slf4j-api.jar:$j/slf4j-simple.jar"
            for n in common buffer transport handler codec resolver transport-native-unix-common; do
                cp+=":$j/netty-$n.jar"
            done
            BS_EXEC_US=${EPOCHREALTIME/./}
            java -Xmx1000m \
                -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
                -Dorg.slf4j.simpleLogger.logFile="$dir/server.log" \
                -Dzookeeper.admin.enableServer=false \
                -Dzookeeper.jmx.log4j.disable=true \
                -cp "$cp" \
                org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" \
                >> "$dir/server.log" 2>&1 < /dev/null &
            ;;
        *) echo "unknown server kind $kind" >&2; return 1 ;;
    esac
    BS_PID=$!
    BS_PIDS+=("$BS_PID")
}

# bs_tls_cfg PORT: the zoo.cfg lines of the TLS port when BS_TLS is set, else nothing.
bs_tls_cfg()
{
    [ -n "${BS_TLS:-}" ] || return 0
    cat <<EOF
secureClientPort=$(($1 + 1))
secureClientPortAddress=127.0.0.1
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
ssl.keyStore.location=$BS_TLS/server.p12
ssl.keyStore.password=secret
ssl.trustStore.location=$BS_TLS/trust.p12
ssl.trustStore.password=secret
EOF
}

# bs_start_probed KIND NAME PORT CMD...: runs CMD, a `tbbench serving --since @$BS_ROOT/NAME.exec`
# probing PORT, in the background, and starts the server once CMD has had half a second to start,
# so that the probe's own start-up is not counted in the server's; the server's exec time goes
# to that file.  Sets BS_PID; returns CMD's status.
bs_start_probed()
{
    local kind=$1 name=$2 port=$3 probe rc=0
    shift 3
    "$@" &
    probe=$!
    sleep 0.5
    bs_start "$kind" "$name" "$port"
    echo "$BS_EXEC_US" > "$BS_ROOT/$name.exec"
    wait "$probe" || rc=$?
    return "$rc"
}

# bs_stop PID: SIGTERM, SIGKILL after 10 s; reaps it.
bs_stop()
{
    local pid=$1 i
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    kill -TERM "$pid" 2>/dev/null
    for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = Z ] && break
        sleep 0.1
    done
    # (It may exit between the checks: then kill fails, and that is fine.)
    if kill -0 "$pid" 2>/dev/null && [ "$(ps -o stat= -p "$pid" | cut -c1)" != Z ]; then
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    local keep=() p
    for p in "${BS_PIDS[@]}"; do [ "$p" != "$pid" ] && keep+=("$p"); done
    BS_PIDS=("${keep[@]}")
    return 0
}
