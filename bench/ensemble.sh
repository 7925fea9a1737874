#!/usr/bin/env bash
# A 3-node tumblerd ensemble against a 3-node Apache ZooKeeper 3.8 ensemble, side by side on
# loopback, in one run:
#
#   bench/ensemble.sh     (environment: BUILD_DIR, QUICK=1, KILLS, STOPS, ROLLS, REPEATS, ZK_TICK,
#                          ZK_INIT_LIMIT, ZK_SYNC_LIMIT, TB_ELECTION, TB_HEARTBEAT, BS_KEEP=1,
#                          PARTS, P4, MEM_TRIALS, MNTR=1, METRICS=1, PERF=1)
#
#   Timeouts: each system's defaults unless set.  ZooKeeper's from ZK_TICK, ZK_INIT_LIMIT and
#   ZK_SYNC_LIMIT (tickTime, initLimit, syncLimit); tumblerd's from TB_ELECTION and
#   TB_HEARTBEAT (electionTimeout, heartbeatInterval, in ms).  A run with any of them set
#   writes bench/last-ensemble...-tuned.*, e.g. the failovers with both tuned:
#     ZK_TICK=500 ZK_SYNC_LIMIT=2 TB_ELECTION=150 TB_HEARTBEAT=15 PARTS="1 2" bench/ensemble.sh
#
#   PARTS="4 5" runs those parts alone (default: all; 3 comes with 1); P4 names part 4's
#   scenarios (default "lock_fair_1 lock_fair_10 raw single"; also lock_fair_1_leader: one lock
#   with every session on the leader, no write forwarded); MEM_TRIALS=3 repeats part 5 on
#   fresh ensembles; MNTR=1 keeps every member's mntr before and after each tbbench run of part 4
#   (in $BS_ROOT/mntr/, with BS_KEEP=1); METRICS=1 gives each tumblerd a metrics port and keeps
#   its GET /metrics (the latency histograms) beside them; PERF=1 records the whole machine
#   (perf record -a -g) over each of tumblerd's lock runs, in $BS_ROOT/perf/ (not for figures:
#   the recording costs CPU).
#
#   1. failover after kill -9 of the leader: tbfail, a session already on a survivor, writes
#      sequential nodes one after the other (each given 250 ms, then the connection is dropped
#      and the session taken up again on the other survivor after 5 ms); the figure is kill(2)
#      to the first acknowledgement of a write sent after it.  Every acknowledged write is then
#      looked for on every server;
#   2. the same after SIGSTOP of the leader; a second session, on the leader, sends one create
#      while it is stopped; SIGCONT 300 ms after the first write acknowledged through a survivor,
#      and what that session hears is reported, beside how many copies of its node the tree holds;
#   3. rejoin: the killed leader restarted (fork) until its srvr says follower with the leader's
#      zxid; and the stopped one, from SIGCONT, likewise;
#   4. throughput through all three nodes (tbbench, sessions round-robin over them), on fresh
#      ensembles: fair lock, 100 clients on 1 and on 10 locks; pipelined creates, gets and
#      deletes; one client's creates one at a time through the leader and through a follower.
#      The fair-lock scenarios also run against a third ensemble, tumblerd with its members' data
#      on tmpfs ("tmpfs"): with no disk write, its rate is the most the rest of a handoff (the
#      messages, six processes, the two CPUs) allows on this machine, a bound the report sets
#      beside the goals; and the disk's floor is taken once (tbbench disk, no server);
#   5. RSS of every node: idle after the start, after the runs above, and on fresh ensembles
#      before and after 100,000 znodes of 100 bytes (2 s after the last create); then, after that
#      figure is taken, each ZooKeeper member's Java heap (jcmd GC.heap_info: committed and used),
#      and its heap and RSS again after a full collection (jcmd GC.run), what its tree needs;
#   6. (run after 2) a rolling restart: each member in turn gets SIGTERM, is started again and
#      waited for until it follows with the leader's zxid and takes a write (tbfail rejoin), while
#      tbfail writer writes one node after another through all three without pause; the figure
#      is the longest time that client waited between two acknowledgements, then every
#      acknowledged write is looked for on every server.
# Trials alternate between the systems (which goes first flips every trial); both ensembles stay
# up the whole run, one idle while the other is measured.  Failover trials restart the killed node
# in place (the next trial kills whoever leads then).  The RESULT lines go to
# bench/last-ensemble-results.txt and a summary (medians, ratios tumbler/zookeeper) to stdout and
# bench/last-ensemble.md.  QUICK=1 makes every part short, for trying the script; its figures are
# not results.  Not a test: nothing here is in ctest.
set -Eeuo pipefail
trap 'echo "ensemble.sh: line $LINENO: command failed" >&2' ERR
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}
QUICK=${QUICK:-0}
# ZooKeeper's defaults, those of its zoo_sample.cfg: a follower gives a silent leader
# syncLimit x tickTime.  tumblerd's (electionTimeout 500 ms, heartbeatInterval 50 ms) are its
# own unless TB_ELECTION and TB_HEARTBEAT are set.
TUNED=0
[ -z "${ZK_TICK:-}${ZK_INIT_LIMIT:-}${ZK_SYNC_LIMIT:-}${TB_ELECTION:-}${TB_HEARTBEAT:-}" ] || TUNED=1
ZK_TICK=${ZK_TICK:-2000}
ZK_INIT_LIMIT=${ZK_INIT_LIMIT:-10}
ZK_SYNC_LIMIT=${ZK_SYNC_LIMIT:-5}
TB_ELECTION=${TB_ELECTION:-}
TB_HEARTBEAT=${TB_HEARTBEAT:-}

