#!/usr/bin/env bash
# Recipe tests against a real server: run.sh KIND SCENARIO RECIPES_IT [ARGS]
#
# KIND is "tumblerd" (needs TUMBLERD) or "zk" (Apache ZooKeeper 3.8).
# Starts the server on a free loopback port (tests/integration/lib.sh),
# runs the scenario, and always stops the server.  Scenarios that need
# several processes (kill -9, SIGSTOP, a server restart, many contending
# processes, Curator) are orchestrated here; the others are one call of
# recipes_it.  Every wait is bounded.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../integration/lib.sh
source "$here/../integration/lib.sh"

kind=$1 scenario=$2 bin=$3
shift 3
it_init
# Hundreds of sessions from one address: past tumblerd's default of 60
# (the ZooKeeper side runs with no limit).
if [ "$scenario" = articles ]; then
    export TUMBLERD_ARGS="${TUMBLERD_ARGS:-} --maxClientCnxns=0"
fi
launch "$kind" server
port=$LAUNCH_PORT
hosts="127.0.0.1:$port"
tmp=$(it_tmpdir run)
CHILDREN=()

fail() { echo "FAIL: $*" >&2; exit 1; }

# Kills what the scenario started (its own children only, by pid).
reap_children()
{
    local p
    for p in "${CHILDREN[@]}"; do
        kill -CONT "$p" 2>/dev/null
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    CHILDREN=()
}
trap 'rc=$?; reap_children; (exit $rc); it_cleanup' EXIT

# wait_line FILE REGEX SECONDS: until a line of FILE matches.
wait_line()
{
    local deadline=$((SECONDS + $3))
    while [ "$SECONDS" -lt "$deadline" ]; do
        grep -Eq "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    echo "no line matching '$2' in $1 within $3 s:" >&2
    cat "$1" >&2
    return 1
}

# wait_pid PID SECONDS: until it exits; its status.
wait_pid()
{
    local deadline=$((SECONDS + $2))
    while running "$1" && [ "$SECONDS" -lt "$deadline" ]; do
        sleep 0.05
    done
    if running "$1"; then
        echo "pid $1 still running after $2 s" >&2
        return 124
    fi
    wait "$1"
}

# wait_children PATH N SECONDS
wait_children()
{
    local deadline=$((SECONDS + $3)) n
    while [ "$SECONDS" -lt "$deadline" ]; do
        n=$("$bin" "$hosts" children "$1" | wc -l)
        [ "$n" = "$2" ] && return 0
        sleep 0.1
    done
    echo "$1 has $n children, want $2" >&2
    return 1
}

field() { awk -v w="$2" '$1 == w { print $'"$3"'; exit }' "$1"; }

case "$scenario" in
processes)
    # Mutual exclusion between 4 processes of 3 threads each, every thread
    # its own session, all on one lock: every hold logged with its token;
    # no two holds overlap and tokens rise in hold order.
    kindlock=${1:-fair}
    log=$tmp/holds.log
    : > "$log"
    pids=()
    for w in 0 1 2 3; do
        "$bin" "$hosts" worker /rt/proc/lock "$kindlock" 8 2 "$log" "$w" 3 &
        pids+=($!)
        CHILDREN+=($!)
    done
    for p in "${pids[@]}"; do wait_pid "$p" 90 || fail "worker $p failed"; done
    "$bin" "$hosts" checklog "$log" 96 || fail "holds of the processes"
    ;;
kill9)
    # The holder dies without a word: the waiter gets the lock once the
    # server expires the holder's session (4 s), not before.
    "$bin" "$hosts" holder /rt/k9/lock > "$tmp/holder.out" 2>&1 &
    hpid=$!
    CHILDREN+=($hpid)
    wait_line "$tmp/holder.out" '^HELD ' 20 || fail "holder"
    "$bin" "$hosts" waiter /rt/k9/lock > "$tmp/waiter.out" 2>&1 &
    wpid=$!
    CHILDREN+=($wpid)
    wait_children /rt/k9/lock 2 20 || fail "waiter did not queue"
    killed=$(date +%s%3N)
    kill -KILL "$hpid"
    wait_pid "$wpid" 30 || fail "waiter: $(cat "$tmp/waiter.out")"
    got=$(field "$tmp/waiter.out" ACQUIRED 3)
    t1=$(field "$tmp/holder.out" HELD 2)
    t2=$(field "$tmp/waiter.out" ACQUIRED 2)
    after=$((got - killed))
    echo "kill -9: waiter got the lock $after ms after the holder died" \
         "(session timeout 4000 ms); tokens $t1 -> $t2"
    [ "$after" -ge 2500 ] || fail "lock free before the session expired"
    [ "$after" -le 15000 ] || fail "lock not free long after expiry"
    [ "$t2" -gt "$t1" ] || fail "token did not rise"
    ;;
