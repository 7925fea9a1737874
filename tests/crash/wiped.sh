#!/usr/bin/env bash
# A member whose data directory was lost, started again as it was (no
# joinEnsemble), must not help elect a leader that lacks writes it had
# acknowledged (replog/fresh.c):
#   1. three members; C, a follower, is stopped once it holds the leader's
#      first entry (its barrier: nothing since the first start but that),
#      and writes are acknowledged by the other two, A (the leader) and B;
#   2. B stopped and its data directory emptied; A killed (-9);
#   3. B started, stopped and started again (still the bootstrap entry
#      alone), and C started: for 10 s neither leads (raft alone would
#      have B vote for C, whose log lacks the writes), and B says why;
#   4. A started again: a leader, B's new log caught up, and every
#      acknowledged write on all three.
#   wiped.sh TUMBLERD ACKED_WRITER
set -euo pipefail
tumblerd=("$1") writer=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-wiped.XXXXXX")
source "$(dirname "$0")/lib.sh"
cleanup() {
    local rc=$?
    crash_kill "${pids[@]:1}"
    [ "$rc" = 0 ] || for i in 1 2 3; do echo "---- server $i"; tail -15 "$dir/s$i.log"; done
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT
# stop I: SIGTERM, and member I exits 0.
stop() {
    kill -TERM "${pids[$1]}"
    wait "${pids[$1]}" || { echo "server $1 exited $? on SIGTERM"; exit 1; }
    pids[$1]=""
}

crash_ens_init
for i in 1 2 3; do member_start "$i"; done
a=$(ens_leader)
b=$((a % 3 + 1)) c=$(((a + 1) % 3 + 1))
echo "A: server $a (leader), B: server $b, C: server $c"

# 1. C has the leader's first entry, and misses every write.
entries() {
    printf mntr | timeout 3 nc -q1 127.0.0.1 "${cport[$1]}" 2>/dev/null |
        sed -n 's/^zk_tumbler_log_entries\t//p'
}
for _ in $(seq 100); do [ "$(entries "$c")" = 1 ] && break; sleep 0.1; done
[ "$(entries "$c")" = 1 ] || { echo "C does not hold the leader's first entry alone: $(entries "$c")"; exit 1; }
stop "$c"
"$writer" write "127.0.0.1:${cport[$a]},127.0.0.1:${cport[$b]}" /w 200 >"$dir/acked"
[ "$(grep -c . "$dir/acked")" = 200 ] || { echo "the writes were not all acknowledged"; exit 1; }
echo "C stopped with the leader's first entry alone; 200 writes acknowledged by A and B"

# 2. B's data lost, A gone.
stop "$b"
rm -rf "$dir/d$b"
crash_kill "${pids[$a]}"
pids[$a]=""

# 3. B (empty) and C (without the writes): no leader.  B is started twice: a restart before a
# leader caught it up keeps its new log's rule.
new_logs() { grep -c "server $b's log is new" "$dir/s$b.log" || true; }
before=$(new_logs)
member_start "$b"
for _ in $(seq 100); do [ "$(new_logs)" -gt "$before" ] && break; sleep 0.1; done
[ "$(new_logs)" -gt "$before" ] || { echo "B's new log did not say so"; exit 1; }
for _ in $(seq 100); do [ -n "$(member_mode "$b")" ] && break; sleep 0.1; done
stop "$b"
before=$(new_logs)
member_start "$b"
member_start "$c"
end=$(($(date +%s) + 10))
while [ "$(date +%s)" -lt "$end" ]; do
    for i in "$b" "$c"; do
        [ "$(member_mode "$i")" != leader ] ||
            { echo "server $i leads without the writes B had acknowledged"; exit 1; }
    done
    sleep 0.2
done
grep -q "started with an empty data directory, and server $c asks for its vote" "$dir/s$b.log" ||
    { echo "B did not say why it gives C no vote"; exit 1; }
[ "$(new_logs)" -gt "$before" ] || { echo "B, started again, did not keep its new log's rule"; exit 1; }
echo "B (empty) and C (without the writes): no leader for 10 s; B: $(grep -o 'it votes for no one[^,]*' "$dir/s$b.log" | head -1)"

# 4. A back: the writes are everywhere.
member_start "$a"
l=$(ens_leader)
for _ in $(seq 200); do
    z=$(member_zxid "$l")
    [ "$(member_zxid "$b")" = "$z" ] && [ "$(member_zxid "$c")" = "$z" ] && break
    sleep 0.1
done
for i in 1 2 3; do "$writer" verify "127.0.0.1:${cport[$i]}" <"$dir/acked"; done
grep -q "new log caught up with the leader" "$dir/s$b.log" || { echo "B did not say it caught up"; exit 1; }
echo "A back: server $l leads, B caught up, the 200 acknowledged writes on all three"