if [ "$QUICK" = 1 ]; then
    KILLS=${KILLS:-2}; STOPS=${STOPS:-2}; ROLLS=${ROLLS:-1}; REPEATS=${REPEATS:-1}; D=2; W=1; RD=1; RW=0.5
    ZN=20000
else
    KILLS=${KILLS:-7}; STOPS=${STOPS:-5}; ROLLS=${ROLLS:-3}; REPEATS=${REPEATS:-3}; D=6; W=2; RD=3; RW=1
    ZN=100000
fi
PARTS=${PARTS:-1 2 3 4 5 6}
P4=${P4:-lock_fair_1 lock_fair_10 raw single}
MEM_TRIALS=${MEM_TRIALS:-1}
MNTR=${MNTR:-0}
METRICS=${METRICS:-0}
PERF=${PERF:-0}
part() { [[ " $PARTS " == *" $1 "* ]]; }
p4() { [[ " $P4 " == *" $1 "* ]]; }
part 1 || part 3 || KILLS=0
part 2 || STOPS=0
part 6 || ROLLS=0
part 4 || REPEATS=0
part 5 || MEM_TRIALS=0

command -v java >/dev/null || { echo "ensemble.sh: java not found (scripts/deps.sh --test)" >&2; exit 1; }
[ -f /usr/share/java/zookeeper.jar ] ||
    { echo "ensemble.sh: Apache ZooKeeper not installed (scripts/deps.sh --test)" >&2; exit 1; }

cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
ninja -C "$BUILD_DIR" tumblerd tbbench tbfail tumbler_cli > /dev/null
TUMBLERD=$BUILD_DIR/src/server/tumblerd
TBBENCH=$BUILD_DIR/bench/tbbench
TBFAIL=$BUILD_DIR/bench/tbfail
TUMBLER=$BUILD_DIR/src/cli/tumbler
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

BS_TMPDIR=${BS_TMPDIR:-/var/tmp}
# shellcheck source=servers.sh
. "$ROOT/bench/servers.sh"
bs_init
# The tmpfs ensemble's members keep their data here (part 4).
if part 4 && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
    BS_TMPFS=$(mktemp -d /dev/shm/tbbench.XXXXXX) || BS_TMPFS=""
fi
RESULTS=$BS_ROOT/results.txt
: > "$RESULTS"
KINDS=(tumbler zookeeper)
declare -A PID CPORT QPORT EPORT MPORT

# A port free now and not handed out before in this run.
TAKEN=" "
new_port()
{
    local p
    while :; do
        p=$(free_port)
        [[ $TAKEN == *" $p "* ]] || break
    done
    TAKEN+="$p "
    echo "$p"
}