sigstop)
    # The holder is paused past its session timeout: the waiter gets the
    # lock with a larger token; on resume the holder is told LOST (by its
    # callback and its state) and its release reports ELOCKLOST.
    "$bin" "$hosts" holder /rt/stop/lock > "$tmp/holder.out" 2>&1 &
    hpid=$!
    CHILDREN+=($hpid)
    wait_line "$tmp/holder.out" '^HELD ' 20 || fail "holder"
    "$bin" "$hosts" waiter /rt/stop/lock > "$tmp/waiter.out" 2>&1 &
    wpid=$!
    CHILDREN+=($wpid)
    wait_children /rt/stop/lock 2 20 || fail "waiter did not queue"
    stopped=$(date +%s%3N)
    kill -STOP "$hpid"
    wait_pid "$wpid" 30 || fail "waiter: $(cat "$tmp/waiter.out")"
    got=$(field "$tmp/waiter.out" ACQUIRED 3)
    resumed=$(date +%s%3N)
    kill -CONT "$hpid"
    wait_pid "$hpid" 20 || fail "holder did not end: $(cat "$tmp/holder.out")"
    cat "$tmp/holder.out"
    t1=$(field "$tmp/holder.out" HELD 2)
    t2=$(field "$tmp/waiter.out" ACQUIRED 2)
    lost=$(awk '$1 == "STATE" && $2 == "LOST" { print $4; exit }' "$tmp/holder.out")
    [ -n "$lost" ] || fail "holder was not told LOST by its callback"
    grep -q '^POLL LOST' "$tmp/holder.out" || fail "state did not read LOST"
    grep -q '^RELEASE ELOCKLOST' "$tmp/holder.out" || fail "release did not report ELOCKLOST"
    [ "$t2" -gt "$t1" ] || fail "token did not rise ($t1 -> $t2)"
    echo "SIGSTOP: waiter got the lock $((got - stopped)) ms after the pause;" \
         "holder told LOST $((lost - resumed)) ms after SIGCONT; tokens $t1 -> $t2"
    [ $((got - stopped)) -ge 2500 ] || fail "lock free before the session expired"
    [ $((lost - resumed)) -le 3000 ] || fail "holder told too late"
    ;;
fence_stop)
    # A holder writing a resource fenced is paused past its session: the
    # next holder takes the lock, writes, and finds the old token stale.
    # On SIGCONT the old holder's next write is refused (by the server's
    # check, or because it has heard of the loss) and the resource keeps
    # the new holder's write.
    lock=/rt/fstop/lock res=/fstop_res
    "$bin" "$hosts" fence_holder $lock $res > "$tmp/holder.out" 2>&1 &
    hpid=$!
    CHILDREN+=($hpid)
    wait_line "$tmp/holder.out" '^WROTE ' 20 || fail "holder"
    t1=$(field "$tmp/holder.out" HELD 2)
    kill -STOP "$hpid"
    "$bin" "$hosts" fence_taker $lock $res "$t1" > "$tmp/taker.out" 2>&1 ||
        fail "taker: $(cat "$tmp/taker.out")"
    t2=$(field "$tmp/taker.out" TOOK 2)
    kill -CONT "$hpid"
    wait_pid "$hpid" 20 || fail "holder did not end: $(cat "$tmp/holder.out")"
    cat "$tmp/holder.out" "$tmp/taker.out"
    grep -q '^FENCED ELOCKLOST' "$tmp/holder.out" || fail "holder's write not refused"
    got=$("$bin" "$hosts" get $res)
    [ "$got" = "taker $t2" ] || fail "resource holds '$got', not the taker's write"
    got=$("$bin" "$hosts" check_token $lock "$t1")
    [ "$got" = "CHECK ELOCKLOST" ] || fail "old token: $got"
    echo "fence_stop: tokens $t1 -> $t2; the paused holder's write refused"
    ;;
