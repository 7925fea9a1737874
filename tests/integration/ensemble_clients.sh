#!/usr/bin/env bash
# Clients others wrote, and ours, against a 3-member tumblerd ensemble on 127.0.0.1, with
# members killed (SIGKILL) or stopped (SIGSTOP) under them.  Each check is numbered and says
# what it found; every check runs even after one failed, and the script fails if any did.
#   1. kazoo given all three members: node operations, a watch fired by a write made through
#      another member, an ephemeral node; the member it is on killed: it comes back on another
#      with the same session, its ephemeral node still there, its DataWatch/ChildrenWatch
#      firing on later changes (kazoo's own one-shot watches are not re-registered by kazoo
#      2.8: check 7 does that with the C client)
#   2. Apache's CLI (ZooKeeperMain, what zkCli.sh runs) given all three while one is down:
#      create and get
#   3. read-your-writes on a follower, also with reads pipelined behind the write
#   4. sync on a follower after writes through the leader and through the other follower
#   5. a client that has seen a zxid a member has not applied is refused by it: a member
#      stopped while others write, then continued as the client connects (refused, or caught
#      up first: never a stale answer); and, deterministic, a zxid far ahead (raw protocol)
#   6. `tumbler -s HOSTS lock PATH -- CMD` while the member its session is on is killed: CMD
#      runs on to its end, `tumbler locks` shows the same session holding, nobody else gets the
#      lock, exit 0
#   7. the official C client's watches re-registered (SetWatches) on the member it moves to
#   8. writes one after another through each follower while the leader is killed: each is
#      acknowledged or sees its connection lost (and is retried), none fails otherwise
#   9. every connection a member writes to another member on has TCP_NODELAY, and the leader
#      watches the links followers made to it, and every member the raft connections others
#      made to it, with keepalive probes (nodelay.py)
#  10. once writes pause, every member takes a snapshot and gives back the log it kept in
#      memory, followers as well as the leader
#  11. a follower stopped while the others write enough for the leader's log to drop what it
#      lacks is sent the leader's snapshot when continued: a client waiting there on a watch
#      (`tumbler stat -w`) hears the event the snapshot holds, through its own reconnection
#  12. a session made on the leader (its creation the only write) resumed with lastZxid 0 on a
#      follower that has not applied its creation yet (stopped, then continued with the
#      ConnectRequest waiting): taken once the follower has caught up, not refused as expired
#      (a close unanswered, the follower having no leader at that moment, is tried again)
#  13. a session taken over through a follower: the leader counts its timeout from the claim,
#      not from the last report of the member the client left
#  14. a follower's link to the leader made again ends the one before it on the leader, with
#      what that one still had unread (two links that say they are the same follower)
#
#   ensemble_clients.sh TUMBLER SESSION_TOOL ENSEMBLE_WATCH   (TUMBLERD names the server)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ $# = 3 ] || it_die "usage: $0 TUMBLER SESSION_TOOL ENSEMBLE_WATCH"
tumbler=$1 session_tool=$2 ensemble_watch=$3
[ -x "${TUMBLERD:-}" ] || it_die "TUMBLERD is not set to the server binary"
py=/usr/bin/python3
helper=$here/ensemble_clients.py
it_init
work=$(it_tmpdir work)
t_start=$SECONDS

ens_init 3
{
    echo "tickTime=1000"
    echo "maxSessionTimeout=60000"   # check 11's client outlives its member's stop
    echo "4lw.commands.whitelist=*"
    # Member 3 by name: raft binds and dials, and the peer links check
    # their callers, by what the name resolves to.
    for i in 1 2 3; do
        host=127.0.0.1
        [ "$i" = 3 ] && host=localhost
        echo "server.$i=$host:${qport[$i]}:${eport[$i]};127.0.0.1:${cport[$i]}"
    done
} > "$work/zoo.cfg"
hosts="127.0.0.1:${cport[1]},127.0.0.1:${cport[2]},127.0.0.1:${cport[3]}"