hosts() # KIND [NODE...]: host:port list of those nodes (all three by default)
{
    local kind=$1 i out=""
    shift
    [ $# -gt 0 ] || set -- 1 2 3
    for i in "$@"; do out+="${out:+,}127.0.0.1:${CPORT[$kind,$i]}"; done
    echo "$out"
}

# ports KIND: new ports for the three nodes of KIND.
ports()
{
    local i
    for i in 1 2 3; do
        CPORT[$1,$i]=$(new_port) QPORT[$1,$i]=$(new_port) EPORT[$1,$i]=$(new_port)
        MPORT[$1,$i]=$(new_port)
    done
    rm -f "$BS_ROOT/$1.cfg"
}
GEN=0 # the data directories' suffix: parts 4 and 5 run on fresh ensembles
for kind in "${KINDS[@]}"; do ports "$kind"; done

# node_start KIND I: node I of the ensemble KIND, in the background, in $BS_ROOT/KIND-I.GEN
# (tmpfs: its data directory in $BS_TMPFS).
node_start()
{
    local kind=$1 i=$2 dir=$BS_ROOT/$1-$2.$GEN data j
    data=$dir/data
    [ "$kind" != tmpfs ] || data=$BS_TMPFS/$1-$2.$GEN
    mkdir -p "$dir" "$data"
    case "$kind" in
        tumbler|tmpfs)
            [ -f "$BS_ROOT/$kind.cfg" ] || {
                echo "tickTime=2000"
                echo "maxClientCnxns=0"
                [ -z "$TB_ELECTION" ] || echo "electionTimeout=$TB_ELECTION"
                [ -z "$TB_HEARTBEAT" ] || echo "heartbeatInterval=$TB_HEARTBEAT"
                echo "4lw.commands.whitelist=*"
                for j in 1 2 3; do
                    echo "server.$j=127.0.0.1:${QPORT[$kind,$j]}:${EPORT[$kind,$j]};127.0.0.1:${CPORT[$kind,$j]}"
                done
            } > "$BS_ROOT/$kind.cfg"
            local metrics=()
            if [ "$METRICS" = 1 ]; then
                metrics=(--metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
                    --metricsProvider.httpHost=127.0.0.1 --metricsProvider.httpPort="${MPORT[$kind,$i]}")
            fi
            "$TUMBLERD" "$BS_ROOT/$kind.cfg" --serverId="$i" --dataDir="$data" "${metrics[@]}" \
                >> "$dir/server.log" 2>&1 < /dev/null &
            ;;
        zookeeper)
            echo "$i" > "$dir/data/myid"
            {
                echo "tickTime=$ZK_TICK"
                echo "initLimit=$ZK_INIT_LIMIT"
                echo "syncLimit=$ZK_SYNC_LIMIT"
                echo "dataDir=$dir/data"
                echo "clientPort=${CPORT[$kind,$i]}"
                echo "clientPortAddress=127.0.0.1"
                echo "maxClientCnxns=0"
                echo "forceSync=yes"
                echo "4lw.commands.whitelist=*"
                echo "admin.enableServer=false"
                for j in 1 2 3; do
                    echo "server.$j=127.0.0.1:${QPORT[$kind,$j]}:${EPORT[$kind,$j]}"
                done
            } > "$dir/zoo.cfg"
            local jd=/usr/share/java n cp
            cp="$jd/zookeeper.jar:$jd/zookeeper-jute.jar:$jd/slf4j-api.jar:$jd/slf4j-simple.jar"
            for n in common buffer transport handler codec resolver transport-native-unix-common; do
                cp+=":$jd/netty-$n.jar"
            done
            java -Xmx1000m \
                -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
                -Dorg.slf4j.simpleLogger.showDateTime=true \
                -Dorg.slf4j.simpleLogger.logFile="$dir/server.log" \
                -Dzookeeper.admin.enableServer=false \
                -Dzookeeper.jmx.log4j.disable=true \
                -cp "$cp" \
                org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" \
                >> "$dir/server.log" 2>&1 < /dev/null &
            ;;
    esac
    PID[$kind,$i]=$!
    BS_PIDS+=("${PID[$kind,$i]}")
}

# node_gone KIND I: reaps node I (killed by tbfail) and forgets it.
node_gone()
{
    local pid=${PID[$1,$2]}
    kill -CONT "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
    bs_stop "$pid"
}

