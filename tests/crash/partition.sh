#!/usr/bin/env bash
# Network partitions between the members of a 3-server ensemble and its
# observer (server 4).  Each
# tumblerd runs in a network namespace of its own that this test makes, with
# two veth links to a fifth namespace (the hub): one to the servers'
# bridge, which carries raft and forwarded writes (10.200.<pid-based>.N),
# and one to the clients' bridge (10.201.<pid-based>.N); the addresses
# exist only inside these namespaces, nothing changes in the machine's own.
# A cut sets a member's port on the servers' bridge down (the kernel here
# has no netem): its packets to and from the other members go nowhere and
# no connection is reset, while clients, all in the hub, still reach every
# member, as they reach both sides of a real partition.
#   1. the leader cut off (30 s: long enough for TCP's retransmissions to
#      back off, as in a real partition), with a session on it (a tumbler
#      shell that may move to any member) and a writer with creates in
#      flight at the cut:
#      - the creates the session sends after the cut are never
#        acknowledged, and are on no member once healed;
#      - the other two elect a leader (within 20 s) and acknowledge writes;
#      - the cut-off server closes its clients and refuses new sessions
#        (within 20 s; tumblerd does it 2 x electionTimeout after it knows
#        no leader), and the session moves to the majority and writes there;
#   2. a follower cut off (3 s) with such a session on it: the leader
#      stays, the two acknowledge writes, the cut-off one acknowledges none
#      and closes its clients, the session moves over and writes; whatever
#      of the session's creates sent to the cut-off follower (outcome
#      unknown to it) is applied, it is applied before the write the
#      session made after it (ZooKeeper's FIFO order of a session).
#   3. the observer cut off (2 s at least) with a session pinned to it:
#      none of its creates acknowledged while cut, the session told
#      (connection lost) and the observer closing its clients and refusing
#      new sessions within 20 s (tumblerd: an election timeout without a
#      heartbeat and it knows no leader, then 2 x electionTimeout); healed,
#      it gives sessions and takes writes again within 10 s, catches up
#      within 10 s and has the voters' tree (check_all over the four);
#   4. a follower whose links to the leader's election port the leader
#      refuses while raft between them works (a NAT in its namespace gives
#      them an address no member has; its link is cut once so that it
#      links again: the NAT takes new connections), with a
#      session on it that only pings: it closes its clients within 20 s
#      (it carries neither their writes nor their pings, and the leader
#      would expire their sessions while they are connected), refuses new
#      sessions, and the session moves and is alive past its timeout (its
#      ephemeral node there); its route back, it gives sessions again
#      within 10 s;
#   5. last, a follower removed by reconfig (kazoo as the super user,
#      reconfigEnabled=true), then cut off (2 s), with two sessions on it
#      (one that may move, one pinned to it): it says it was removed; it
#      acknowledges none of the pinned session's creates and gives no new
#      session, cut off or healed; the two left keep a leader and take
#      writes; the other session moves to them and writes; then the two
#      have every acknowledged write and the same tree, and none of the
#      creates sent to the removed one.
#   After each heal, within 10 s (20 election timeouts), the member is back:
#   the three at one zxid, the leader unchanged (pre-vote: the member does
#   not depose it), the member taking writes; then on all three every write
#   acknowledged anywhere, the same tree (every path, each top node's stat).
# All through, two workloads from the hub, checked once they stop: a
# register read and written by compare-and-set from three sessions (one
# starting on each member), its history linearizable; and `tumbler lock` in
# turn from three loops, one holder at a time and fencing tokens rising
# (history.py says how each is checked).
# A check that fails is counted as an anomaly and the run goes on where it
# can (a member back late is waited for, 60 s more); the test fails if any.
# Needs root (ip netns, veth, bridges), as CI runs it; without root or
# without network namespaces it fails, saying so.
#   partition.sh TUMBLERD ACKED_WRITER TUMBLER [ROUNDS]
# ROUNDS (default 1, as CI runs it; also from $ROUNDS) > 1 is the longer
# run: each further round cuts the leader and a random follower again, for
# 2-41 s each, then cuts random members 8 times for 0-5 s (shorter and
# longer than an election) under writers on all three, and checks the
# same once healed; the observer's cut and the removal (3., 4.)
# come after the last round.  LEADER_HOLD=S / FOLLOWER_HOLD=S fix the cut lengths;
# KEEP=1 keeps the logs and data of a failed run.
set -euo pipefail
tumblerd=$1 writer=$2 tumbler=$3 rounds=${4:-${ROUNDS:-1}}
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] ||
    fail "partition.sh needs root: it makes network namespaces, veth pairs and bridges (CI runs it as root)"
