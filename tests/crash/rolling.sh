#!/usr/bin/env bash
# A rolling restart of a 3-server ensemble under lock load, as an operator
# upgrades one: each member in turn, the leader among them (it hands over
# on SIGTERM), stopped with SIGTERM, started again on the same data and
# waited for until it serves at the leader's zxid, while three loops take
# one lock with `tumbler lock` (sessions that may move to any member, each
# hold 50 ms) and writers write through all three:
#   - no two processes hold the lock at once, and each holder's fencing
#     token is above the one before;
#   - every member stopped exits 0 (a clean stop);
#   - the lock is taken again after each restart (the lockers go on);
#   - every write acknowledged is on every member at the end.
# Prints what it checked; ROUNDS=N restarts the three N times (default 1).
# Given NEW_TUMBLERD, the members start on TUMBLERD and each comes back on
# NEW_TUMBLERD: a rolling upgrade, the two releases serving side by side
# until the last member is restarted.
#   rolling.sh TUMBLERD ACKED_WRITER TUMBLER [NEW_TUMBLERD]
set -euo pipefail
tumblerd=("$1") writer=$2 tumbler=$3 upgrade=${4:-}
rounds=${ROUNDS:-1}
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-rolling.XXXXXX")
source "$(dirname "$0")/lib.sh"
pids=("" "" "" "") lockers=() writing=""
cleanup() {
    local rc=$?
    touch "$dir/stop"
    crash_kill "${pids[@]:1}" "${lockers[@]}" $writing
    [ "$rc" = 0 ] || for i in 1 2 3; do echo "---- server $i"; tail -20 "$dir/s$i.log"; done
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT

crash_ens_init
# Snapshots every 1,000 txns, so a member comes back on a snapshot and the
# log after it, as in production (the writers make several a minute).
echo "snapCount=1000" >>"$dir/zoo.cfg"
# holds: how many holds the lockers have recorded whole.
holds() { cat "$dir"/holds* 2>/dev/null | awk 'NF == 4' | grep -c . || true; }

for i in 1 2 3; do member_start "$i"; done
ens_leader >/dev/null

# Lockers: each hold writes its token, its start and end (ns) and who held
# it; a hold cut short (the lock lost) writes its end from the trap.
for i in 1 2 3; do
    (
        while [ ! -f "$dir/stop" ]; do
            "$tumbler" -s "$hosts" --session-timeout 10 lock -w 30 /lk -- sh -c '
                trap "echo \$TUMBLER_LOCK_TOKEN \$s \$(date +%s%N) $0; exit 1" TERM
                s=$(date +%s%N); sleep 0.05
                echo "$TUMBLER_LOCK_TOKEN" "$s" "$(date +%s%N)" "$0"' "l$i" \
                >>"$dir/holds$i" 2>>"$dir/lockers.err" || true
        done
    ) &
    lockers+=($!)
done
# Writers, one after the other, each 200 creates to its own prefix: a
# writer stops at its first failure (its server stopped), and the next
# takes over.
(
    k=0
    while [ ! -f "$dir/stop" ]; do
        k=$((k + 1))
        "$writer" write "$hosts" "/w$k" 200 >>"$dir/acked" 2>/dev/null || true
        sleep 0.1
    done
) &
writing=$!

until [ "$(holds)" -ge 10 ]; do sleep 0.1; done
restarts=0
for r in $(seq "$rounds"); do
    for i in 1 2 3; do
        was=$(ens_leader)
        before=$(holds)
        kill -TERM "${pids[$i]}"
        status=0
        wait "${pids[$i]}" || status=$?
        pids[$i]=""
        [ "$status" = 0 ] || { echo "server $i exited $status on SIGTERM"; exit 1; }
        [ "$i" != "$was" ] || grep -q "leadership handed to server" "$dir/s$i.log" ||
            { echo "leader $i stopped without handing over"; exit 1; }
        [ -z "$upgrade" ] || tumblerd=("$upgrade")
        member_start "$i"
        # Serving, and caught up to the leader's zxid when it came back (the
        # writers go on, so the two are seldom equal at one instant).
        l=$(ens_leader)
        target=$(member_zxid "$l")
        for _ in $(seq 200); do
            z=$(member_zxid "$i")
            [ -n "$z" ] && [ $((z)) -ge $((target)) ] && break
            sleep 0.1
        done
        [ -n "$z" ] && [ $((z)) -ge $((target)) ] ||
            { echo "server $i does not serve at zxid $target after its restart"; exit 1; }
        for _ in $(seq 300); do [ "$(holds)" -gt "$before" ] && break; sleep 0.1; done
        [ "$(holds)" -gt "$before" ] || { echo "no hold after server $i restarted"; exit 1; }
        restarts=$((restarts + 1))
        echo "round $r: server $i ${upgrade:+upgraded and }restarted ($([ "$i" = "$was" ] && echo leader, handed over || echo follower)), $(holds) holds so far"
    done
done
touch "$dir/stop"
for p in "${lockers[@]}"; do wait "$p" || true; done
lockers=()
wait "$writing" || true
writing=""

# One holder at a time, tokens rising in the order of the holds.
cat "$dir"/holds* | awk 'NF == 4' | sort -k2,2n >"$dir/holds"
holds=$(grep -c . "$dir/holds")
anomalies=$(awk '{ if (NR > 1 && $2 < end) { print "overlap: " prev " and " $0 > "/dev/stderr"; n++ }
       if (NR > 1 && $1 <= tok) { print "token not rising: " prev " then " $0 > "/dev/stderr"; n++ }
       tok = $1; end = $3; prev = $0 }
     END { print n + 0 }' "$dir/holds")
l=$(ens_leader)
for i in 1 2 3; do
    for _ in $(seq 100); do [ "$(member_zxid "$i")" = "$(member_zxid "$l")" ] && break; sleep 0.1; done
    "$writer" verify "127.0.0.1:${cport[$i]}" <"$dir/acked" || anomalies=$((anomalies + 1))
done
echo "$restarts restarts (SIGTERM, start, serving), $holds holds, $(grep -c . "$dir/acked") acknowledged writes on every member; anomalies: $anomalies"
[ "$anomalies" = 0 ]