# heal KIND: a node found gone that no step here stopped (on a machine shared with other
# work) is reported with its exit status (137: SIGKILL from outside; 134 or 139 would be a
# crash of its own) and started again.
heal()
{
    local kind=$1 i pid st rc
    for i in 1 2 3; do
        pid=${PID[$kind,$i]}
        st=$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)
        [ -z "$st" ] || [ "$st" = Z ] || continue
        rc=0
        wait "$pid" 2>/dev/null || rc=$?
        echo "  $kind: node $i (pid $pid) found gone, exit status $rc; started again" >&2
        echo "RESULT system=$kind step=death node=$i status=$rc" >> "$RESULTS"
        bs_stop "$pid"
        node_start "$kind" "$i"
    done
}

# fresh: both ensembles stopped, then started again on new ports and empty data directories.
fresh()
{
    local kind i
    for kind in "${KINDS[@]}"; do
        for i in 1 2 3; do bs_stop "${PID[$kind,$i]}"; done
        ports "$kind"
    done
    GEN=$((GEN + 1))
    for kind in "${KINDS[@]}"; do
        for i in 1 2 3; do node_start "$kind" "$i"; done
    done
    for kind in "${KINDS[@]}"; do leader "$kind" > /dev/null; done
    sleep 2
}

# leader KIND: waits (60 s at most) until the ensemble has one leader and two followers with
# the same zxid; prints the leader's number.
leader()
{
    "$TBFAIL" ensemble --servers "$(hosts "$1")" --timeout-s 60
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# record KIND WHAT LINE...: RESULT lines tagged with the system and the step.
record()
{
    local kind=$1 what=$2
    shift 2
    local line
    while IFS= read -r line; do
        [[ $line == RESULT* ]] || continue
        echo "RESULT system=$kind step=$what ${line#RESULT }" >> "$RESULTS"
    done <<< "$*"
}

rss_all() # KIND WHEN [TRIAL]
{
    local i
    for i in 1 2 3; do
        echo "RESULT system=$1 step=rss when=$2 node=$i rss_kb=$(rss_kb "${PID[$1,$i]}")${3:+ trial=$3}" >> "$RESULTS"
    done
}

# zk_heap WHEN TRIAL: each ZooKeeper member's Java heap, committed and used (jcmd GC.heap_info).
zk_heap()
{
    local i line
    for i in 1 2 3; do
        line=$(jcmd "${PID[zookeeper,$i]}" GC.heap_info 2>/dev/null | grep -m1 'heap.*total') || continue
        echo "RESULT system=zookeeper step=heap when=$1 node=$i trial=$2 $(echo "$line" |
            sed -E 's/.*total ([0-9]+)K, used ([0-9]+)K.*/heap_committed_kb=\1 heap_used_kb=\2/')" >> "$RESULTS"
    done
}

# mntr_all KIND FILE-PREFIX: every member's mntr, kept in $BS_ROOT/mntr/.
mntr_all()
{
    local i
    mkdir -p "$BS_ROOT/mntr"
    for i in 1 2 3; do
        echo mntr | timeout 5 nc -q 2 127.0.0.1 "${CPORT[$1,$i]}" > "$BS_ROOT/mntr/$2-$1-$i" 2>/dev/null || true
        if [ "$METRICS" = 1 ] && [ "$1" != zookeeper ]; then
            curl -s -m 5 "http://127.0.0.1:${MPORT[$1,$i]}/metrics" > "$BS_ROOT/mntr/$2-$1-$i.metrics" || true
        fi
    done
}

order()
{
    if [ $(($1 % 2)) = 1 ]; then echo "tumbler zookeeper"; else echo "zookeeper tumbler"; fi
}

# survivors L: the two other nodes, the one after L first.
survivors() { echo "$(($1 % 3 + 1)) $((($1 + 1) % 3 + 1))"; }