lock_delay_kill9)
    # A holder with lock-delay (2 s) killed with kill -9: the waiter gets
    # the lock once the session expired (4 s) and the delay passed, not
    # before.
    "$bin" "$hosts" ldhold /rt/ldk/lock 2000 > "$tmp/holder.out" 2>&1 &
    hpid=$!
    CHILDREN+=($hpid)
    wait_line "$tmp/holder.out" '^HELD ' 20 || fail "holder"
    "$bin" "$hosts" ldwait /rt/ldk/lock 2000 > "$tmp/waiter.out" 2>&1 &
    wpid=$!
    CHILDREN+=($wpid)
    wait_children /rt/ldk/lock 2 20 || fail "waiter did not queue"
    killed=$(date +%s%3N)
    kill -KILL "$hpid"
    wait_pid "$wpid" 40 || fail "waiter: $(cat "$tmp/waiter.out")"
    got=$(field "$tmp/waiter.out" ACQUIRED 2)
    echo "lock-delay kill -9: the waiter got the lock $((got - killed)) ms" \
         "after the holder died (session 4000 ms + delay 2000 ms)"
    [ $((got - killed)) -ge 4500 ] || fail "granted before the session expiry and the delay"
    ;;
dbarrier_kill9)
    # A double barrier of 3; once all entered, one member is killed with
    # kill -9 and the others leave: they are through once the server has
    # expired its session (4 s) and removed its node, not before, and
    # nothing is left behind.
    dbar=/rt/k9bar
    for i in 0 1 2; do
        "$bin" "$hosts" dmember $dbar 3 "$tmp/go" > "$tmp/m$i.out" 2>&1 &
        CHILDREN+=($!)
        eval "mpid$i=$!"
    done
    for i in 0 1 2; do wait_line "$tmp/m$i.out" ENTERED 30 || fail "member $i"; done
    killed=$(date +%s%3N)
    kill -KILL "$mpid1"
    touch "$tmp/go"
    wait_pid "$mpid0" 30 || fail "member 0: $(cat "$tmp/m0.out")"
    wait_pid "$mpid2" 30 || fail "member 2: $(cat "$tmp/m2.out")"
    for i in 0 2; do
        left=$(field "$tmp/m$i.out" LEFT 2)
        [ -n "$left" ] || fail "member $i did not leave"
        echo "member $i left $((left - killed)) ms after the kill"
        [ $((left - killed)) -ge 2500 ] || fail "member $i left before the session expired"
    done
    wait_children $dbar 0 10 || fail "nodes left behind"
    echo "dbarrier_kill9: both survivors left once the killed member's" \
         "session expired (4 s), nothing left behind"
    ;;
cbarrier_kill9)
    # A cyclic barrier of 4; 3 parties wait, one is killed with kill -9:
    # the other two get EBROKEN once the server has expired its session
    # (4 s) and removed its node, not before; the killed party's node is
    # gone, and after a reset only the fresh generation is left.
    cbar=/rt/k9cbar gen0=/rt/k9cbar/gen-0000000000
    for i in 0 1 2; do
        "$bin" "$hosts" cparty $cbar 4 await 60000 > "$tmp/p$i.out" 2>&1 &
        CHILDREN+=($!)
        eval "ppid$i=$!"
    done
    wait_children $gen0 3 30 || fail "parties did not arrive"
    killed=$(date +%s%3N)
    kill -KILL "$ppid1"
    for i in 0 2; do
        eval "wait_pid \$ppid$i 30" || fail "party $i: $(cat "$tmp/p$i.out")"
        got=$(field "$tmp/p$i.out" RESULT 2)
        at=$(field "$tmp/p$i.out" RESULT 3)
        [ "$got" = EBROKEN ] || fail "party $i: $(cat "$tmp/p$i.out")"
        echo "party $i broken $((at - killed)) ms after the kill"
        [ $((at - killed)) -ge 2500 ] || fail "party $i broken before the session expired"
    done
    got=$("$bin" "$hosts" cparty $cbar 4 waiting)
    [ "$got" = "WAITING 0 EBROKEN" ] || fail "after the break: $got"
    wait_children $gen0 1 10 || fail "party nodes left behind"
    got=$("$bin" "$hosts" cparty $cbar 4 reset)
    [ "$got" = "RESET OK" ] || fail "reset: $got"
    wait_children $cbar 1 10 || fail "the broken generation left behind"
    "$bin" "$hosts" children $cbar | grep -qx gen-0000000001 || fail "no fresh generation"
    wait_children $cbar/gen-0000000001 0 5 || fail "nodes in the fresh generation"
    echo "cbarrier_kill9: both survivors broken once the killed party's" \
         "session expired (4 s); nothing left behind after the reset"
    ;;