command -v ip >/dev/null || fail "partition.sh needs ip (iproute2) for its network namespaces"
command -v nft >/dev/null || fail "partition.sh needs nft (nftables) for its NAT"
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-partition.XXXXXX")
here=$(cd "$(dirname "$0")" && pwd)
source "$(dirname "$0")/lib.sh"

ns_prefix=tbpart ns_servers=10.200 ns_clients=10.201
# shellcheck source=netns.sh
source "$(dirname "$0")/netns.sh"
others() { echo 1 2 3 | tr ' ' '\n' | grep -vx "$1" | xargs; }

# The super user's digest (ZooKeeper's DigestAuthenticationProvider's),
# for the reconfig that removes a member.
super_digest=$(python3 -c 'import base64, hashlib
print("super:" + base64.b64encode(hashlib.sha1(b"super:secret").digest()).decode())')
{
    echo "tickTime=1000"
    echo "4lw.commands.whitelist=*"
    echo "reconfigEnabled=true"
    echo "DigestAuthenticationProvider.superDigest=$super_digest"
    for i in 1 2 3; do echo "server.$i=$(saddr "$i"):2888:3888;$(caddr "$i"):2181"; done
    echo "server.4=$(saddr 4):2888:3888:observer;$(caddr 4):2181"
} >"$dir/zoo.cfg"
for i in 1 2 3 4; do
    ip netns exec "$(nsn "$i")" "$tumblerd" "$dir/zoo.cfg" --serverId="$i" \
        --dataDir="$dir/d$i" 2>>"$dir/s$i.log" &
done

# czxid I PATH: the node's czxid on server I, in decimal; empty if none.
czxid() {
    local z
    z=$(hubx "$tumbler" -s "$(caddr "$1"):2181" stat "$2" 2>/dev/null | sed -n 's/^cZxid = //p')
    [ -z "$z" ] || echo $((z))
}
# check_all: on each member every acknowledged write, and none of the
# creates sent to a cut-off leader or a removed member; the same tree on
# all (every path, and each top node's stat; not /load, which the
# workloads keep changing and check on their own).  The members: $members.
members="1 2 3"
check_all() {
    local i n out u f=${members%% *}
    n=$(grep -c . "$dir/acked")
    u=$(grep -c . "$dir/unacked" || true)
    for i in $members; do
        out=$(hubx "$writer" verify "$(caddr "$i"):2181" <"$dir/acked") ||
            fail "server $i lost acknowledged writes: $(echo "$out" | head -20)"
        {
            echo "ls -R /"
            hubx "$tumbler" -s "$(caddr "$i"):2181" ls / | grep -v '^zookeeper$' |
                grep -vx load | sed 's|^|stat /|'
        } | hubx "$tumbler" -s "$(caddr "$i"):2181" >"$dir/tree$i" 2>&1 ||
            fail "cannot read server $i's tree: $(tail -3 "$dir/tree$i")"
        sed -i '\|^/load|d' "$dir/tree$i"
        [ "$u" = 0 ] || [ "$(present "$i" <"$dir/unacked")" = 0 ] ||
            anomaly "server $i has creates that only a cut-off leader was sent, never acknowledged: $(hubx "$writer" verify "$(caddr "$i"):2181" <"$dir/unacked" | grep -v '^missing' | head -5)"
    done
    for i in $members; do
        cmp -s "$dir/tree$f" "$dir/tree$i" ||
            fail "the trees of servers $f and $i differ: $(diff "$dir/tree$f" "$dir/tree$i" | head -5)"
    done
    out="  servers $members: $n acknowledged writes present, the same tree ($(grep -c . "$dir/tree$f") lines)"
    [ "$u" = 0 ] || out+=", none of the $u creates sent to a cut-off leader or a removed member"
    echo "$out"
}

closes() { grep -c 'client connection(s) closed, new ones refused' "$dir/s$1.log" || true; }
# serves_again I SINCE: within 10 s, server I gives a session again; said
# with the time since SINCE (now).
serves_again() {
    local t0 end status
    t0=$(now_ms)
    end=$((t0 + 10000))
    while :; do
        status=0
        hubx "$tumbler" -s "$(caddr "$1"):2181" --connect-timeout 1 ls / >/dev/null 2>&1 || status=$?
        [ "$status" != 0 ] || break
        [ "$(now_ms)" -lt "$end" ] || {
            anomaly "server $1 gave no session within 10 s of $2 (tumbler ls: status $status)"
            break
        }
        sleep 0.1
    done
    echo "  server $1 gives sessions again $(($(now_ms) - t0)) ms after $2"
}
# closed I BEFORE T0: within 20 s of T0 (ms), server I logs that it closed
# its clients (its BEFORE-th such line), and then refuses a new session.
closed() {
    local i=$1 before=$2 t0=$3 end=$(($3 + 20000)) status=0
    while [ "$(closes "$i")" -le "$before" ]; do
        [ "$(now_ms)" -lt "$end" ] || {
            anomaly "server $i, cut off, did not close its clients within 20 s"
            return 0
        }
        sleep 0.05
    done
    echo "  server $i closed its clients $(($(now_ms) - t0)) ms after the cut"
    hubx "$tumbler" -s "$(caddr "$i"):2181" --connect-timeout 1 ls / >/dev/null 2>&1 || status=$?
    [ "$status" = 69 ] || anomaly "server $i, cut off, gave a new session (tumbler ls: status $status)"
}
# rejoined R I L KIND: server I, just healed, is back within 10 s (20
# election timeouts): the three at one zxid, L still leading (pre-vote: I
# does not depose it); I takes writes again; then check_all.
rejoined() {
    local r=$1 i=$2 l=$3 kind=$4 t0 z t
    t0=$(now_ms)
    if ! z=$(converged 10000); then
        anomaly "server $i was not back within 10 s of the heal:"
        show 1 2 3
        z=$(converged 60000) || { show 1 2 3; fail "server $i was not back 70 s after the heal"; }
    fi
    t=$(settled "1 2 3")
    [ "$t" = "$l" ] || anomaly "healed, server $i deposed leader $l (server $t leads; pre-vote should prevent it)"
    echo "  server $i back (all three at zxid $z or past it) $(($(now_ms) - t0)) ms after the heal; server $t leads"
    write "$i" "/r$r-$kind-back" 100
    echo "  100 writes through server $i acknowledged"
    check_all
}

: >"$dir/acked"
: >"$dir/unacked"
l=$(settled "1 2 3")
echo "server $l leads"
write "1 2 3" /before 300

# ---- the workloads
loads=()
# locker I: `tumbler lock` in a loop, each hold (50 ms) said in $dir/holdsI.
locker() {
    while [ ! -e "$dir/load-stop" ]; do
        # shellcheck disable=SC2016 # expanded by the command's shell
        hubx "$tumbler" -s "$(hosts 1 2 3)" --session-timeout 10 lock -w 30 /load/lock -- sh -c '
            trap "echo end \$(date +%s%N) \$TUMBLER_LOCK_TOKEN $0; exit 1" TERM
            echo start "$(date +%s%N)" "$TUMBLER_LOCK_TOKEN" "$0"
            sleep 0.05
            echo end "$(date +%s%N)" "$TUMBLER_LOCK_TOKEN" "$0"' "l$1" \
            >>"$dir/holds$1" 2>>"$dir/holds$1.err" || sleep 0.1
    done
}
load_start() {
    local i
    write "1 2 3" /load 0
    for i in 1 2 3; do
        # shellcheck disable=SC2046 # the others, one word each
        hubx /usr/bin/python3 "$here/history.py" register "$(hosts "$i" $(others "$i"))" /load/reg \
            "c$i" "$dir/load-stop" >"$dir/reg$i" 2>"$dir/reg$i.err" &
        loads+=($!)
        locker "$i" &
        loads+=($!)
    done
}
load_stop() {
    local p
    touch "$dir/load-stop"
    for p in "${loads[@]}"; do
        [ "$(finish "$p" 40)" != killed ] ||
            anomaly "a workload client still ran 40 s after it was told to stop"
    done
    python3 "$here/history.py" check-register "$dir"/reg[123] | sed 's/^/  /'
    [ "${PIPESTATUS[0]}" = 0 ] || anomaly "the register's history is not linearizable"
    python3 "$here/history.py" check-holds "$dir"/holds[123] | sed 's/^/  /'
    [ "${PIPESTATUS[0]}" = 0 ] || anomaly "the lock was held by two at once, or a token went back"
}
load_start

# ---- the leader cut off
leader_cut() {
    local r=$1 hold=$2 l o nl t0 n k acked before wp
    l=$(settled "1 2 3")
    o=$(others "$l")
    echo "round $r: cutting off the leader, server $l, for ${hold} s"
    write "1 2 3" "/r$r-cut" 0 # the parent, before the cut
    # Two sessions on it: one that can move to the others, one that cannot.
    shell_open "cut$r" "$l"
    shell_open "pin$r" "$l" pinned
    # A writer on it, its creates in flight when the cut comes.
    : >"$dir/inflight$r"
    hubx "$writer" write "$(caddr "$l"):2181" "/r$r-inflight" 1000000 \
        >"$dir/inflight$r" 2>"$dir/inflight$r.err" &
    wp=$!
    for _ in $(seq 200); do [ "$(grep -c . "$dir/inflight$r")" -ge 200 ] && break; sleep 0.05; done
    before=$(closes "$l")
    cut_off "$l"
    t0=$(now_ms)
    shell "cut$r" "create /r$r-cut/m x"
    echo "/r$r-cut/m" >>"$dir/unacked"
    k=10
    for n in $(seq 0 $((k - 1))); do
        shell "pin$r" "create /r$r-cut/n-$n x"
        echo "/r$r-cut/n-$n" >>"$dir/unacked"
    done
    # The majority elects one of its own and takes writes.
    nl=$(settled "$o")
    echo "  server $nl leads the majority $(($(now_ms) - t0)) ms after the cut"
    write "$o" "/r$r-major" 300
    echo "  300 writes through servers $o acknowledged"
    # The cut-off leader lets its clients go; they move over.
    closed "$l" "$before" "$t0"
    # What the pinned session has left fails, or is stopped.
    shell_close "pin$r" 3
    [ "$(finish "$wp" 10)" != killed ] ||
        echo "  (the writer on server $l was still waiting 10 s after its clients were closed)"
    acked=$(grep -c . "$dir/inflight$r" || true)
    cat "$dir/inflight$r" >>"$dir/acked"
    ! moved "cut$r" "/r$r-cut/after" ||
        echo "  the session moved over and wrote $(($(now_ms) - t0)) ms after the cut"
    while [ $(($(now_ms) - t0)) -lt $((hold * 1000)) ]; do sleep 0.1; done
    ! grep -h "^Created /r$r-cut/[mn]" "$dir/cut$r.out" "$dir/pin$r.out" ||
        anomaly "server $l, cut off from the others, acknowledged the creates above"
    echo "  none of the $((k + 1)) creates sent to it after the cut acknowledged; $acked of the writer's in flight at the cut were, before it"
    # The moving session stays open: its create must not come back either.
    heal "$l"
    rejoined "$r" "$l" "$nl" leader
    shell_close "cut$r"
}

# ---- a follower cut off: 1/2
follower_cut() {
    local r=$1 hold=$2 l f o t0 before a z
    l=$(settled "1 2 3")
    f=$(others "$l" | tr ' ' '\n' | shuf -n1)
    o=$(others "$f")
    echo "round $r: cutting off a follower, server $f, for ${hold} s"
    write "1 2 3" "/r$r-fcut" 0
    shell_open "fcut$r" "$f"
    before=$(closes "$f")
    cut_off "$f"
    t0=$(now_ms)
    shell "fcut$r" "create /r$r-fcut/m x"
    write "$o" "/r$r-split" 300
    [ "$(mode "$l")" = leader ] || anomaly "server $l stopped leading when follower $f was cut off"
    echo "  server $l still leads; 300 writes through servers $o acknowledged"
    closed "$f" "$before" "$t0"
    ! moved "fcut$r" "/r$r-fcut/after" ||
        echo "  the session moved over and wrote $(($(now_ms) - t0)) ms after the cut"
    while [ $(($(now_ms) - t0)) -lt $((hold * 1000)) ]; do sleep 0.1; done
    ! grep "^Created /r$r-fcut/m" "$dir/fcut$r.out" ||
        anomaly "server $f, cut off from the others, acknowledged the create above"
    echo "  the create sent to it after the cut not acknowledged"
    write "$o" "/r$r-split2" 100
    heal "$f"
    t0=$(now_ms)
    rejoined "$r" "$f" "$l" follower
    # That create lost its connection: applied or not, either is allowed,
    # but not after the session's next write (ZooKeeper applies a session's
    # requests in order).  The session is still open; the create is looked
    # for until 10 s after the heal (a write forwarded into the cut link
    # may still arrive).
    until z=$(czxid "$l" "/r$r-fcut/m"); [ -n "$z" ] || [ $(($(now_ms) - t0)) -ge 10000 ]; do
        sleep 0.2
    done
    a=$(czxid "$l" "/r$r-fcut/after")
    shell_close "fcut$r"
    if [ -z "$z" ]; then
        echo "  the create sent to server $f while cut off was not applied"
    elif [ -n "$a" ] && [ "$z" -gt "$a" ]; then
        anomaly "/r$r-fcut/m, sent to server $f before the session's /r$r-fcut/after, was applied after it (czxid $(printf '0x%x' "$z") > $(printf '0x%x' "$a")), once server $f was back: a write forwarded into the cut link, applied on its arrival"
    else
        echo "  the create sent to server $f while cut off was applied, before the session's next write"
    fi
}

# ---- a follower whose links the leader refuses, raft between them working
refused_link() {
    local l f t0 before end status src
    l=$(settled "1 2 3")
    f=$(others "$l" | tr ' ' '\n' | shuf -n1)
    src=$(saddr $((f + 100)))
    echo "a follower, server $f, whose links leader $l refuses (from $src), raft between them working"
    shell_open refused "$f"
    shell refused "create -e /refused-eph x"
    end=$(($(now_ms) + 10000))
    until grep -qx "Created /refused-eph" "$dir/refused.out"; do
        [ "$(now_ms)" -lt "$end" ] || fail "no ephemeral through server $f: $(cat "$dir/refused.err")"
        sleep 0.05
    done
    before=$(closes "$f")
    # The follower's links leave from its own address (it binds it): a NAT
    # on their way rewrites it, and the leader's answers find $src.
    ip -n "$(nsn "$f")" addr add "$src/24" dev eth0
    ip netns exec "$(nsn "$f")" nft -f - <<EOF_NFT
table ip tbnat {
    chain post {
        type nat hook postrouting priority 100;
        ip daddr $(saddr "$l") tcp dport 3888 snat to $src
    }
}
EOF_NFT
    ip netns exec "$(nsn "$f")" ss -K dst "$(saddr "$l")" dport = :3888 >/dev/null
    t0=$(now_ms)
    closed "$f" "$before" "$t0"
    ! moved refused /refused-after ||
        echo "  the session moved over and wrote $(($(now_ms) - t0)) ms after the first refusal"
    # Past the session's timeout (10 s) from when the leader last heard of
    # it through server $f: alive, its ephemeral node there.
    while [ $(($(now_ms) - t0)) -lt 12000 ]; do sleep 0.1; done
    if [ -z "$(czxid "$l" /refused-eph)" ]; then
        anomaly "the session that was on server $f, whose links were refused, expired: its ephemeral node is gone"
    else
        echo "  the session alive $(($(now_ms) - t0)) ms after the first refusal, its ephemeral node there"
    fi
    shell_close refused
    ip netns exec "$(nsn "$f")" nft delete table ip tbnat
    ip netns exec "$(nsn "$f")" ss -K dst "$(saddr "$l")" dport = :3888 >/dev/null
    ip -n "$(nsn "$f")" addr del "$src/24" dev eth0
    serves_again "$f" "its NAT went"
}

# ---- the longer run: random members cut for random spells under writes
flaps() {
    local r=$1 i v d wl
    echo "round $r: random cuts under writers on all three"
    (
        k=0
        while [ ! -e "$dir/stop" ]; do
            hubx "$writer" write "$(hosts 1 2 3)" "/r$r-flap$k" 2000 >>"$dir/flap$r" 2>>"$dir/flap$r.err" || true
            echo "writer $k ended $(date -u +%T.%3N)" >>"$dir/flap$r.err"
            k=$((k + 1))
        done
    ) &
    wl=$!
    for i in $(seq 8); do
        v=$((RANDOM % 3 + 1))
        d=$(printf '0.%03d' $((RANDOM % 1000)))
        [ $((RANDOM % 3)) = 0 ] && d=$((RANDOM % 4 + 1)).$((RANDOM % 10))
        cut_off "$v"
        sleep "$d"
        heal "$v"
        sleep "$(printf '%d.%d' $((RANDOM % 2)) $((RANDOM % 10)))"
    done
    # The writer in flight ends by itself: its creates done, or stopped at
    # a failure.
    touch "$dir/stop"
    [ "$(finish "$wl" 40)" != killed ] ||
        anomaly "a writer through servers 1 2 3 still hangs 40 s after the last heal"
    rm -f "$dir/stop"
    cat "$dir/flap$r" >>"$dir/acked"
    echo "  $(grep -c . "$dir/flap$r" || true) writes acknowledged through the cuts, by $(grep -c '^writer' "$dir/flap$r.err") writers in turn"
    l=$(settled "1 2 3")
    z=$(converged 20000) || { show 1 2 3; fail "the servers did not reach one zxid within 20 s"; }
    echo "  server $l leads, all three at zxid $z or past it"
    check_all
}

# ---- the observer cut off from the voters
# observer_cut: server 4, an observer, cut off (2 s at least) with a
# session pinned to it: none of that session's creates acknowledged while
# cut, the session told, the observer closing its clients and refusing new
# sessions (closed); healed, it serves again (a session on it, and 100
# writes through it, within 10 s), catches up (the four at one zxid within
# 10 s) and has the voters' tree (check_all over the four).
observer_cut() {
    local t0 k n z before status end
    echo "cutting off the observer, server 4"
    write "1 2 3" /ob-cut 0
    [ "$(mode 4)" = observer ] || anomaly "server 4 is no observer: $(mode 4)"
    shell_open obpin 4 pinned
    before=$(closes 4)
    cut_off 4
    t0=$(now_ms)
    k=10
    for n in $(seq 0 $((k - 1))); do shell obpin "create /ob-cut/n-$n x"; done
    write "1 2 3" /ob-major 100
    echo "  100 writes through the voters acknowledged"
    # It hears no heartbeat: it knows no leader, closes its clients and
    # takes no new session, as a cut-off voter does (without this the
    # session's creates waited, unanswered, for as long as the cut).
    closed 4 "$before" "$t0"
    end=$((t0 + 20000))
    until grep -q '^tumbler: create /ob-cut/n-' "$dir/obpin.err"; do
        [ "$(now_ms)" -lt "$end" ] || {
            anomaly "the session pinned to server 4, cut off, was not told within 20 s that its creates failed"
            break
        }
        sleep 0.05
    done
    grep -q '^tumbler: create /ob-cut/n-' "$dir/obpin.err" &&
        echo "  the pinned session told: $(grep -m1 '^tumbler: create /ob-cut/n-' "$dir/obpin.err")"
    while [ $(($(now_ms) - t0)) -lt 2000 ]; do sleep 0.1; done
    ! grep -h "^Created /ob-cut/n" "$dir/obpin.out" ||
        anomaly "server 4, an observer cut off from the voters, acknowledged the creates above"
    echo "  none of the $k creates sent through it while cut acknowledged"
    # What it has left fails, or is stopped (a create it forwarded into
    # the cut link may still be applied once healed: on all, as any).
    shell_close obpin 1
    heal 4
    t0=$(now_ms)
    serves_again 4 "the heal"
    write 4 /ob-back 100
    echo "  100 writes through server 4 acknowledged"
    members="1 2 3 4"
    z=$(converged 10000) || {
        anomaly "server 4 had not caught up 10 s after the heal:"
        show 1 2 3 4
        z=$(converged 60000) || { show 1 2 3 4; fail "server 4 had not caught up 70 s after the heal"; }
    }
    echo "  server 4 caught up (the four at zxid $z or past it) $(($(now_ms) - t0)) ms after the heal"
    check_all
    members="1 2 3"
}

# ---- a member removed (reconfig -remove), then cut off
# reconfig_remove I HOSTS: kazoo, as the super user, through HOSTS, asks
# that member I leave; prints the new configuration.
reconfig_remove() {
    hubx timeout 60 /usr/bin/python3 - "$2" "$1" <<'EOF'
import sys
from kazoo.client import KazooClient
c = KazooClient(hosts=sys.argv[1], timeout=10)
c.start(timeout=20)
c.add_auth("digest", "super:secret")
data, stat = c.reconfig(joining=None, leaving=sys.argv[2], new_members=None)
print(data.decode())
c.stop()
EOF
}
# removed_cut: a follower removed by reconfig, then cut off, with two
# sessions on it (one that may move, one that may not): it acknowledges
# none of their writes, and gives no new session, cut off or healed; the two left keep a leader and take
# writes; the session that may move goes on there; then check_all on the
# two.
# new_session I PATH WHAT: a new session on server I alone, to create
# PATH, is refused (PATH then counted as never acknowledged).
new_session() {
    local status=0
    hubx "$tumbler" -s "$(caddr "$1"):2181" --connect-timeout 1 create "$2" x >/dev/null 2>&1 || status=$?
    echo "$2" >>"$dir/unacked"
    [ "$status" != 0 ] || anomaly "server $1, $3, gave a new session and created $2"
}
removed_cut() {
    local l f o t0 out n k z
    l=$(settled "1 2 3")
    f=$(others "$l" | tr ' ' '\n' | shuf -n1)
    o=$(others "$f")
    echo "removing follower $f (reconfig -remove $f), then cutting it off"
    write "1 2 3" /rm-cut 0
    shell_open rmmove "$f"
    shell_open rmpin "$f" pinned
    t0=$(now_ms)
    # shellcheck disable=SC2086 # the others, one word each
    out=$(reconfig_remove "$f" "$(hosts $o)" 2>&1) ||
        fail "reconfig -remove $f failed: $(echo "$out" | tail -3)"
    ! echo "$out" | grep -q "^server\.$f=" ||
        anomaly "server $f still in the configuration the reconfig answered: $out"
    echo "  the new configuration: $(echo "$out" | grep '^server\.' | cut -d= -f1 | xargs), $(echo "$out" | sed -n 's/^version=/version /p')"
    members=$o
    # It learns that it left (it has the outcome before it is removed).
    until grep -q "not a member of the ensemble any more" "$dir/s$f.log"; do
        [ $(($(now_ms) - t0)) -lt 20000 ] || {
            anomaly "server $f did not say within 20 s that it was removed"
            break
        }
        sleep 0.05
    done
    echo "  server $f says it was removed $(($(now_ms) - t0)) ms after the request"
    cut_off "$f"
    t0=$(now_ms)
    k=10
    for n in $(seq 0 $((k - 1))); do
        shell rmpin "create /rm-cut/n-$n x"
        echo "/rm-cut/n-$n" >>"$dir/unacked"
    done
    # The two left keep (or elect) a leader and take writes.
    l=$(settled "$o")
    write "$o" /rm-major 100
    echo "  server $l leads servers $o; 100 writes through them acknowledged"
    ! moved rmmove /rm-cut/after ||
        echo "  the session that was on it moved over and wrote"
    # A new session on it, to create: refused, cut off and once healed
    # (it is still no member).
    new_session "$f" /rm-cut/v1 "removed and cut off"
    while [ $(($(now_ms) - t0)) -lt 2000 ]; do sleep 0.1; done
    heal "$f"
    new_session "$f" /rm-cut/v2 "removed, once healed"
    shell_close rmpin 3
    ! grep -h "^Created /rm-cut/n" "$dir/rmpin.out" ||
        anomaly "server $f, removed and cut off, acknowledged the creates above"
    echo "  server $f acknowledged none of the $k creates sent to it after the cut, and gave no new session, cut off or healed"
    # shellcheck disable=SC2086
    z=$(converged 10000) || { show $o; anomaly "servers $o not at one zxid within 10 s"; }
    echo "  servers $o at zxid $z or past it"
    check_all
    shell_close rmmove
}

start_ms=$(now_ms)
leader_cut 1 "${LEADER_HOLD:-30}"
follower_cut 1 "${FOLLOWER_HOLD:-3}"
for r in $(seq 2 "$rounds"); do
    leader_cut "$r" "${LEADER_HOLD:-$((RANDOM % 40 + 2))}"
    follower_cut "$r" "${FOLLOWER_HOLD:-$((RANDOM % 40 + 2))}"
    flaps "$r"
done
observer_cut
refused_link
removed_cut
echo "workloads stopped"
load_stop
echo "$rounds round(s) in $(($(now_ms) - start_ms)) ms: $(grep -c . "$dir/acked") acknowledged writes checked on every server, $anomalies anomalies"
[ "$anomalies" = 0 ] || exit 1
echo "1 passed, 0 failed"