# ---- 1 and 3: kill -9 of the leader, then its restart ----
kill_trial()
{
    local kind=$1 n=$2 l s1 s2 out t0 rc=0
    heal "$kind"
    l=$(leader "$kind")
    read -r s1 s2 <<< "$(survivors "$l")"
    echo "  [$n] $kind: kill -9 of leader $l, writing through $s1" >&2
    out=$("$TBFAIL" failover --servers "$(hosts "$kind" "$s1" "$s2")" --pid "${PID[$kind,$l]}" \
        --signal kill --root "/ens/kill$n" --acked "$BS_ROOT/acked-$kind-kill$n") || rc=$?
    node_gone "$kind" "$l"
    echo "$out" | sed 's/^/      /' >&2
    record "$kind" kill "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n leader=$l rc=$rc /")"
    out=$("$TBFAIL" verify --servers "$(hosts "$kind" "$s1" "$s2")" --root "/ens/kill$n" \
        --acked "$BS_ROOT/acked-$kind-kill$n") || echo "  [$n] $kind: ACKNOWLEDGED WRITES MISSING" >&2
    echo "$out" | sed 's/^/      /' >&2
    record "$kind" kill-verify "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n /")"
    # The restart: from the fork to follower with the leader's zxid.
    sync
    t0=${EPOCHREALTIME/./}
    node_start "$kind" "$l"
    out=$("$TBFAIL" rejoin --servers "$(hosts "$kind")" --node "$l" --since-us "$t0" \
        --timeout-s 60) || echo "  [$n] $kind: node $l did not rejoin" >&2
    echo "$out" | sed 's/^/      /' >&2
    record "$kind" rejoin "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n /")"
    out=$("$TBFAIL" verify --servers "$(hosts "$kind" "$l")" --root "/ens/kill$n" \
        --acked "$BS_ROOT/acked-$kind-kill$n") || echo "  [$n] $kind: ACKNOWLEDGED WRITES MISSING on the rejoined node" >&2
    echo "$out" | sed 's/^/      /' >&2
    record "$kind" rejoin-verify "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n /")"
}

# ---- 2: SIGSTOP of the leader, a write sent to it while stopped, SIGCONT ----
stop_trial()
{
    local kind=$1 n=$2 l s1 s2 out cont rc=0
    heal "$kind"
    l=$(leader "$kind")
    read -r s1 s2 <<< "$(survivors "$l")"
    echo "  [$n] $kind: SIGSTOP of leader $l, writing through $s1" >&2
    out=$("$TBFAIL" failover --servers "$(hosts "$kind" "$s1" "$s2")" --pid "${PID[$kind,$l]}" \
        --signal stop --stale "127.0.0.1:${CPORT[$kind,$l]}" --root "/ens/stop$n" \
        --acked "$BS_ROOT/acked-$kind-stop$n" --max-s 60) || rc=$?
    kill -CONT "${PID[$kind,$l]}" 2>/dev/null || true
    echo "$out" | sed 's/^/      /' >&2
    record "$kind" stop "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n leader=$l rc=$rc /")"
    cont=$(echo "$out" | tr ' ' '\n' | sed -n 's/^cont_wall_us=//p')
    # The resumed leader, from SIGCONT, back as a follower with the leader's zxid.
    out=$("$TBFAIL" rejoin --servers "$(hosts "$kind")" --node "$l" --since-us "${cont:-0}" \
        --timeout-s 60) || echo "  [$n] $kind: the resumed node $l did not come back" >&2
    echo "$out" | sed 's/^/      /' >&2
    record "$kind" resume "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n /")"
    out=$("$TBFAIL" verify --servers "$(hosts "$kind")" --root "/ens/stop$n" \
        --acked "$BS_ROOT/acked-$kind-stop$n") || echo "  [$n] $kind: ACKNOWLEDGED WRITES MISSING" >&2
    echo "$out" | sed 's/^/      /' >&2
    record "$kind" stop-verify "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n /")"
}