barrier_kill9)
    # The simple barrier: a waiter killed with kill -9 leaves nothing and
    # holds nobody up; the setter killed leaves the barrier set (it is
    # persistent, as Curator's), and anyone's removal lets the others go.
    bar=/rt/k9b/gate
    "$bin" "$hosts" barrier_op $bar set > /dev/null || fail "set"
    for i in 0 1; do
        "$bin" "$hosts" barrier_op $bar wait 30000 > "$tmp/w$i.out" 2>&1 &
        CHILDREN+=($!)
        eval "wpid$i=$!"
    done
    sleep 0.5 # their exists() on the way; a waiter shows nothing more
    kill -KILL "$wpid1"
    grep -q BARRIER "$tmp/w0.out" && fail "waiter 0 let go while set"
    got=$("$bin" "$hosts" barrier_op $bar remove)
    [ "$got" = "BARRIER OK" ] || fail "remove: $got"
    wait_pid "$wpid0" 20 || fail "waiter 0: $(cat "$tmp/w0.out")"
    [ "$(cat "$tmp/w0.out")" = "BARRIER OK" ] || fail "waiter 0: $(cat "$tmp/w0.out")"
    "$bin" "$hosts" barrier_op $bar set > /dev/null || fail "set again"
    [ "$("$bin" "$hosts" barrier_op $bar wait 0)" = "BARRIER ETIMEDOUT" ] ||
        fail "set by a process now dead: not set"
    got=$("$bin" "$hosts" barrier_op $bar remove)
    [ "$got" = "BARRIER OK" ] || fail "remove: $got"
    wait_children /rt/k9b 0 5 || fail "nodes left behind"
    echo "barrier_kill9: a killed waiter held nobody up; the barrier of a" \
         "dead setter stayed set until removed; nothing left"
    ;;
latch_kill9)
    # A latch of 2: a process that counted down is killed with kill -9,
    # and so is a waiter: the count stays (counts are persistent), the
    # killed waiter leaves nothing, the other waiter is let go by the
    # second count, and only the two counts are left.
    latch=/rt/k9l
    for i in 0 1; do
        "$bin" "$hosts" latch_op $latch 2 await 30000 > "$tmp/w$i.out" 2>&1 &
        CHILDREN+=($!)
        eval "wpid$i=$!"
    done
    "$bin" "$hosts" latch_op $latch 2 count hold > "$tmp/c.out" 2>&1 &
    cpid=$!
    CHILDREN+=($cpid)
    wait_line "$tmp/c.out" '^COUNTED' 20 || fail "counter"
    kill -KILL "$cpid" "$wpid1"
    grep -q RESULT "$tmp/w0.out" && fail "waiter let go after one count of 2"
    got=$("$bin" "$hosts" latch_op $latch 2 count)
    [ "$got" = COUNTED ] || fail "second count: $got"
    wait_pid "$wpid0" 20 || fail "waiter 0: $(cat "$tmp/w0.out")"
    [ "$(cat "$tmp/w0.out")" = "RESULT OK" ] || fail "waiter 0: $(cat "$tmp/w0.out")"
    wait_children $latch 2 5 || fail "not the two counts alone"
    echo "latch_kill9: the count of a killed process kept; a killed waiter" \
         "left nothing; the other waiter let go by the second count"
    ;;