# start I: member I, its log in s$I/server.log (shown by lib.sh's cleanup if the test fails).
start() { ens_start "$1" "$work/zoo.cfg"; }
# kill9 I: member I killed (SIGKILL) and reaped at once (so that bash says nothing of it).
kill9() {
    kill -KILL "${pid[$1]}" 2>/dev/null
    wait "${pid[$1]}" 2>/dev/null
    pid[$1]=0
}
srvr() { four_letter "${cport[$1]}" srvr; }
zxid() { srvr "$1" | sed -n 's/^Zxid: //p'; }
index_of_port() {
    local i
    for i in 1 2 3; do [ "${cport[$i]}" = "$1" ] && { echo "$i"; return 0; }; done
    return 1
}
# leader: the member that says it leads (within 15 s), or nothing.
leader() {
    local i n
    for n in $(seq 150); do
        for i in 1 2 3; do
            [ "${pid[$i]}" != 0 ] && [ "$(member_mode "$i")" = leader ] && { echo "$i"; return 0; }
        done
        sleep 0.1
    done
    return 1
}
# deaths: a member that ended though nobody here killed it (a crash, or a kill from outside)
# is said, with its exit status and its last log lines, counted in `unexpected`, and forgotten
# (so that all_up starts it again).
unexpected=0
deaths() {
    local i st
    for i in 1 2 3; do
        [ "${pid[$i]}" != 0 ] && ! running "${pid[$i]}" || continue
        wait "${pid[$i]}" 2>/dev/null
        st=$?
        echo "  UNEXPECTED: member $i (pid ${pid[$i]}) ended with status $st" \
             "($( [ "$st" -gt 128 ] && echo "signal $((st - 128))" || echo "its own exit")), not killed here:"
        tail -n 5 "${dir[$i]}/server.log" | sed 's/^/    /'
        pid[$i]=0
        unexpected=$((unexpected + 1))
    done
}
# all_up: every member running, a leader, and every member at the leader's zxid (15 s).
all_up() {
    local i l n ok
    deaths
    for i in 1 2 3; do
        if [ "${pid[$i]}" = 0 ]; then
            start "$i"
            wait_serving "${cport[$i]}" 15 "${pid[$i]}" || return 1
        fi
    done
    l=$(leader) || { echo "no leader"; return 1; }
    for n in $(seq 150); do
        ok=1
        for i in 1 2 3; do
            [ "$(zxid "$i")" = "$(zxid "$l")" ] && [ -n "$(member_mode "$i")" ] || ok=0
        done
        [ "$ok" = 1 ] && return 0
        sleep 0.1
    done
    echo "members not caught up with the leader: $(for i in 1 2 3; do printf '%s ' "$(zxid "$i")"; done)"
    return 1
}

# run_killing OUT COMMAND...: COMMAND (60 s at most) with its output in OUT; when it prints
# "kill PORT", that member is killed (SIGKILL) and KILLED set to its number.  Returns
# COMMAND's status.
run_killing() {
    local out=$1 port k
    shift
    KILLED=0
    run_bg 60 "$@" > "$out" 2>&1
    while :; do
        port=$(sed -n 's/^kill //p' "$out")
        if [ "$KILLED" = 0 ] && [ -n "$port" ] && k=$(index_of_port "$port"); then
            KILLED=$k
            kill9 "$k"
        fi
        running "$BG_PID" || break
        sleep 0.05
    done
    wait "$BG_PID"
}

# socket_inodes PID: the inodes of process PID's sockets, one a line.
socket_inodes() {
    ls -l "/proc/$1/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p'
}

# peer_port PID: the member's client port process PID has an established connection to.
peer_port() {
    local inodes
    inodes=$(socket_inodes "$1")
    awk -v inodes="$inodes" -v ports="${cport[*]}" '
        BEGIN { n = split(inodes, a, "\n"); for (i = 1; i <= n; i++) ours[a[i]] = 1
                m = split(ports, b, " "); for (i = 1; i <= m; i++) p[sprintf("%04X", b[i])] = b[i] }
        FNR > 1 && $4 == "01" && ($10 in ours) { split($3, r, ":"); if (r[2] in p) print p[r[2]] }
    ' /proc/net/tcp | head -n 1
}