# ---- 6: a rolling restart under a writing client ----
roll_trial()
{
    local kind=$1 n=$2 i l out t0 w rc=0 until holds lockers t_roll
    until=$BS_ROOT/until-$kind-roll$n
    heal "$kind"
    l=$(leader "$kind")
    rm -f "$until"
    "$TBFAIL" writer --servers "$(hosts "$kind")" --root "/ens/roll$n" \
        --acked "$BS_ROOT/acked-$kind-roll$n" --until "$until" > "$BS_ROOT/writer-$kind-roll$n" &
    w=$!
    # Lock load beside the writer: three `tumbler lock` loops on one lock,
    # their sessions free to move, each hold (50 ms) written as its token
    # and its start and end (ns).
    holds=$BS_ROOT/holds-$kind-roll$n
    : > "$holds"
    lockers=()
    for i in 1 2 3; do
        (
            while [ ! -f "$until" ]; do
                "$TUMBLER" -s "$(hosts "$kind")" --session-timeout 10 lock -w 30 "/ens/rlock$n" -- \
                    sh -c 's=$(date +%s%N); sleep 0.05; echo "$TUMBLER_LOCK_TOKEN $s $(date +%s%N)"' \
                    >> "$holds" 2> /dev/null || true
            done
        ) &
        lockers+=($!)
    done
    sleep 1
    t_roll=${EPOCHREALTIME/./}
    for i in 1 2 3; do
        echo "  [$n] $kind: SIGTERM to node $i$([ "$i" = "$l" ] && echo ' (the leader)'), restart" >&2
        bs_stop "${PID[$kind,$i]}"
        sync
        t0=${EPOCHREALTIME/./}
        node_start "$kind" "$i"
        out=$("$TBFAIL" rejoin --servers "$(hosts "$kind")" --node "$i" --since-us "$t0" \
            --timeout-s 60) || echo "  [$n] $kind: node $i did not come back" >&2
        echo "$out" | sed 's/^/      /' >&2
        record "$kind" roll-rejoin "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n /")"
    done
    sleep 1
    touch "$until"
    wait "$w" || rc=$?
    for i in "${lockers[@]}"; do wait "$i" || true; done
    # The longest time the lock went untaken from the first SIGTERM on, and
    # any two holds that overlap or a token that does not rise.
    out=$(sort -k2,2n "$holds" | awk -v from="$t_roll" '
        NF == 3 { n++
            if (n > 1 && $2 < end) bad++
            if (n > 1 && $1 <= tok) bad++
            if ($2 / 1000 >= from && n > 1 && $2 - end > gap) gap = $2 - end
            tok = $1; end = $3 }
        END { printf "RESULT holds=%d longest_gap_ms=%.1f anomalies=%d\n", n, gap / 1e6, bad }')
    echo "      lock load: $out" >&2
    record "$kind" roll-lock "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n /")"
    out=$(cat "$BS_ROOT/writer-$kind-roll$n")
    echo "$out" | sed 's/^/      /' >&2
    record "$kind" roll "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n leader=$l rc=$rc /")"
    out=$("$TBFAIL" verify --servers "$(hosts "$kind")" --root "/ens/roll$n" \
        --acked "$BS_ROOT/acked-$kind-roll$n") || echo "  [$n] $kind: ACKNOWLEDGED WRITES MISSING" >&2
    echo "$out" | sed 's/^/      /' >&2
    record "$kind" roll-verify "$(echo "$out" | sed "s/^RESULT /RESULT trial=$n /")"
}

# ---- 4: tbbench through all three nodes ----
bench()
{
    local rep=$1 kind=$2 name=$3 i c0=0 c1=0 t0 t1 out rc=0 perf="" on
    shift 3
    on=$(hosts "$kind")
    [[ $name == *_leader ]] && on=$(hosts "$kind" "$(leader "$kind")")
    echo "  [$rep] $kind: tbbench $*" >&2
    if [ "$MNTR" = 1 ]; then mntr_all "$kind" "$name-$rep-before"; fi
    if [ "$PERF" = 1 ] && [ "$kind" != zookeeper ] && [[ $name == lock* ]]; then
        mkdir -p "$BS_ROOT/perf"
        perf record -a -g -F 499 -o "$BS_ROOT/perf/$name-$rep.data" > /dev/null 2>&1 &
        perf=$!
    fi
    for i in 1 2 3; do c0=$((c0 + $(cpu_ticks "${PID[$kind,$i]}"))); done
    t0=${EPOCHREALTIME/./}
    out=$(timeout 900 "$TBBENCH" "$@" --server "$on" --pid "${PID[$kind,1]}" \
        --label "$kind") || rc=$?
    t1=${EPOCHREALTIME/./}
    for i in 1 2 3; do c1=$((c1 + $(cpu_ticks "${PID[$kind,$i]}"))); done
    if [ -n "$perf" ]; then kill -INT "$perf"; wait "$perf" || true; fi
    if [ "$MNTR" = 1 ]; then mntr_all "$kind" "$name-$rep-after"; fi
    printf '%s\n' "$out" | { grep -v '^RESULT' || true; } | sed 's/^/      /' >&2
    record "$kind" "$name" "$(printf '%s\n' "$out" | grep '^RESULT' |
        sed "s/^RESULT /RESULT rep=$rep rc=$rc ensemble_cpu_s=$(echo "$c0 $c1 $(getconf CLK_TCK)" |
            awk '{ printf "%.2f", ($2 - $1) / $3 }') wall_s=$(((t1 - t0) / 1000000)) /")"
    [ "$rc" = 0 ] || echo "  [$rep] $kind: tbbench exited with $rc" >&2
}

