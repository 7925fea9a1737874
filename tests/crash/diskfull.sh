#!/usr/bin/env bash
# Disk full: tumblerd's data directory on a small filesystem this test
# mounts (a 128 MiB tmpfs, 40 MiB of it taken by a ballast file).  Pipelined
# creates of 64 KiB fill it until the server refuses writes with
# NotReadOnly (-119) at minFreeDiskBytes (40 MB); the server stays up,
# serves reads and still opens sessions (they may use the space down to the
# log's own floor, 24 MiB); once the
# ballast is removed, writes are accepted again; after kill -9 and a
# restart every acknowledged write is there.  Needs root (mount).
# Then an ensemble of three whose leader refuses writes (every member's
# minFreeDiskBytes above the free space): a write through a follower is
# refused with NotReadOnly as through the leader, not with its connection
# lost; sync and reads work on every member.  The leader at its first
# refusal hands leadership to another member, which refuses too and hands
# it on: each member at most once, and then it stays.  Last, an ensemble
# whose leader alone is short of space: it refuses the first write and
# hands leadership over, and the next writes, through it, are taken.
#   diskfull.sh TUMBLERD ACKED_WRITER TUMBLER
set -euo pipefail
tumblerd=("$1") writer=$2 tumbler=$3
dir=$(mktemp -d /tmp/tumbler-diskfull.XXXXXX)
source "$(dirname "$0")/lib.sh"
pid="" pids=("" "" "" "")
cleanup() {
    local rc=$?
    crash_kill "$pid" "${pids[@]:1}"
    umount "$dir/fs" 2>/dev/null || umount -l "$dir/fs" 2>/dev/null || true
    rm -rf "$dir" 2>/dev/null || true
    exit "$rc"
}
trap cleanup EXIT
mkdir -p "$dir/fs"
mount -t tmpfs -o size=128m tmpfs "$dir/fs"
dd if=/dev/zero of="$dir/fs/ballast" bs=1M count=40 status=none

port=$(free_port)
start() { crash_start "$dir/fs/data" --minFreeDiskBytes=40000000; }
start
export ACKED_WRITER_DATA=65536
"$writer" write "127.0.0.1:$port" /fill 100000 >"$dir/acked1" 2>"$dir/writer1.err"
acked=$(grep -c . "$dir/acked1" || true)
grep -q "stopped at the first error: -119" "$dir/writer1.err" ||
    { echo "writes were not refused with NotReadOnly:"; cat "$dir/writer1.err"; exit 1; }
[ "$acked" -gt 0 ] || { echo "nothing was written before the disk filled"; exit 1; }
kill -0 "$pid" || { echo "tumblerd died on a full disk"; cat "$dir/server.log"; exit 1; }
grep -q "refusing writes" "$dir/server.log" || { echo "no log line about the refusal"; exit 1; }
free_kb=$(df -k --output=avail "$dir/fs" | tail -1)
echo "refused after $acked acknowledged 64 KiB creates with ${free_kb} KiB still free"
# Reads still work while writes are refused.
head -100 "$dir/acked1" | "$writer" verify "127.0.0.1:$port" >/dev/null

rm "$dir/fs/ballast"
sleep 1
"$writer" write "127.0.0.1:$port" /after 100 >"$dir/acked2" 2>"$dir/writer2.err"
[ "$(grep -c . "$dir/acked2")" = 100 ] ||
    { echo "writes did not resume once space returned:"; cat "$dir/writer2.err"; exit 1; }
grep -q "accepting writes again" "$dir/server.log" || { echo "no log line about resuming"; exit 1; }

kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
start
cat "$dir/acked1" "$dir/acked2" | "$writer" verify "127.0.0.1:$port"
crash_kill "$pid"
pid=""

crash_ens_init
free=$(df -B1 --output=avail "$dir" | tail -1)
for i in 1 2 3; do member_start "$i" --minFreeDiskBytes=$((free * 2)); done
l=$(ens_leader)
for i in 1 2 3; do
    # A write that reaches a member while leadership is on its way to
    # another finds no leader: the client sees its connection lost (the
    # writer stops, saying nothing, or with -4), and tries again.
    for _ in 1 2 3 4 5; do
        "$writer" write "127.0.0.1:${cport[$i]}" /e$i 10 >"$dir/e$i.acked" 2>"$dir/e$i.err"
        [ ! -s "$dir/e$i.acked" ] || { echo "member $i acknowledged a write"; exit 1; }
        grep -q "stopped at the first error: -119" "$dir/e$i.err" && break
        sleep 0.5
    done
    grep -q "stopped at the first error: -119" "$dir/e$i.err" || {
        echo "a write through member $i ($([ "$i" = "$l" ] && echo leader || echo follower))" \
             "was not refused with NotReadOnly:"
        cat "$dir/e$i.err"
        exit 1
    }
    [ ! -s "$dir/e$i.acked" ] || { echo "member $i acknowledged a write"; exit 1; }
    "$tumbler" -s "127.0.0.1:${cport[$i]}" sync / ||
        { echo "sync through member $i failed"; exit 1; }
    "$tumbler" -s "127.0.0.1:${cport[$i]}" stat /zookeeper >/dev/null ||
        { echo "a read through member $i failed"; exit 1; }
done
grep -q "refusing writes" "$dir/s$l.log" || { echo "no log line about the refusal"; exit 1; }
for i in 1 2 3; do
    n=$(grep -c "handing leadership to another member" "$dir/s$i.log" || true)
    [ "$n" -le 1 ] || { echo "member $i handed leadership over $n times"; exit 1; }
done
echo "leadership handed round $(cat "$dir"/s[123].log | grep -c "handing leadership" || true) times"
crash_kill "${pids[@]:1}"
pids=("" "" "" "")

# The leader alone short of space.  Member 1 leads: the others wait longer
# before they stand for election.
rm -rf "$dir"/d[123] "$dir"/s[123].log
crash_ens_init
member_start 1 --minFreeDiskBytes=$((free * 2))
member_start 2 --electionTimeout=5000
member_start 3 --electionTimeout=5000
l=$(ens_leader)
[ "$l" = 1 ] || { echo "member $l leads, not member 1"; exit 1; }
"$writer" write "127.0.0.1:${cport[1]}" /refused 10 >"$dir/r.acked" 2>"$dir/r.err"
grep -q "stopped at the first error: -119" "$dir/r.err" ||
    { echo "the leader short of space did not refuse:"; cat "$dir/r.err"; exit 1; }
for _ in $(seq 50); do
    [ "$(ens_leader)" != 1 ] && break
    sleep 0.1
done
l=$(ens_leader)
[ "$l" != 1 ] || { echo "member 1 still leads"; cat "$dir/s1.log"; exit 1; }
grep -q "leadership handed to server $l" "$dir/s1.log" ||
    { echo "member 1 did not say it handed leadership to $l"; cat "$dir/s1.log"; exit 1; }
"$writer" write "127.0.0.1:${cport[1]}" /taken 100 >"$dir/t.acked" 2>"$dir/t.err"
[ "$(grep -c . "$dir/t.acked")" = 100 ] ||
    { echo "writes through member 1 were not taken after the hand-over:"; cat "$dir/t.err"; exit 1; }
all_have "$dir/t.acked"
echo "member 1, short of space, handed leadership to member $l; 100 writes through it taken"
echo "3 passed, 0 failed"
