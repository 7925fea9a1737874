# Shared helpers for the integration tests: start Apache ZooKeeper or tumblerd on a free
# loopback port, wait until it serves, stop it, and clean everything up on exit.
#
# Sourced (not executed) by the test scripts.  Every server started here is recorded, and the EXIT
# trap installed by it_init stops them all, so a failing or interrupted test never leaves a server
# behind.  All waits are bounded.
#
# Apache ZooKeeper is started the way Debian's zkServer.sh start-foreground does it (java with
# zookeeper.jar, whose manifest Class-Path pulls in the other jars), but with ZooKeeperServerMain
# (standalone, no quorum code path), a private zoo.cfg and slf4j-simple logging to a file instead
# of the package's NOP logger, plus JVM flags that cut start-up time (C1 only, serial GC, CDS).
#
# Environment:
#   TUMBLERD      path of the tumblerd binary (start_tumblerd)
#   TUMBLERD_ARGS extra --key=value arguments for tumblerd (word-split)
#   ZK_JAVA       java binary (default: java on PATH)
#   IT_KEEP=1     keep the temporary directories (logs, data) after the run
#   IT_VERBOSE=1  echo what the helpers do

IT_PIDS=()   # servers started by this shell
IT_TUMBLERDS=" " # those of them that are tumblerd, space-separated
IT_JOBS=()   # other background commands started by run_bg
IT_TMPROOT=""

it_log()
{
    if [ "${IT_VERBOSE:-0}" = 1 ]; then echo "[it] $*" >&2; fi
}

it_die()
{
    echo "FATAL: $*" >&2
    exit 1
}