# resume_continued I SID PW ZXID PATH OUT [resume-sync]: session_tool resume of SID on member
# I, stopped, which is continued once the ConnectRequest waits in its socket; session_tool's
# status.
resume_continued() {
    local k
    run_bg 30 "$session_tool" "${7:-resume}" "127.0.0.1:${cport[$1]}" "$2" "$3" "$4" "$5" > "$6" 2>&1
    for k in $(seq 100); do
        queued "${cport[$1]}" "$(pgrep -P "$BG_PID" | head -n 1)" && break
        sleep 0.05
    done
    kill -CONT "${pid[$1]}"
    wait "$BG_PID"
}

# queued PORT PID: the server end (on PORT) of process PID's connection to it holds bytes
# not read yet.  /proc/net/tcp: local and remote address as hex ip:port, state 01 is
# established, then tx_queue:rx_queue.
queued() {
    local inodes
    [ -n "$2" ] || return 1
    inodes=$(socket_inodes "$2")
    awk -v inodes="$inodes" -v port="$(printf %04X "$1")" '
        BEGIN { n = split(inodes, a, "\n"); for (i = 1; i <= n; i++) ours[a[i]] = 1 }
        FNR > 1 && $4 == "01" { split($2, l, ":"); split($3, r, ":"); split($5, q, ":")
            if ($10 in ours && r[2] == port) mine = l[2]
            else if (l[2] == port) rx[r[2]] = q[2] }
        END { exit !(mine != "" && (mine in rx) && rx[mine] != "00000000") }
    ' /proc/net/tcp
}

passed=0 failed=0 results=()
# run_check N TITLE FUNCTION: run one check, say what it found.
run_check() {
    local n=$1 title=$2 fn=$3 t0=$SECONDS
    echo "--- check $n: $title"
    if "$fn"; then
        passed=$((passed + 1))
        results+=("ok $n - $title ($((SECONDS - t0)) s)")
    else
        failed=$((failed + 1))
        results+=("FAIL $n - $title")
    fi
    echo "${results[-1]}"
    deaths
}

for i in 1 2 3; do start "$i"; done
for i in 1 2 3; do
    wait_serving "${cport[$i]}" 20 "${pid[$i]}" || it_die "member $i did not start"
done
l=$(leader) || it_die "no member leads"
echo "3 members on $hosts, member $l leads"

down=0   # the member check 1 killed, still down for check 2
check1() {
    local out=$work/kazoo.out rc
    run_killing "$out" "$py" "$helper" failover "${cport[@]}"
    rc=$?
    sed 's/^/  /' "$out"
    down=$KILLED
    [ "$down" = 0 ] ||
        echo "  (member $down was $([ "$down" = "$l" ] && echo the leader || echo a follower))"
    return "$rc"
}
run_check 1 "kazoo given all three members; the member it is on killed: same session, \
ephemeral node kept, watches fire after the reconnect" check1

check2() {
    local out=$work/zkcli.out rc
    if [ "$down" = 0 ]; then
        down=$(( l % 3 + 1 ))
        kill9 "$down"
        echo "  (member $down killed here)"
    fi
    echo "  member $down (:${cport[$down]}) is down; zkCli given $hosts"
    printf 'create /zkcli hello\nget /zkcli\nset /zkcli again\nget /zkcli\nquit\n' \
        > "$work/zkcli.in"
    # ZooKeeperMain, as lib.sh's zkcli runs it, but waiting for its session before the commands.
    # shellcheck disable=SC2046
    run_bounded 60 "${ZK_JAVA:-java}" $(zk_jvm_flags "$work/zkcli.log") \
        -cp "$(zk_classpath)" org.apache.zookeeper.ZooKeeperMain \
        -server "$hosts" -timeout 10000 -waitforconnection < "$work/zkcli.in" > "$out" 2>&1
    rc=$?
    grep -v -e '^$' -e '^WATCHER::' -e '^WatchedEvent state:SyncConnected type:None' \
        -e '^Connecting to' -e '^Welcome to ZooKeeper' -e '^JLine support' "$out" |
        sed 's/^/  | /'
    [ "$rc" = 0 ] || { echo "  zkCli exited with $rc"; return 1; }
    if [ "$(grep -c -x -e 'Created /zkcli' -e hello -e again "$out")" != 3 ]; then
        echo "  FAIL: expected 'Created /zkcli', then 'hello' and 'again' from the gets"
        return 1
    fi
    # What it wrote, read back through the tumbler CLI on another member.
    local other=$(( down % 3 + 1 )) got
    got=$(timeout 20 "$tumbler" -s "127.0.0.1:${cport[$other]}" sync /zkcli 2>&1 &&
          timeout 20 "$tumbler" -s "127.0.0.1:${cport[$other]}" get /zkcli 2>&1)
    [ "$got" = again ] || { echo "  FAIL: /zkcli read on member $other: '$got'"; return 1; }
    echo "  ok   created, read, set and read again; member $other reads 'again'"
    timeout 20 "$tumbler" -s "$hosts" delete /zkcli > /dev/null 2>&1
    return 0
}
run_check 2 "zkCli given all three members while one is down: create and get" check2