counter_kill9)
    # Two processes add to one counter; one is killed with kill -9 in the
    # middle of its adds: the other finishes (nothing stuck), and the
    # value is the other's 200 plus every add the killed one was told of,
    # and at most the one it was sending.
    ctr=/rt/k9c/n
    "$bin" "$hosts" counter_op $ctr set 0 || fail "set"
    "$bin" "$hosts" counter_op $ctr addlog 100000 > "$tmp/a.out" 2>&1 &
    apid=$!
    CHILDREN+=($apid)
    "$bin" "$hosts" counter_op $ctr add 200 > "$tmp/b.out" 2>&1 &
    bpid=$!
    CHILDREN+=($bpid)
    wait_line "$tmp/a.out" '^ACK ' 20 || fail "adder a"
    sleep 0.2
    kill -KILL "$apid"
    wait "$apid" 2>/dev/null
    wait_pid "$bpid" 60 || fail "adder b: $(cat "$tmp/b.out")"
    acked=$(grep -c '^ACK ' "$tmp/a.out")
    got=$("$bin" "$hosts" counter_op $ctr get | awk '{ print $2 }')
    echo "counter_kill9: value $got: 200 + $acked told to the killed adder" \
         "+ $((got - 200 - acked)) in flight"
    [ $((got - 200)) -ge "$acked" ] || fail "an acknowledged add lost"
    [ $((got - 200)) -le $((acked + 1)) ] || fail "more adds than were made"
    wait_children /rt/k9c 1 5 || fail "nodes left behind"
    ;;
restart)
    # Fencing tokens keep rising across a server restart.
    "$bin" "$hosts" token_before /rt/restart/lock "$tmp/token" || fail "before"
    stop_server "$LAUNCH_PID" 20
    start_server "$kind" "$LAUNCH_DIR" "$port"
    wait_serving "$port" 60 "$SERVER_PID" || fail "server did not restart"
    "$bin" "$hosts" token_after /rt/restart/lock "$tmp/token" || fail "after"
    ;;
connloss | queue_connloss | toolbox_connloss | reaped)
    "$bin" "$hosts" "$scenario" "$port"
    ;;
election_kill)
    # Three candidate processes; the leader is killed with kill -9: the
    # next in line leads once the server expires the dead one's session,
    # with a larger token.  A candidate joins in the background (its
    # first create may meet no parent and have to make it), so the next
    # starts only once it is in the queue: the queue's order is the test's.
    for i in 0 1 2; do
        "$bin" "$hosts" candidate /rt/elk fair > "$tmp/cand$i.out" 2>&1 &
        CHILDREN+=($!)
        eval "cpid$i=$!"
        wait_line "$tmp/cand$i.out" '^JOINED ' 20 || fail "candidate $i"
        wait_children /rt/elk $((i + 1)) 20 || fail "candidate $i did not queue"
    done
    wait_line "$tmp/cand0.out" '^LEADER ' 20 || fail "first candidate does not lead"
    t0=$(field "$tmp/cand0.out" LEADER 2)
    for i in 1 2; do
        if grep -q '^LEADER ' "$tmp/cand$i.out"; then fail "two leaders"; fi
    done
    killed=$(date +%s%3N)
    kill -KILL "$cpid0"
    wait_line "$tmp/cand1.out" '^LEADER ' 30 || fail "no new leader"
    t1=$(field "$tmp/cand1.out" LEADER 2)
    at=$(field "$tmp/cand1.out" LEADER 3)
    if grep -q '^LEADER ' "$tmp/cand2.out"; then fail "two leaders"; fi
    echo "election: leader killed; candidate 1 leads $((at - killed)) ms later;" \
         "tokens $t0 -> $t1"
    [ "$t1" -gt "$t0" ] || fail "token did not rise"
    [ $((at - killed)) -ge 2500 ] || fail "led before the session expired"
    ;;