# it_init: create the run's temp root and install the cleanup trap.  Call once per script.
it_init()
{
    IT_TMPROOT=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-it.XXXXXX") || it_die "mktemp failed"
    trap it_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# it_tmpdir NAME: a fresh directory under the run's temp root.
it_tmpdir()
{
    local d="$IT_TMPROOT/$1"
    mkdir -p "$d" || it_die "cannot create $d"
    echo "$d"
}

# it_cleanup [STATUS]: stop every server started by this script, show their logs if the script
# failed (STATUS, by default that of the command before), and remove the temp root (unless
# IT_KEEP=1).  A tumblerd that does not exit 0 on SIGTERM fails the script: a clean shutdown
# is part of every test, and under the sanitizers that exit is where leaks are reported.
it_cleanup()
{
    local rc=${1:-$?}
    local pid
    # Test commands first (they may still talk to the servers), then the servers.
    for pid in "${IT_JOBS[@]}"; do
        stop_server "$pid" 5
    done
    IT_JOBS=()
    for pid in "${IT_PIDS[@]}"; do
        stop_server "$pid" 10
        [ "$STOP_STATUS" = 0 ] && continue
        case "$IT_TUMBLERDS" in
        *" $pid "*)
            echo "tumblerd pid $pid exited with status $STOP_STATUS on SIGTERM" >&2
            [ "$rc" != 0 ] || rc=1
            ;;
        esac
    done
    IT_PIDS=()
    if [ "$rc" != 0 ] && [ -n "$IT_TMPROOT" ] && [ -d "$IT_TMPROOT" ]; then
        local f
        for f in "$IT_TMPROOT"/*/server.log; do
            [ -f "$f" ] || continue
            echo "---- last lines of $f ----" >&2
            tail -n 30 "$f" >&2
        done
    fi
    if [ -n "$IT_TMPROOT" ] && [ -d "$IT_TMPROOT" ]; then
        if [ "${IT_KEEP:-0}" = 1 ]; then
            echo "kept $IT_TMPROOT" >&2
        else
            rm -rf "$IT_TMPROOT"
        fi
    fi
    exit "$rc"
}

# until_ok LIMIT_S COMMAND [ARG ...]: run COMMAND every 0.1 s until it succeeds; fails after
# LIMIT_S seconds.
until_ok()
{
    local deadline=$((SECONDS + $1))
    shift
    while ! "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

# run_bg LIMIT_S COMMAND [ARG ...]: start COMMAND in the background under timeout(1) and set
# BG_PID.  Running test commands in the background and waiting for them keeps this shell able
# to act on SIGTERM/SIGINT at once (bash runs traps only between foreground commands), and the
# EXIT trap stops what is still running.
run_bg()
{
    local limit=$1
    shift
    timeout --kill-after=5 "$limit" "$@" &
    BG_PID=$!
    IT_JOBS+=("$BG_PID")
}

# run_bounded LIMIT_S COMMAND [ARG ...]: run COMMAND (bounded) and return its exit status
# (124 on timeout).  Its stdin is this shell's stdin.
run_bounded()
{
    local limit=$1
    shift
    timeout --kill-after=5 "$limit" "$@" <&0 &
    BG_PID=$!
    IT_JOBS+=("$BG_PID")
    wait "$BG_PID"
}

# shellcheck source=../../scripts/port.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/port.sh"

# four_letter PORT WORD: send a four-letter word to 127.0.0.1:PORT and print the answer
# (bounded to 3 s).
four_letter()
{
    timeout 3 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
        printf "%s" "$1" >&3
        cat <&3
    ' "$1" "$2" 2>/dev/null
}

# For the ensemble tests, whose members are numbered, with their ports and
# folders in the caller's arrays cport, qport, eport and dir, and pids in
# pid:
# ens_init N: free ports and a folder for members 1..N.
# shellcheck disable=SC2034 # the arrays are the caller's
ens_init()
{
    local i
    cport=() qport=() eport=() dir=() pid=(0)
    for ((i = 1; i <= $1; i++)); do
        cport[$i]=$(free_port) qport[$i]=$(free_port) eport[$i]=$(free_port)
        dir[$i]=$(it_tmpdir "s$i") pid[$i]=0
    done
}
# ens_line I: member I's server.I line.
ens_line() { echo "server.$1=127.0.0.1:${qport[$1]}:${eport[$1]};127.0.0.1:${cport[$1]}"; }
# ens_super_digest: the superDigest of user "super", password "secret", as
# ZooKeeper's DigestAuthenticationProvider makes it.
ens_super_digest()
{
    /usr/bin/python3 -c 'import base64, hashlib
print("super:" + base64.b64encode(hashlib.sha1(b"super:secret").digest()).decode())'
}
# ens_reconfig_cfg DIR N: DIR/zoo.cfg for members 1..N, reconfig enabled for the super user
# (ens_super_digest's), and DIR/zoo<N+1>.cfg for a joiner: the same, its own line and
# joinEnsemble=true (ZooKeeper's joiners are given the members now and themselves).
ens_reconfig_cfg()
{
    local i
    {
        echo "tickTime=1000"
        echo "4lw.commands.whitelist=*"
        echo "reconfigEnabled=true"
        echo "DigestAuthenticationProvider.superDigest=$(ens_super_digest)"
        for ((i = 1; i <= $2; i++)); do ens_line "$i"; done
    } > "$1/zoo.cfg"
    { cat "$1/zoo.cfg"; ens_line $(($2 + 1)); echo "joinEnsemble=true"; } > "$1/zoo$(($2 + 1)).cfg"
}
# zk_reconfig_cfg TICK: for members 1-4 of ens_init, dir[I]/data/myid and
# dir[I]/zoo.cfg of an Apache ZooKeeper ensemble of 1-3 (tickTime TICK ms)
# with reconfig enabled; member 4's lists itself too, as ZooKeeper's
# joiners are started.  The super user is given on the JVM's command line.
zk_reconfig_cfg()
{
    local i j
    for i in 1 2 3 4; do
        mkdir -p "${dir[$i]}/data"
        echo "$i" > "${dir[$i]}/data/myid"
        {
            echo "tickTime=$1"
            echo "initLimit=20"
            echo "syncLimit=10"
            echo "dataDir=${dir[$i]}/data"
            echo "forceSync=yes"
            echo "4lw.commands.whitelist=*"
            echo "admin.enableServer=false"
            echo "reconfigEnabled=true"
            echo "standaloneEnabled=false"
            for j in 1 2 3; do ens_line "$j"; done
            [ "$i" = 4 ] && ens_line 4
        } > "${dir[$i]}/zoo.cfg"
    done
}
# zk_reconfig_start I: Apache ZooKeeper's member I of zk_reconfig_cfg (QuorumPeerMain), the
# super user ens_super_digest's, its output appended to dir[I]/server.log.  Does not wait.
zk_reconfig_start()
{
    # shellcheck disable=SC2046
    "${ZK_JAVA:-java}" $(zk_jvm_flags "${dir[$1]}/server.log") \
        -Dzookeeper.DigestAuthenticationProvider.superDigest="$(ens_super_digest)" \
        -Dzookeeper.admin.enableServer=false -Dzookeeper.jmx.log4j.disable=true \
        -cp "$(zk_classpath)" org.apache.zookeeper.server.quorum.QuorumPeerMain \
        "${dir[$1]}/zoo.cfg" >> "${dir[$1]}/server.log" 2>&1 < /dev/null &
    IT_PIDS+=("$!")
}
# ens_start I CFG [ARG...]: member I on CFG, its data in dir[I]/data, its
# output appended to dir[I]/server.log.
ens_start()
{
    local i=$1 cfg=$2
    shift 2
    "$TUMBLERD" "$cfg" --serverId="$i" --dataDir="${dir[$i]}/data" "$@" \
        >> "${dir[$i]}/server.log" 2>&1 < /dev/null &
    pid[$i]=$!
    IT_PIDS+=("${pid[$i]}")
    IT_TUMBLERDS+="${pid[$i]} "
}
# plain_answer PORT: what raft's own handshake in plain text (protocol 1, id 9, an address of
# 16 bytes) gets from 127.0.0.1:PORT: "tls" (nothing, or TLS records: an alert, content type
# 21, version 3.x) or "raft" (anything else: the port takes plain connections).
plain_answer()
{
    printf '\001\0\0\0\0\0\0\0\011\0\0\0\0\0\0\0\020\0\0\0\0\0\0\000127.0.0.1:1\0\0\0\0\0' |
        timeout 5 python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.stdin.buffer.read())
s.settimeout(3)
got = b""
try:
    while True:
        b = s.recv(4096)
        if not b:
            break
        got += b
except (socket.timeout, ConnectionResetError):
    pass
print("tls" if got == b"" or (got[0] == 21 and got[1] == 3) else "raft")
' "$1"
}
# member_mode I: what member I's srvr says it is (leader, follower, ...).
# shellcheck disable=SC2154 # cport is the caller's
member_mode() { four_letter "${cport[$1]}" srvr | sed -n 's/^Mode: //p'; }
# find_leader I...: L becomes the first of these members that leads.
# shellcheck disable=SC2034 # L is the caller's
find_leader()
{
    local i
    for i in "$@"; do
        [ "$(member_mode "$i")" = leader ] && { L=$i; return 0; }
    done
    return 1
}
# make_lead WANT I...: member WANT, one of the members I..., leads, most likely: while another
# does, it is paused until the rest have elected one of them, then resumed, up to 6 times.  L is
# the leader found last; fails if none leads.
# shellcheck disable=SC2154 # pid is the caller's
make_lead()
{
    local want=$1 n o i others
    shift
    for n in 1 2 3 4 5 6; do
        until_ok 15 find_leader "$@" || return 1
        [ "$L" = "$want" ] && return 0
        o=$L others=()
        for i in "$@"; do [ "$i" = "$o" ] || others+=("$i"); done
        kill -STOP "${pid[$o]}"
        until_ok 15 find_leader "${others[@]}"
        kill -CONT "${pid[$o]}"
    done
    until_ok 15 find_leader "$@"
}

# zk_classpath: the jars needed to run Apache ZooKeeper with quiet file logging.
zk_classpath()
{
    local j=/usr/share/java
    [ -f "$j/zookeeper.jar" ] || it_die "Apache ZooKeeper jars not found in $j"
    local cp="$j/zookeeper.jar:$j/zookeeper-jute.jar:$j/slf4j-api.jar:$j/slf4j-simple.jar" n
    # Netty carries TLS, on both sides: NettyServerCnxnFactory and ClientCnxnSocketNetty.
    for n in common buffer transport handler codec resolver transport-native-unix-common; do
        cp+=":$j/netty-$n.jar"
    done
    echo "$cp"
}

# zk_tls_cfg CERTDIR PORT: the zoo.cfg lines of a TLS port on 127.0.0.1:PORT with the server
# certificate of tls/mkcerts.sh, clients' certificates required (ZooKeeper's default).  tumblerd
# takes the same lines.
zk_tls_cfg()
{
    cat <<EOF
secureClientPort=$2
secureClientPortAddress=127.0.0.1
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
ssl.keyStore.location=$1/server.p12
ssl.keyStore.password=secret
ssl.trustStore.location=$1/trust.p12
ssl.trustStore.password=secret
EOF
}

# zk_tls_client_flags CERTDIR [NAME]: the JVM flags that make Java's client connect with TLS,
# presenting NAME's certificate of tls/mkcerts.sh (client by default; "none" for no certificate).
zk_tls_client_flags()
{
    echo "-Dzookeeper.client.secure=true" \
         "-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty" \
         "-Dzookeeper.ssl.trustStore.location=$1/trust.p12" \
         "-Dzookeeper.ssl.trustStore.password=secret"
    [ "${2:-client}" = none ] ||
        echo "-Dzookeeper.ssl.keyStore.location=$1/${2:-client}.p12" \
             "-Dzookeeper.ssl.keyStore.password=secret"
}

# zk_jvm_flags LOGFILE: JVM options shared by the server and zkCli: fast start, small heap,
# warnings only, to LOGFILE.
zk_jvm_flags()
{
    echo "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -Xms32m -Xmx256m" \
         "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn" \
         "-Dorg.slf4j.simpleLogger.logFile=$1" \
         "-Dorg.slf4j.simpleLogger.showDateTime=true"
}

# zkcli HOST:PORT LOGFILE [JVM FLAG ...]: Apache's CLI (ZooKeeperMain, what zkCli.sh runs) with
# commands from stdin (Debian ships no jline, so it reads plain lines), bounded to 90 s; its
# output on stdout.  Its exit status is 1 when the last command failed, 124 on the bound.
zkcli()
{
    local hostport=$1 log=$2
    shift 2
    # shellcheck disable=SC2046
    run_bounded 90 "${ZK_JAVA:-java}" $(zk_jvm_flags "$log") "$@" -cp "$(zk_classpath)" \
        org.apache.zookeeper.ZooKeeperMain -server "$hostport"
}

# zkcli_append WORK NAME HOSTPORT [JVM FLAG ...]: one CLI session, commands from stdin, its
# output normalized and appended to WORK/got under "=== NAME" (the raw output and the client's
# log stay in WORK).  The CLI exits 1 when its last command failed, which the transcript shows;
# any other failure ends the test.
zkcli_append()
{
    local work=$1 name=$2 hp=$3 rc
    shift 3
    echo "=== $name" >> "$work/got"
    zkcli "$hp" "$work/cli-$name.log" "$@" > "$work/raw-$name" 2>&1
    rc=$?
    if [ "$rc" -gt 1 ]; then
        echo "zkCli exited with $rc" >&2
        cat "$work/raw-$name" >&2
        exit 1
    fi
    zkcli_normalize < "$work/raw-$name" >> "$work/got"
}

# zkcli_normalize: zkCli's output, stdin to stdout, made comparable between runs and servers:
# zxids, times and session ids vary; lists whose order the server does not define and whoami's
# lines are sorted; watch notifications, which the CLI prints from another thread at no fixed
# place, are moved (in arrival order) to the end, after "--- events ---".
zkcli_normalize()
{
    awk '
    function flush_ids(   i, j, t) {
        # sort the "scheme: user" lines of whoami
        for (i = 1; i <= nid; i++)
            for (j = i + 1; j <= nid; j++)
                if (ids[j] < ids[i]) { t = ids[i]; ids[i] = ids[j]; ids[j] = t }
        for (i = 1; i <= nid; i++) print ids[i]
        nid = 0
    }
    function sort_list(s,   inner, n, a, i, j, t, out) {
        inner = substr(s, 2, length(s) - 2)
        if (inner == "") return s
        n = split(inner, a, ", ")
        for (i = 1; i <= n; i++)
            for (j = i + 1; j <= n; j++)
                if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        out = a[1]
        for (i = 2; i <= n; i++) out = out ", " a[i]
        return "[" out "]"
    }
    /^(digest|ip|sasl|x509|super|world): / { ids[++nid] = $0; next }
    { if (nid) flush_ids() }
    /^$/ || /^WATCHER::$/ || /^Connecting to / || /^Welcome to ZooKeeper!$/ { next }
    /^JLine support is / { next }
    /^WatchedEvent .*type:None/ { next }
    /^WatchedEvent / { ev[++nev] = $0; next }
    /^[cmp]Zxid = 0x/ { sub(/0x[0-9a-f]+$/, "0xZXID"); print; next }
    /^[cm]time = / { sub(/= .*/, "= DATE"); print; next }
    /^ephemeralOwner = 0x/ { if ($3 != "0x0") $3 = "0xSESSION"; print; next }
    /^\[.*\]$/ { print sort_list($0); next }
    { print }
    END {
        if (nid) flush_ids()
        print "--- events ---"
        for (i = 1; i <= nev; i++) print ev[i]
    }'
}