# The killed member back, caught up, before the checks that need all three.
all_up || it_die "the ensemble did not come back whole"
l=$(leader)
f1=$(( l % 3 + 1 )) f2=$(( (l + 1) % 3 + 1 ))
echo "member $l leads; members $f1 and $f2 follow"

check3() {
    run_bounded 60 "$py" "$helper" ryw "${cport[$f1]}" > "$work/ryw.out" 2>&1
    local rc=$?
    sed 's/^/  /' "$work/ryw.out"
    return "$rc"
}
run_check 3 "read-your-writes on follower $f1" check3

check4() {
    run_bounded 60 "$py" "$helper" sync "${cport[$f1]}" "${cport[$l]}" "${cport[$f2]}" \
        > "$work/sync.out" 2>&1
    local rc=$?
    sed 's/^/  /' "$work/sync.out"
    return "$rc"
}
run_check 4 "sync on follower $f1 after writes through leader $l and follower $f2" check4

check5() {
    local sid pw z rc bad=0 t0 far=9223372032559808512 # 0x7fffffff00000000
    local log=${dir[$f2]}/server.log
    # a. Member f2 stopped while the others take writes; a session opened on the leader (its
    # last zxid now one f2 lacks) resumed on f2 as it is continued.
    local data
    data=$(head -c 2000 /dev/zero | tr '\0' x)
    kill -STOP "${pid[$f2]}"
    for i in $(seq 20); do
        timeout 20 "$tumbler" -s "127.0.0.1:${cport[$l]}" create "/lag$i" "$data" \
            > /dev/null 2>&1 || { echo "  FAIL: a write with member $f2 stopped"; bad=1; }
    done
    read -r sid pw z < <("$session_tool" open "127.0.0.1:${cport[$l]}" /lagged 10000)
    if [ -z "${z:-}" ]; then
        kill -CONT "${pid[$f2]}"
        echo "  FAIL: no session on the leader"
        return 1
    fi
    local before
    before=$(grep -c "client has seen zxid" "$log")
    resume_continued "$f2" "$sid" "$pw" "$z" /lagged "$work/resume.out"
    rc=$?
    case $rc in
        0) echo "  ok   member $f2, continued, had caught up before it answered: session" \
                "resumed and the node it wrote is there (z=$(printf 0x%x "$z"))" ;;
        2) if [ "$(grep -c "client has seen zxid" "$log")" -gt "$before" ]; then
               echo "  ok   member $f2, behind the client's zxid $(printf 0x%x "$z"), refused it:"
               grep "client has seen zxid" "$log" | tail -n 1 | sed 's/^/       /'
           else
               echo "  FAIL: member $f2 closed the connection without saying why"; bad=1
           fi ;;
        1) echo "  FAIL: member $f2 took the session and answered that its own node" \
                "/lagged does not exist: a stale read"; bad=1 ;;
        *) echo "  FAIL: resume on member $f2 gave $rc (3: refused as expired)"
           cat "$work/resume.out"; bad=1 ;;
    esac
    # b. Deterministic: a zxid far ahead of every member, in a raw ConnectRequest.
    read -r sid pw z < <("$session_tool" open "127.0.0.1:${cport[$l]}" /ahead 10000)
    before=$(grep -c "client has seen zxid 0x7fffffff00000000" "${dir[$f1]}/server.log")
    t0=$(date +%s%N)
    "$session_tool" resume "127.0.0.1:${cport[$f1]}" "$sid" "$pw" "$far" /ahead \
        > "$work/ahead.out" 2>&1
    rc=$?
    t0=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [ "$rc" = 2 ] && [ "$t0" -lt 5000 ] &&
        [ "$(grep -c "client has seen zxid 0x7fffffff00000000" "${dir[$f1]}/server.log")" -gt "$before" ]; then
        echo "  ok   lastZxidSeen 0x7fffffff00000000: member $f1 closed the connection in $t0 ms:"
        grep "client has seen zxid 0x7fffffff00000000" "${dir[$f1]}/server.log" | tail -n 1 |
            sed 's/^/       /'
    else
        echo "  FAIL: lastZxidSeen 0x7fffffff00000000 on member $f1: status $rc after $t0 ms" \
             "(2 and a closed connection expected), log:"
        tail -n 3 "${dir[$f1]}/server.log" | sed 's/^/       /'
        bad=1
    fi
    # The same session with its real zxid is taken (the refusal was the zxid's).
    for i in $(seq 30); do
        "$session_tool" resume "127.0.0.1:${cport[$f1]}" "$sid" "$pw" "$z" /ahead \
            > "$work/ahead.out" 2>&1 && break
        sleep 0.1
    done
    if grep -q "present" "$work/ahead.out"; then
        echo "  ok   the same session with its real zxid is taken by member $f1"
    else
        echo "  FAIL: the session with its real zxid was refused by member $f1:" \
             "$(cat "$work/ahead.out")"
        bad=1
    fi
    for i in $(seq 20); do
        timeout 20 "$tumbler" -s "$hosts" delete "/lag$i" > /dev/null 2>&1
    done
    return "$bad"
}
run_check 5 "a member behind the client's last zxid refuses it" check5