interop | interop_rw | counter_interop | barrier_interop | lock_delay_interop)
    classes=$1
    cp="$classes"
    for j in curator-framework curator-client curator-recipes zookeeper \
             zookeeper-jute guava slf4j-api slf4j-nop; do
        cp="$cp:/usr/share/java/$j.jar"
    done
    java_run() {
        java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -Xmx128m \
             -cp "$cp" "$@"
    }
    java_lock() { java_run CuratorLock "$@"; }
    ;;&
barrier_interop)
    # Curator's DistributedBarrier and DistributedDoubleBarrier with
    # libtumbler's on the same paths.
    bar=/rt/ibar/gate
    # Another barrier beside the gate keeps /rt/ibar, and /rt, from ever
    # being empty.  Both are containers (either side makes a missing parent
    # one), which the server's reaper (every second here) deletes once the
    # gate is removed, and Curator's mkdirs does not retry a parent deleted
    # between its look and its create: "Curator set" failed with NoNode
    # for /rt/ibar against ZooKeeper.
    "$bin" "$hosts" barrier_op /rt/ibar/beside set > /dev/null || fail "libtumbler set beside"
    "$bin" "$hosts" barrier_op $bar set > /dev/null || fail "libtumbler set"
    got=$(java_run CuratorBarrier "$hosts" $bar wait 300 | tail -1)
    [ "$got" = TIMEDOUT ] || fail "Curator passed a set barrier: $got"
    java_run CuratorBarrier "$hosts" $bar wait 30000 > "$tmp/jw.out" 2>&1 &
    CHILDREN+=($!)
    wait_line "$tmp/jw.out" WAITING 30 || fail "Curator waiter"
    sleep 0.5 # its exists() on the way; a waiter shows nothing more
    grep -q PASSED "$tmp/jw.out" && fail "Curator passed before the removal"
    got=$("$bin" "$hosts" barrier_op $bar remove)
    [ "$got" = "BARRIER OK" ] || fail "libtumbler remove: $got"
    for p in "${CHILDREN[@]}"; do wait_pid "$p" 30 || fail "Curator waiter"; done
    CHILDREN=()
    [ "$(tail -1 "$tmp/jw.out")" = PASSED ] || fail "Curator waiter: $(cat "$tmp/jw.out")"
    java_run CuratorBarrier "$hosts" $bar set || fail "Curator set"
    got=$("$bin" "$hosts" barrier_op $bar wait 0)
    [ "$got" = "BARRIER ETIMEDOUT" ] || fail "libtumbler passed Curator's barrier: $got"
    java_run CuratorBarrier "$hosts" $bar remove || fail "Curator remove"
    got=$("$bin" "$hosts" barrier_op $bar wait 0)
    [ "$got" = "BARRIER OK" ] || fail "libtumbler after Curator's removal: $got"
    # A double barrier of 3: libtumbler, Curator, then libtumbler; nobody
    # is through before the third arrives, all leave together.
    dbar=/rt/idbar
    "$bin" "$hosts" dmember $dbar 3 "$tmp/go" > "$tmp/m1.out" 2>&1 &
    CHILDREN+=($!)
    wait_children $dbar 1 20 || fail "member 1 did not arrive"
    java_run CuratorBarrier "$hosts" $dbar double 3 "$tmp/go" > "$tmp/m2.out" 2>&1 &
    CHILDREN+=($!)
    wait_children $dbar 2 30 || fail "Curator's member did not arrive"
    grep -q ENTERED "$tmp/m1.out" "$tmp/m2.out" && fail "entered with 2 of 3"
    "$bin" "$hosts" dmember $dbar 3 "$tmp/go" > "$tmp/m3.out" 2>&1 &
    CHILDREN+=($!)
    for i in 1 2 3; do wait_line "$tmp/m$i.out" ENTERED 30 || fail "member $i"; done
    touch "$tmp/go"
    for p in "${CHILDREN[@]}"; do wait_pid "$p" 30 || fail "member $p"; done
    CHILDREN=()
    for i in 1 2 3; do grep -q LEFT "$tmp/m$i.out" || fail "member $i did not leave"; done
    wait_children $dbar 0 5 || fail "nodes left behind"
    echo "barrier_interop: barriers shared both ways; a double barrier of" \
         "two libtumbler members and a Curator member entered and left together"
    ;;