# start_zk DIR PORT: start a standalone Apache ZooKeeper with its own zoo.cfg and data in DIR,
# listening on 127.0.0.1:PORT; $ZK_CFG_EXTRA, if set, is added to the zoo.cfg, and $ZK_JVM_EXTRA
# (-D flags, split on blanks) to the JVM's command line.  Sets SERVER_PID
# (also written to DIR/server.pid).  Does not wait.
# Runs in the calling shell (not in $(...)) so the server stays this shell's child.
start_zk()
{
    local dir=$1 port=$2
    local java=${ZK_JAVA:-java}
    mkdir -p "$dir/data" || it_die "cannot create $dir/data"
    cat > "$dir/zoo.cfg" <<EOF
tickTime=2000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
forceSync=yes
4lw.commands.whitelist=*
admin.enableServer=false
${ZK_CFG_EXTRA:-}
EOF
    # shellcheck disable=SC2046
    "$java" $(zk_jvm_flags "$dir/server.log") ${ZK_JVM_EXTRA:-} \
        -Dzookeeper.extendedTypesEnabled=true \
        -Dznode.container.checkIntervalMs=1000 \
        -Dzookeeper.admin.enableServer=false \
        -Dzookeeper.jmx.log4j.disable=true \
        -cp "$(zk_classpath)" \
        org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" \
        >> "$dir/server.log" 2>&1 < /dev/null &
    SERVER_PID=$!
    IT_PIDS+=("$SERVER_PID")
    echo "$SERVER_PID" > "$dir/server.pid"
    it_log "started zookeeper pid $SERVER_PID on port $port in $dir"
}