# A session resumed on another member while its first connection is still open (as when a
# client gave that one up, with a request on its way): what the old connection sends is
# refused, as ZooKeeper's leader refuses it (SESSIONMOVED), never applied after the writes the
# session makes since.
check5m() {
    local bad=0 from to n=0 a b
    all_up || return 1
    l=$(leader)
    a=$(( l % 3 + 1 )) b=$(( (l + 1) % 3 + 1 ))
    for pair in "$a $b" "$a $l" "$l $a"; do
        read -r from to <<< "$pair"
        n=$((n + 1))
        if "$session_tool" moved "127.0.0.1:${cport[$from]}" "127.0.0.1:${cport[$to]}" \
                "/moved$n" > "$work/moved.out" 2>&1; then
            echo "  ok   member $from to $to: $(cat "$work/moved.out")"
        else
            echo "  FAIL: member $from to $to: $(cat "$work/moved.out")"
            bad=1
        fi
    done
    return "$bad"
}
run_check 5m "a session moved: its old connection writes nothing more" check5m

check6() {
    local out=$work/lock.out tok=$work/lock.token mark=$work/lock.done lk rc bad=0
    local held p k sess sess2 n
    all_up || return 1
    "$tumbler" -s "$hosts" --session-timeout 10 lock /ens-lock -- \
        sh -c 'echo "$TUMBLER_LOCK_TOKEN" > "$0"; sleep 7; echo done > "$1"' "$tok" "$mark" \
        > "$out" 2>&1 &
    lk=$!
    IT_JOBS+=("$lk")
    for n in $(seq 100); do [ -s "$tok" ] && break; sleep 0.1; done
    [ -s "$tok" ] || { echo "  FAIL: the lock was not taken within 10 s"; cat "$out"; return 1; }
    held=$(timeout 20 "$tumbler" -s "$hosts" locks /ens-lock 2>&1)
    echo "$held" | sed 's/^/  | /'
    sess=$(echo "$held" | awk '$2 == "holder" { print $4 }')
    p=$(peer_port "$lk")
    k=$(index_of_port "$p") || { echo "  FAIL: tumbler ($lk) is connected to no member"; return 1; }
    echo "  tumbler holds /ens-lock (token $(cat "$tok"), session $sess) through member $k" \
         "($([ "$k" = "$(leader)" ] && echo the leader || echo a follower)); killing it"
    kill9 "$k"
    # tumbler moves to another member within its session timeout.
    for n in $(seq 100); do
        p=$(peer_port "$lk")
        [ -n "$p" ] && [ "$p" != "${cport[$k]}" ] && break
        sleep 0.1
    done
    if [ -n "$p" ] && [ "$p" != "${cport[$k]}" ]; then
        echo "  ok   tumbler reconnected to member $(index_of_port "$p")"
    else
        echo "  FAIL: tumbler not connected to another member within 10 s"; bad=1
    fi
    running "$lk" && echo "  ok   tumbler and its command still running" ||
        { echo "  FAIL: tumbler ended after the kill"; bad=1; }
    for n in $(seq 20); do
        held=$(timeout 20 "$tumbler" -s "$hosts" locks /ens-lock 2>&1) && break
        sleep 0.2
    done
    sess2=$(echo "$held" | awk '$2 == "holder" { print $4 }')
    if [ -n "$sess" ] && [ "$sess2" = "$sess" ] && echo "$held" | grep -q "1 holding"; then
        echo "  ok   tumbler locks: the same session $sess still holds it"
    else
        echo "  FAIL: tumbler locks after the kill:"; echo "$held" | sed 's/^/  | /'; bad=1
    fi
    # 69, the connection lost: a member that has just lost its leader closes it; tried again.
    for n in $(seq 30); do
        timeout 20 "$tumbler" -s "$hosts" lock -n -E 7 /ens-lock -- true > "$work/other.out" 2>&1
        rc=$?
        [ "$rc" = 69 ] || break
        sleep 0.1
    done
    if [ "$rc" = 7 ]; then
        echo "  ok   another tumbler lock -n finds it taken"
    else
        echo "  FAIL: another tumbler lock -n gave $rc (7: taken):"; cat "$work/other.out"; bad=1
    fi
    for n in $(seq 150); do running "$lk" || break; sleep 0.1; done
    if running "$lk"; then
        echo "  FAIL: tumbler still running 15 s after the kill (its command sleeps 7 s)"
        kill -TERM "$lk"
        bad=1
    fi
    wait "$lk"
    rc=$?
    sed 's/^/  | /' "$out"
    if [ "$rc" = 0 ] && [ "$(cat "$mark" 2>/dev/null)" = "done" ]; then
        echo "  ok   the command ran to its end and tumbler exited 0"
    else
        echo "  FAIL: tumbler exited $rc, command $( [ -s "$mark" ] && echo finished ||
             echo 'did not finish')"
        bad=1
    fi
    return "$bad"
}
run_check 6 "tumbler lock given all three members; the member its session is on killed" check6