lock_delay_interop)
    # Curator's InterProcessMutex on a lock libtumbler holds with
    # lock-delay: it neither writes nor reads the record, so it keeps
    # working, ignoring the delay.  A libtumbler holder with lock-delay
    # killed with kill -9: Curator's waiter gets the lock at the session's
    # expiry, without the delay.
    lock=/rt/ldi/lock
    "$bin" "$hosts" ldhold $lock 20000 > "$tmp/holder.out" 2>&1 &
    hpid=$!
    CHILDREN+=($hpid)
    wait_line "$tmp/holder.out" '^HELD ' 20 || fail "holder"
    java_run CuratorTry "$hosts" $lock mutex 30000 > "$tmp/cw.out" 2>&1 &
    CHILDREN+=($!)
    wait_children $lock 2 30 || fail "Curator did not queue"
    kill -KILL "$hpid"
    wait_line "$tmp/cw.out" '^ACQUIRED' 20 || fail "Curator's waiter"
    echo "lock_delay_interop: Curator's waiter got the lock after the expiry," \
         "ignoring the 20 s delay"
    wait_children $lock 0 10 || fail "nodes left behind"
    ;;
counter_interop)
    # Curator's DistributedAtomicLong and libtumbler's counter on one node:
    # each reads what the other wrote, then both add at once (a JVM and two
    # libtumbler processes) and no add is lost.
    ctr=/rt/ictr/n
    "$bin" "$hosts" counter_op $ctr set 1234567890123 || fail "libtumbler set"
    got=$(java_run CuratorCounter "$hosts" $ctr get)
    [ "$got" = "VALUE 1234567890123" ] || fail "Curator read $got"
    java_run CuratorCounter "$hosts" $ctr set -5 || fail "Curator set"
    got=$("$bin" "$hosts" counter_op $ctr get)
    [ "$got" = "VALUE -5" ] || fail "libtumbler read $got"
    # The libtumbler adders start once Curator's adds have begun (a JVM
    # takes a while to start), and Curator must still write after that.
    java_run CuratorCounter "$hosts" $ctr add 300 > "$tmp/j.out" 2>&1 &
    CHILDREN+=($!)
    deadline=$((SECONDS + 30))
    v0=-5
    while [ "$v0" = -5 ] && [ "$SECONDS" -lt "$deadline" ]; do
        v0=$("$bin" "$hosts" counter_op $ctr get | awk '{ print $2 }')
    done
    [ "$v0" != -5 ] || fail "Curator's adds did not start"
    for w in 1 2; do
        "$bin" "$hosts" counter_op $ctr add 150 > "$tmp/c$w.out" 2>&1 &
        CHILDREN+=($!)
    done
    for p in "${CHILDREN[@]}"; do wait_pid "$p" 60 || fail "adder $p"; done
    CHILDREN=()
    cat "$tmp/j.out" "$tmp"/c*.out
    got=$("$bin" "$hosts" counter_op $ctr get)
    [ "$got" = "VALUE 595" ] || fail "after 600 adds from -5: $got"
    jlast=$(field "$tmp/j.out" ADDED 4)
    [ "$jlast" -gt "$v0" ] || fail "Curator's adds ended before ours began ($jlast, $v0)"
    echo "counter_interop: Curator and libtumbler read each other's values;" \
         "600 adds, ours from $v0 on, Curator's until $jlast: none lost"
    ;;