# start_tumblerd DIR PORT [--key=value ...]: start $TUMBLERD with data in DIR on
# 127.0.0.1:PORT, same tick and container interval as start_zk.  Sets SERVER_PID.  Does not wait.
start_tumblerd()
{
    local dir=$1 port=$2
    shift 2
    [ -n "${TUMBLERD:-}" ] || it_die "TUMBLERD is not set"
    [ -x "$TUMBLERD" ] || it_die "TUMBLERD=$TUMBLERD is not executable"
    mkdir -p "$dir/data" || it_die "cannot create $dir/data"
    # shellcheck disable=SC2086
    "$TUMBLERD" --clientPort="$port" --clientPortAddress=127.0.0.1 --dataDir="$dir/data" \
        --tickTime=2000 --4lw.commands.whitelist='*' \
        --znode.container.checkIntervalMs=1000 \
        ${TUMBLERD_ARGS:-} "$@" \
        >> "$dir/server.log" 2>&1 < /dev/null &
    SERVER_PID=$!
    IT_PIDS+=("$SERVER_PID")
    IT_TUMBLERDS+="$SERVER_PID "
    echo "$SERVER_PID" > "$dir/server.pid"
    it_log "started tumblerd pid $SERVER_PID on port $port in $dir"
}

# start_server KIND DIR PORT: KIND is "zk" or "tumblerd".
start_server()
{
    case "$1" in
        zk) start_zk "$2" "$3" ;;
        tumblerd) start_tumblerd "$2" "$3" ;;
        *) it_die "unknown server kind '$1'" ;;
    esac
}