check7() {
    local out=$work/cwatch.out rc
    all_up || return 1
    l=$(leader)
    run_killing "$out" "$ensemble_watch" "${cport[@]}"
    rc=$?
    sed 's/^/  /' "$out"
    [ "$KILLED" = 0 ] ||
        echo "  (member $KILLED was $([ "$KILLED" = "$l" ] && echo the leader || echo a follower))"
    return "$rc"
}
run_check 7 "the C client given all three members; the member it is on killed: watches \
re-registered there" check7

check8() {
    local out=$work/election.out rc
    all_up || return 1
    l=$(leader)
    run_killing "$out" "$py" "$helper" election "${cport[$l]}" \
        "${cport[$(( l % 3 + 1 ))]}" "${cport[$(( (l + 1) % 3 + 1 ))]}"
    rc=$?
    sed 's/^/  /' "$out"
    return "$rc"
}
run_check 8 "writes through each follower while the leader is killed: acknowledged or \
connection lost, no other error" check8

check9() {
    local i rc=0 q e
    all_up || return 1
    l=$(leader)
    q=$(IFS=,; echo "${qport[*]:1}") e=$(IFS=,; echo "${eport[*]:1}")
    for i in 1 2 3; do
        "$py" "$here/nodelay.py" "${pid[$i]}" "$([ "$i" = "$l" ] && echo leader || echo follower)" \
            "$q" "$e" || rc=1
    done
    return "$rc"
}
run_check 9 "every connection between members has TCP_NODELAY; followers' links watched" check9

