#!/usr/bin/env bash
# An upgrade from an earlier release, REV, whose tumblerd is built from this
# repository's history:
#   1. one server: REV's writes and snapshots, then this tree's TUMBLERD on
#      the same data directory, twice: every acknowledged write is there,
#      and the lock's fencing token goes on rising across the upgrade;
#   2. an ensemble: REV's tumblerd runs it first; rolling.sh then restarts
#      each member on TUMBLERD under lock load and writes, so the two
#      releases replicate, vote and forward writes to each other, and the
#      new one reads the old one's data (its log, snapshots, term and vote).
#   upgrade.sh REV TUMBLERD ACKED_WRITER TUMBLER
# Exits 77 (skipped) where the history holds no REV (a shallow clone).
set -euo pipefail
rev=$1 new=$2 writer=$3 tumbler=$4
src=$(cd "$(dirname "$0")/../.." && pwd)
if ! git -C "$src" cat-file -e "$rev^{commit}" 2>/dev/null; then
    echo "upgrade: $src has no commit $rev in its history (a shallow clone?); skipped"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-upgrade.XXXXXX")
old=$dir/old
mkdir "$old"
pid=""
cleanup() {
    local rc=$?
    crash_kill $pid
    [ "$rc" = 0 ] || cat "$dir/server.log" 2>/dev/null || true
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT
source "$src/tests/crash/lib.sh"
git -C "$src" archive "$rev" | tar -x -C "$old"
cmake -S "$old" -B "$old/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$old/build.log" 2>&1 &&
    ninja -C "$old/build" tumblerd >>"$old/build.log" 2>&1 ||
    { tail -30 "$old/build.log"; echo "upgrade: $rev's tumblerd does not build"; exit 1; }
echo "upgrade: from $rev ($(git -C "$src" log -1 --format=%cs "$rev")) to this tree"
# token: the fencing token of one hold of /lk.
token() { "$tumbler" -s "127.0.0.1:$port" lock -w 10 /lk -- sh -c 'echo "$TUMBLER_LOCK_TOKEN"'; }
# stop: SIGTERM, and the server exits 0.
stop() { kill -TERM "$pid"; wait "$pid" || { echo "tumblerd exited $? on SIGTERM"; exit 1; }; pid=""; }

# 1. One server.
port=$(free_port)
tumblerd=("$old/build/src/server/tumblerd")
crash_start "$dir/data" --snapCount=1000
"$writer" write "127.0.0.1:$port" /old 2500 >"$dir/acked"
before=$(token)
stop
ls "$dir/data" | grep -q '^snapshot-' || { echo "$rev left no snapshot of raft_uv's:"; ls -l "$dir/data"; exit 1; }
tumblerd=("$new")
for k in 1 2; do
    crash_start "$dir/data" --snapCount=1000
    "$writer" verify "127.0.0.1:$port" <"$dir/acked"
    # The snapshot moved into this tree's own state file.
    ! ls "$dir/data" | grep -q '^snapshot-' || { echo "raft_uv's snapshot files stayed:"; ls -l "$dir/data"; exit 1; }
    after=$(token)
    [ "$after" -gt "$before" ] || { echo "the fencing token went from $before to $after"; exit 1; }
    before=$after
    "$writer" write "127.0.0.1:$port" "/new$k" 500 >>"$dir/acked"
    stop
done
echo "one server: $(grep -c . "$dir/acked") acknowledged writes kept, fencing tokens rising, over the upgrade and a restart"

# 2. The ensemble.
bash "$src/tests/crash/rolling.sh" "$old/build/src/server/tumblerd" "$writer" "$tumbler" "$new"