# wait_serving PORT TIMEOUT_S [PID]: wait until 127.0.0.1:PORT answers ruok with imok and srvr
# does not say it is "not currently serving requests".  ZooKeeper answers imok as soon as its
# listener is up, a few hundred ms before it serves sessions; srvr tells the difference.  Fails
# early if PID is given and that process has exited.
wait_serving()
{
    local port=$1 limit=$2 pid=${3:-}
    local deadline=$((SECONDS + limit))
    while [ "$SECONDS" -lt "$deadline" ]; do
        if [ "$(four_letter "$port" ruok)" = imok ] &&
            ! four_letter "$port" srvr | grep -q "not currently serving"; then
            return 0
        fi
        if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
            echo "server pid $pid exited before serving on port $port" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "server on port $port did not answer ruok within ${limit}s" >&2
    return 1
}

# running PID: true while PID runs, false once it is a zombie or gone.  One look at the process
# state: a zombie still answers kill -0, and the shell may reap it between a kill -0 and a ps.
running()
{
    local st
    st=$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)
    [ -n "$st" ] && [ "$st" != Z ]
}

# kill_group PID: SIGKILL to PID and, if it leads a process group (timeout(1)
# makes one for what it runs: run_bg), to the group.  What it runs must not
# outlive it, holding the test's output open: a process under LeakSanitizer
# that timeout's SIGTERM caught in its check at exit waits for good, the
# stop the check needs discarded by the SIGCONT timeout sends after it.
kill_group()
{
    [ "$(ps -o pgid= -p "$1" 2>/dev/null | tr -d ' ')" != "$1" ] ||
        kill -KILL -- "-$1" 2>/dev/null
    kill -KILL "$1" 2>/dev/null
}

