#!/usr/bin/env bash
# Disk full: tumblerd's data directory on a small filesystem this test
# mounts (a 128 MiB tmpfs, 40 MiB of it taken by a ballast file).  Pipelined
# creates of 64 KiB fill it until the server refuses writes with
# NotReadOnly (-119) at minFreeDiskBytes (40 MB); the server stays up,
# serves reads and still opens sessions (they may use the space down to the
# log's own floor, 24 MiB); once the
# ballast is removed, writes are accepted again; after kill -9 and a
# restart every acknowledged write is there.  Needs root (mount).
#   diskfull.sh TUMBLERD ACKED_WRITER
set -euo pipefail
tumblerd=("$1") writer=$2
dir=$(mktemp -d /tmp/tumbler-diskfull.XXXXXX)
source "$(dirname "$0")/lib.sh"
pid=""
cleanup() {
    local rc=$?
    if [ -n "$pid" ]; then
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
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
echo "1 passed, 0 failed"