check10() {
    all_up || return 1
    "$py" "$helper" idle "${cport[1]}" "${cport[2]}" "${cport[3]}"
}
run_check 10 "once writes pause, every member gives back its log's memory" check10

# snapshots I: the snapshots member I has taken (mntr).
snapshots() { four_letter "${cport[$1]}" mntr | sed -n 's/^zk_tumbler_snapshots_taken\t//p'; }
check11() {
    local f log out before rc i bad=0 lhost taken fill
    all_up || return 1
    l=$(leader)
    f=$(( l % 3 + 1 )) lhost=127.0.0.1:${cport[$l]}
    log=${dir[$f]}/server.log out=$work/snapwatch.out
    head -c 900000 /dev/zero | tr '\0' x > "$work/big"
    if ! { "$tumbler" -s "$lhost" create /snapw && "$tumbler" -s "$lhost" create /snapw/pred &&
           "$tumbler" -s "$lhost" create -f "$work/big" /snapw/big; } > /dev/null; then
        echo "  FAIL: cannot create /snapw"
        return 1
    fi
    run_bg 60 "$tumbler" -s "127.0.0.1:${cport[$f]}" --session-timeout 60 stat -w /snapw/pred \
        > "$out" 2>&1
    for i in $(seq 100); do
        four_letter "${cport[$f]}" wchp | grep -q '^/snapw/pred' && break
        sleep 0.05
    done
    before=$(grep -c "restored snapshot at" "$log")
    # Member f stopped; through the leader, writes of 900 kB, more than the socket buffers
    # between the two can hold (the kernel's largest, tcp_rmem's and tcp_wmem's), so that the
    # delete the member is to miss waits in the leader's own queue; then enough for two
    # snapshots of the leader to complete after the delete (due after 4 MiB of log, each keeps
    # as few entries as that much log holds).  Then the leader's connections to the member are
    # ended (ss -K, loopback sockets of this test's processes only): what it queued is dropped,
    # and the member, continued at once, reads what its socket held and is then sent that
    # snapshot.  (Sent to a member still stopped, the snapshot would be sent again only after
    # libraft's 30 s.)
    fill=$(( ($(awk '{print $3}' /proc/sys/net/ipv4/tcp_rmem) +
              $(awk '{print $3}' /proc/sys/net/ipv4/tcp_wmem)) / 900000 + 4 ))
    kill -STOP "${pid[$f]}"
    { for i in $(seq "$fill"); do echo "set -f $work/big /snapw/big"; done
      echo "delete /snapw/pred"; } | "$tumbler" -e -s "$lhost" > /dev/null || bad=1
    taken=$(snapshots "$l")
    for i in $(seq 12); do echo "set -f $work/big /snapw/big"; done |
        "$tumbler" -e -s "$lhost" > /dev/null || bad=1
    for i in $(seq 200); do
        [ "$(snapshots "$l")" -ge $((taken + 2)) ] && break
        sleep 0.1
    done
    ss -K -tn dst 127.0.0.1 "dport = :${qport[$f]}" > /dev/null
    kill -CONT "${pid[$f]}"
    for i in $(seq 450); do
        [ "$(grep -c "restored snapshot at" "$log")" -gt "$before" ] && break
        sleep 0.1
    done
    wait "$BG_PID"
    rc=$?
    if [ "$bad" = 1 ]; then
        echo "  FAIL: a write through leader $l failed"
    elif [ "$(grep -c "restored snapshot at" "$log")" -le "$before" ]; then
        echo "  FAIL: member $f caught up without the leader's snapshot: nothing checked"
        bad=1
    elif [ "$rc" = 0 ] && grep -q "NodeDeleted /snapw/pred" "$out"; then
        echo "  ok   member $f installed the leader's snapshot, and the client watching" \
             "/snapw/pred there heard: $(grep NodeDeleted "$out")"
        grep "restored snapshot at\|snapshot from the leader installed" "$log" | tail -n 2 | sed 's/^/       /'
    else
        echo "  FAIL: member $f installed the leader's snapshot; the client watching" \
             "/snapw/pred there heard nothing (status $rc):"
        sed 's/^/       /' "$out"
        bad=1
    fi
    "$tumbler" -s "$hosts" deleteall /snapw > /dev/null 2>&1
    return "$bad"
}
run_check 11 "a follower sent the leader's snapshot: its clients' watches fire" check11