# stop_server PID [TIMEOUT_S]: SIGTERM, then SIGKILL if it is still running after TIMEOUT_S
# (default 10).  Reaps the process if it is our child, and sets STOP_STATUS to the exit status
# of a child this stopped (0 for one that had already ended, or is not ours).
stop_server()
{
    local pid=$1 limit=${2:-10}
    STOP_STATUS=0
    running "$pid" || { wait "$pid" 2>/dev/null; return 0; }
    kill -TERM "$pid" 2>/dev/null
    local deadline=$((SECONDS + limit))
    while running "$pid" && [ "$SECONDS" -lt "$deadline" ]; do
        sleep 0.1
    done
    if running "$pid"; then
        echo "pid $pid ignored SIGTERM for ${limit}s; sending SIGKILL" >&2
        kill_group "$pid"
    fi
    wait "$pid" 2>/dev/null
    STOP_STATUS=$?
    [ "$STOP_STATUS" != 127 ] || STOP_STATUS=0
    return 0
}

# launch KIND NAME: start a server of KIND in a fresh dir NAME on a free port and wait until it
# serves.  Sets LAUNCH_PORT, LAUNCH_PID and LAUNCH_DIR.  Retries on another port if the first
# choice was taken in the meantime.
launch()
{
    local kind=$1 name=$2 attempt
    for attempt in 1 2 3; do
        LAUNCH_DIR=$(it_tmpdir "$name-$attempt")
        LAUNCH_PORT=$(free_port)
        start_server "$kind" "$LAUNCH_DIR" "$LAUNCH_PORT"
        LAUNCH_PID=$SERVER_PID
        if wait_serving "$LAUNCH_PORT" 60 "$LAUNCH_PID"; then
            it_log "$kind serving on 127.0.0.1:$LAUNCH_PORT"
            return 0
        fi
        stop_server "$LAUNCH_PID" 5
        if [ -f "$LAUNCH_DIR/server.log" ]; then tail -n 20 "$LAUNCH_DIR/server.log" >&2; fi
    done
    it_die "could not start $kind"
}
