#!/usr/bin/env bash
# A 3-server ensemble on loopback, its leader killed (SIGKILL) while
# clients of every server write and take a lock:
#   - writes go through any server (a follower forwards them), and every
#     write acknowledged before, during and after the kill is on every
#     server once the killed one is back and caught up;
#   - a new leader takes over, its election started at once by the member
#     after the dead one (its port refused), and zxids keep rising; so too
#     after a member has restarted, the election winning in its term;
#   - no two processes hold the lock at once, and each holder's fencing
#     token is above the one before;
#   - SIGTERM on the leader hands leadership over before it stops;
#   - a standalone server given the ensemble's data directory, and a
#     member given another's, are refused.
#   ensemble.sh TUMBLERD ACKED_WRITER TUMBLER
set -euo pipefail
tumblerd=("$1") writer=$2 tumbler=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-ensemble.XXXXXX")
source "$(dirname "$0")/lib.sh"
pids=("" "" "" "") lockers=()
cleanup() {
    local rc=$?
    crash_kill "${pids[@]:1}" "${lockers[@]}"
    [ "$rc" = 0 ] || for i in 1 2 3; do echo "---- server $i"; tail -20 "$dir/s$i.log"; done
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT

crash_ens_init

for i in 1 2 3; do member_start "$i"; done
l=$(ens_leader)
echo "server $l leads"

# Writes through every server, then the leader killed under more.
"$writer" write "$hosts" /before 300 >"$dir/acked1" 2>/dev/null
[ "$(grep -c . "$dir/acked1")" = 300 ] || { echo "writes failed before the kill"; exit 1; }
before=$(member_zxid "$l")

# Lockers on every server: each holding writes its token and the time it
# began and ended (ns) to its own file.
for i in 1 2 3; do
    (
        for _ in $(seq 40); do
            "$tumbler" -s "127.0.0.1:${cport[$i]}" lock -w 20 /lk -- \
                sh -c 'printf "%s %s " "$TUMBLER_LOCK_TOKEN" "$(date +%s%N)"; sleep 0.02; date +%s%N' \
                >>"$dir/holds$i" 2>>"$dir/lockers.err" || true
        done
    ) &
    lockers+=($!)
done
"$writer" write "$hosts" /during 100000 >"$dir/acked2" 2>/dev/null &
w=$!
for _ in $(seq 100); do [ -s "$dir/acked2" ] && break; sleep 0.05; done
sleep 0.3
crash_kill "${pids[$l]}"
pids[$l]=""
killed=$l
wait "$w" || true
echo "killed server $killed with $(grep -c . "$dir/acked2") of the writes acknowledged"
l=$(ens_leader)
echo "server $l leads now"
# The leader's process gone, its successor did not wait for timeouts.
grep -h "leader $killed is gone: server [0-9]* starts an election now" "$dir"/s*.log ||
    { echo "no election started at once after the leader was killed"; exit 1; }
"$writer" write "$hosts" /after 300 >"$dir/acked3" 2>/dev/null
[ "$(grep -c . "$dir/acked3")" = 300 ] || { echo "writes failed after the change"; exit 1; }
after=$(member_zxid "$l")
[ $(( after )) -gt $(( before )) ] || { echo "zxid $after after the change, $before before"; exit 1; }

# The killed server back: it catches up and serves everything.
member_start "$killed"
cat "$dir/acked1" "$dir/acked2" "$dir/acked3" >"$dir/acked"
for _ in $(seq 100); do
    [ "$(member_zxid "$killed")" = "$(member_zxid "$l")" ] && break
    sleep 0.1
done
for i in 1 2 3; do
    "$writer" verify "127.0.0.1:${cport[$i]}" <"$dir/acked"
done
for p in "${lockers[@]}"; do wait "$p" || true; done
lockers=()

# The leader killed again, now that a member has restarted: the election
# started at once wins in its term.  (A vote or its grant sent on a
# connection to the restarted member's old process would be lost, and the
# election left to the timeouts, in a later term.)
l=$(ens_leader)
crash_kill "${pids[$l]}"
pids[$l]=""
l2=$(ens_leader)
term=$(sed -n "s/.*leader $l is gone: server [0-9]* starts an election now (term \([0-9]*\)).*/\1/p" \
    "$dir"/s*.log | tail -1)
won=$(sed -n 's/.*server [0-9]* took leadership (term \([0-9]*\)).*/\1/p' "$dir/s$l2.log" | tail -1)
[ -n "$term" ] && [ "$won" = "$term" ] ||
    { echo "server $l killed: election started in term '$term', server $l2 leads from term $won"; exit 1; }
echo "server $l killed: server $l2 leads from term $won, the election started at once"
member_start "$l"
for _ in $(seq 100); do
    [ "$(member_zxid "$l")" = "$(member_zxid "$l2")" ] && break
    sleep 0.1
done

# One holder at a time, tokens rising in the order of the holds.
cat "$dir"/holds* | sort -k2,2n >"$dir/holds"
holds=$(grep -c . "$dir/holds")
[ "$holds" -ge 30 ] || { echo "only $holds holds"; cat "$dir/lockers.err"; exit 1; }
awk '{ if (NR > 1 && $2 < end) { print "overlap: " prev " and " $0; bad = 1 }
       if (NR > 1 && $1 <= tok) { print "token not rising: " prev " then " $0; bad = 1 }
       tok = $1; end = $3; prev = $0 }
     END { exit bad }' "$dir/holds"
echo "$holds holds, one at a time, tokens rising"

# SIGTERM on the leader hands leadership over before it stops: another
# leads at once, not after an election timeout.
l=$(ens_leader)
kill -TERM "${pids[$l]}"
wait "${pids[$l]}" || true
pids[$l]=""
grep -q "leadership handed to server" "$dir/s$l.log" ||
    { echo "server $l stopped without handing over:"; tail -5 "$dir/s$l.log"; exit 1; }
echo "server $l handed over: $(grep -o 'handed to server [0-9]*' "$dir/s$l.log")"
member_start "$l"

# Misconfiguration: a standalone server on a member's data directory, and
# a member on another's.
crash_kill "${pids[$killed]}"
pids[$killed]=""
status=0
timeout 20 "${tumblerd[@]}" --clientPort="$(free_port)" --serverId="$killed" \
    --dataDir="$dir/d$killed" 2>"$dir/refused.log" || status=$?
[ "$status" = 1 ] && grep -q "the log belongs to an ensemble" "$dir/refused.log" ||
    { echo "a standalone start on a member's log:"; cat "$dir/refused.log"; exit 1; }
other=$(( killed % 3 + 1 ))
crash_kill "${pids[$other]}"
pids[$other]=""
status=0
timeout 20 "${tumblerd[@]}" "$dir/zoo.cfg" --serverId="$other" --dataDir="$dir/d$killed" \
    2>"$dir/refused.log" || status=$?
[ "$status" = 1 ] && grep -q "is server $killed's, not server $other's" "$dir/refused.log" ||
    { echo "a member on another's log:"; cat "$dir/refused.log"; exit 1; }
echo "1 passed, 0 failed"