machine_facts()
{
    local dev q
    dev=$(df --output=source "$BS_ROOT" | tail -1)
    q=/sys/block/$(basename "$dev" | sed 's/[0-9]*$//')/queue
    {
        echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "nproc=$(nproc)"
        echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
        echo "memory=$(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
        echo "kernel=$(uname -sr)"
        echo "disk=$dev ($(df -h --output=fstype,size "$BS_ROOT" | tail -1 | xargs)," \
             "rotational=$(cat "$q/rotational" 2>/dev/null || echo '?')," \
             "cache $(cat "$q/write_cache" 2>/dev/null || echo '?'), FUA $(cat "$q/fua" 2>/dev/null || echo '?'))"
        echo "java=$(java -version 2>&1 | head -1)"
        echo "zookeeper=$(basename "$(ls /usr/share/java/zookeeper-3*.jar | head -1)" .jar)" \
             "tickTime=$ZK_TICK initLimit=$ZK_INIT_LIMIT syncLimit=$ZK_SYNC_LIMIT"
        echo "tumbler_timeouts=electionTimeout=${TB_ELECTION:-500 (default)}" \
             "heartbeatInterval=${TB_HEARTBEAT:-50 (default)}"
        if git -C "$ROOT" rev-parse --short HEAD > /dev/null 2>&1; then
            echo "tumbler=$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- src || echo '+local changes')"
        else # a tree exported with git archive
            echo "tumbler=${TUMBLER_REV:-unknown}"
        fi
        echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
        echo "kills=$KILLS"
        echo "stops=$STOPS"
        echo "rolls=$ROLLS"
        echo "repeats=$REPEATS"
        echo "quick=$QUICK"
        echo "parts=$PARTS"
        echo "mem_trials=$MEM_TRIALS"
    } | sed 's/^/META /' >> "$RESULTS"
}

machine_facts
start=$SECONDS
echo "== starting both ensembles" >&2
for kind in "${KINDS[@]}"; do
    for i in 1 2 3; do node_start "$kind" "$i"; done
done
for kind in "${KINDS[@]}"; do
    l=$(leader "$kind") || { echo "ensemble.sh: $kind did not settle" >&2; exit 1; }
    echo "  $kind: server $l leads" >&2
done
sleep 2
for kind in "${KINDS[@]}"; do rss_all "$kind" idle; done

echo "== 1, 3: kill -9 of the leader, restart" >&2
for n in $(seq 1 "$KILLS"); do
    for kind in $(order "$n"); do kill_trial "$kind" "$n"; done
done
echo "== 2: SIGSTOP of the leader, SIGCONT" >&2
for n in $(seq 1 "$STOPS"); do
    for kind in $(order "$n"); do stop_trial "$kind" "$n"; done
done

echo "== 6: rolling restart of the three under a writing client" >&2
for n in $(seq 1 "$ROLLS"); do
    for kind in $(order "$n"); do roll_trial "$kind" "$n"; done
done

# Parts 4 and 5 on fresh ensembles, so that what the failovers leave behind (a server still
# settling after its pause, say) is not measured as throughput.
if part 4; then
echo "== 4: throughput through the three nodes, on fresh ensembles" >&2
fresh
echo "  tbbench disk (no server)" >&2
"$TBBENCH" disk --dir "$BS_ROOT" --label machine | sed "s/^RESULT /RESULT system=machine step=disk /" |
    tee -a "$RESULTS" | { grep -v '^RESULT' || true; } | sed 's/^/      /' >&2