check12() {
    local f sid pw z rc try
    # A member stopped longer than the election timeout may, once continued, look for a
    # leader before it reads the ConnectRequest: with no leader to ask, it closes the
    # connection and the client tries again.  That is not this check's case, which is tried
    # again, with a new session, up to 3 times.
    for try in 1 2 3; do
        all_up || return 1
        l=$(leader)
        f=$(( (l + 1) % 3 + 1 ))
        kill -STOP "${pid[$f]}"
        read -r sid pw z < <("$session_tool" open "127.0.0.1:${cport[$l]}" /fresh$try 10000)
        if [ -z "${z:-}" ]; then
            kill -CONT "${pid[$f]}"
            echo "  FAIL: no session on the leader"
            return 1
        fi
        # lastZxid 0: the client has seen nothing the member could lack.  Its read is synced:
        # the member may have applied the session's creation and not yet the node's.
        resume_continued "$f" "$sid" "$pw" 0 /fresh$try "$work/fresh.out" resume-sync
        rc=$?
        [ "$rc" = 2 ] || break
        echo "  ..   member $f closed the connection unanswered (no leader yet?); again"
    done
    case $rc in
        0) echo "  ok   member $f took session $sid, made on leader $l as it was stopped," \
                "and its ephemeral node is there" ;;
        3) echo "  FAIL: member $f refused session $sid as expired: it had not applied its" \
                "creation yet"; return 1 ;;
        *) echo "  FAIL: resume on member $f gave $rc: $(cat "$work/fresh.out")"; return 1 ;;
    esac
    # A session nobody made is still refused as expired there, once the barrier is back.
    timeout 20 "$session_tool" resume "127.0.0.1:${cport[$f]}" "$(printf %x $((0x$sid + 4096)))" \
        "$pw" 0 /fresh > "$work/fresh.out" 2>&1
    rc=$?
    if [ "$rc" = 3 ]; then
        echo "  ok   member $f refused a session nobody made as expired"
    else
        echo "  FAIL: member $f, a session nobody made: $rc (3 expected)"
        return 1
    fi
}
run_check 12 "a session resumed on a follower that has not applied its creation yet" check12

check13() {
    local f1 f2 sid pw z rc
    all_up || return 1
    l=$(leader)
    f1=$(( l % 3 + 1 ))
    f2=$(( f1 % 3 + 1 ))
    # A session of 8 s, last heard from on f1 at t0 (its socket dropped), taken over on f2 at
    # t0 + 4 s and left silent 6 s: the leader counts its timeout from the claim, so it is
    # alive at t0 + 10 s; counted from t0, it would have expired by t0 + 9 s.
    read -r sid pw z < <("$session_tool" open "127.0.0.1:${cport[$f1]}" /claimed 8000)
    [ -n "${z:-}" ] || { echo "  FAIL: no session on member $f1"; return 1; }
    sleep 4
    timeout 30 "$session_tool" resume "127.0.0.1:${cport[$f2]}" "$sid" "$pw" "$z" /claimed 6000 \
        > "$work/claimed.out" 2>&1
    rc=$?
    [ "$rc" = 0 ] || { echo "  FAIL: resumed on member $f2 and silent 6 s: $rc $(cat "$work/claimed.out")"; return 1; }
    echo "  ok   session $sid, taken over on member $f2 4 s after member $f1 last heard it, alive 6 s later"
}
run_check 13 "a session taken over through a follower counts its timeout from then" check13

check14() {
    all_up || return 1
    "$py" "$helper" relink "${eport[$(leader)]}"
}
run_check 14 "a follower's link made again ends the one before it on the leader" check14

all_up || { echo "the ensemble did not come back whole at the end"; failed=$((failed + 1)); }
echo "=== summary ($((SECONDS - t_start)) s)"
printf '%s\n' "${results[@]}"
[ "$unexpected" = 0 ] ||
    echo "$unexpected member(s) ended without being killed here (see UNEXPECTED above)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$unexpected" = 0 ]