interop_rw)
    # Curator's InterProcessReadWriteLock and libtumbler on one path: a
    # Curator writer keeps every libtumbler kind out; libtumbler's reader
    # shares with Curator's reader and keeps Curator's writer out.
    # Curator's InterProcessMutex does not see readers (it sorts their
    # names after its own): the mix docs/recipes.md calls unsafe.
    lock=/rt/irw/lock
    java_run CuratorTry "$hosts" $lock write 20000 "$tmp/w.go" > "$tmp/cw.out" 2>&1 &
    CHILDREN+=($!)
    wait_line "$tmp/cw.out" '^HELD' 30 || fail "Curator writer"
    for k in mutex read write; do
        got=$("$bin" "$hosts" try $lock $k)
        [ "$got" = "RESULT ETIMEDOUT " ] || fail "libtumbler $k beside a Curator writer: $got"
    done
    touch "$tmp/w.go"
    "$bin" "$hosts" hold $lock read "$tmp/r.go" > "$tmp/tr.out" 2>&1 &
    CHILDREN+=($!)
    wait_line "$tmp/tr.out" '^HELD' 20 || fail "libtumbler reader"
    got=$(java_run CuratorTry "$hosts" $lock read 10000)
    [ "$got" = ACQUIRED ] || fail "Curator reader beside a libtumbler reader: $got"
    got=$(java_run CuratorTry "$hosts" $lock write 1000)
    [ "$got" = TIMEDOUT ] || fail "Curator writer beside a libtumbler reader: $got"
    got=$(java_run CuratorTry "$hosts" $lock mutex 1000)
    [ "$got" = ACQUIRED ] || fail "Curator's mutex now sees readers: $got (docs/recipes.md)"
    touch "$tmp/r.go"
    for p in "${CHILDREN[@]}"; do wait_pid "$p" 30 || fail "holder $p"; done
    CHILDREN=()
    wait_children $lock 0 5 || fail "nodes left behind"
    echo "interop_rw: ok"
    ;;
interop)
    # libtumbler and Apache Curator (InterProcessMutex, Debian's jars) on
    # one path: first a queue built in a known order, alternating the two
    # libraries, must be served in that order; then both contend freely.
    # Every hold is logged with its token: no overlap, tokens rising.
    log=$tmp/queue.log
    : > "$log"
    lock=/rt/interop/lock
    # The first holder keeps the lock until the queue is complete: a JVM
    # may take seconds to start on a loaded machine.
    "$bin" "$hosts" interop_hold $lock -1 "$log" 0 1 > "$tmp/q0.out" 2>&1 &
    CHILDREN+=($!)
    wait_line "$tmp/q0.out" '^HELD ' 20 || fail "first holder"
    n=1
    for who in 1 2 3 4; do
        if [ $((who % 2)) = 1 ]; then
            java_lock "$hosts" $lock 200 "$log" $who 1 > "$tmp/q$who.out" 2>&1 &
        else
            "$bin" "$hosts" interop_hold $lock 200 "$log" $who 1 > "$tmp/q$who.out" 2>&1 &
        fi
        CHILDREN+=($!)
        n=$((n + 1))
        wait_children $lock $n 30 || fail "holder $who did not queue"
    done
    touch "$log.go"
    for p in "${CHILDREN[@]}"; do wait_pid "$p" 60 || fail "queue member $p"; done
    CHILDREN=()
    cat "$tmp"/q*.out
    "$bin" "$hosts" checklog "$log" 5 ordered || fail "queue order"
    log=$tmp/mixed.log
    : > "$log"
    for who in 10 11; do
        java_lock "$hosts" $lock 5 "$log" $who 10 > "$tmp/j$who.out" 2>&1 &
        CHILDREN+=($!)
        "$bin" "$hosts" interop_hold $lock 5 "$log" $((who + 10)) 10 > "$tmp/c$who.out" 2>&1 &
        CHILDREN+=($!)
    done
    for p in "${CHILDREN[@]}"; do wait_pid "$p" 90 || fail "contender $p"; done
    CHILDREN=()
    "$bin" "$hosts" checklog "$log" 40 || fail "mixed contention"
    wait_children $lock 0 5 || fail "nodes left behind"
    ;;
kazoo_queue)
    # kazoo's Queue and LockingQueue with libtumbler's on the same paths.
    timeout -k 5 120 /usr/bin/python3 "$here/kazoo_queue.py" "$hosts" "$bin" ||
        fail "kazoo and libtumbler queues"
    ;;
kazoo)
    # kazoo (Debian's python3-kazoo) and libtumbler on the same paths.
    timeout -k 5 120 /usr/bin/python3 "$here/kazoo_mix.py" "$hosts" "$bin" "$tmp" ||
        fail "kazoo and libtumbler"
    ;;
*)
    "$bin" "$hosts" "$scenario" "$@"
    ;;
esac