if [ -n "$BS_TMPFS" ] && [[ $P4 == *lock_fair_* ]]; then
    ports tmpfs
    for i in 1 2 3; do node_start tmpfs "$i"; done
    echo "  tmpfs: server $(leader tmpfs) leads" >&2
fi
for rep in $(seq 1 "$REPEATS"); do
    for s in "lock_fair_1|lock --variant fair --clients 100 --locks 1 --duration $D --warmup $W" \
             "lock_fair_1_leader|lock --variant fair --clients 100 --locks 1 --duration $D --warmup $W" \
             "lock_fair_10|lock --variant fair --clients 100 --locks 10 --duration $D --warmup $W" \
             "raw|raw --clients 18 --outstanding 64 --ops create,get,delete --data-bytes 100 --duration $RD --warmup $RW"; do
        p4 "${s%%|*}" || continue
        for kind in $(order "$rep"); do
            # shellcheck disable=SC2086
            bench "$rep" "$kind" "${s%%|*}" ${s#*|}
        done
        if [ -n "${PID[tmpfs,1]:-}" ] && [[ ${s%%|*} == lock_fair_* ]]; then
            # shellcheck disable=SC2086
            bench "$rep" tmpfs "${s%%|*}" ${s#*|}
        fi
    done
done
for i in 1 2 3; do [ -z "${PID[tmpfs,$i]:-}" ] || bs_stop "${PID[tmpfs,$i]}"; done
# One client, one create at a time, through the leader and then through a follower: what a
# write's round trip costs on each path.
if p4 single; then
for kind in $(order 1); do
    l=$(leader "$kind")
    read -r f _ <<< "$(survivors "$l")"
    for via in leader follower; do
        n=$l
        [ "$via" = follower ] && n=$f
        echo "  $kind: one client, one create at a time, through the $via (server $n)" >&2
        out=$(timeout 300 "$TBBENCH" raw --clients 1 --outstanding 1 --ops create,delete \
            --data-bytes 100 --duration "$RD" --warmup "$RW" --server "127.0.0.1:${CPORT[$kind,$n]}" \
            --pid "${PID[$kind,$n]}" --label "$kind") || true
        printf '%s\n' "$out" | { grep -v '^RESULT' || true; } | sed 's/^/      /' >&2
        record "$kind" "single_$via" "$(printf '%s\n' "$out" | grep '^RESULT scenario=raw .* op=create ')"
    done
done
fi
for kind in "${KINDS[@]}"; do rss_all "$kind" loaded; done
fi

# Part 5 on fresh ensembles: after the runs above each server's memory holds the high-water of
# its own create phase, and tumblerd made about ten times as many nodes in it.
if part 5; then
for t in $(seq 1 "$MEM_TRIALS"); do
    echo "== 5: $ZN znodes of 100 bytes, on fresh ensembles (trial $t of $MEM_TRIALS)" >&2
    fresh
    for kind in $(order "$t"); do
        rss_all "$kind" fresh "$t"
        bench "$t" "$kind" memory memory --znodes "$ZN" --data-bytes 100 --clients 18 \
            --outstanding 64 --no-cleanup
        sleep 2
        rss_all "$kind" "znodes$ZN" "$t"
        if [ "$kind" = zookeeper ]; then
            # After the figure: the JVM's heap, then the same after a full collection.
            zk_heap "znodes$ZN" "$t"
            for i in 1 2 3; do jcmd "${PID[zookeeper,$i]}" GC.run > /dev/null 2>&1 || true; done
            sleep 2
            zk_heap "znodes$ZN-gc" "$t"
            rss_all zookeeper "znodes$ZN-gc" "$t"
        fi
    done
done
fi
echo "META load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$RESULTS"
echo "META elapsed_s=$((SECONDS - start))" >> "$RESULTS"

# A run of some parts only writes bench/last-ensemble-partN...; a full run bench/last-ensemble.
OUT=last-ensemble
[ "$PARTS" = "1 2 3 4 5 6" ] || OUT=last-ensemble-part$(echo "$PARTS" | tr -d ' ')
[ "$TUNED" = 0 ] || OUT=$OUT-tuned
cp "$RESULTS" "$ROOT/bench/$OUT-results.txt"
python3 "$ROOT/bench/ensemble_report.py" "$RESULTS" | tee "$ROOT/bench/$OUT.md"
