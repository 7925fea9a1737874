#!/usr/bin/env bash
# One server per data directory: a second tumblerd on a data directory that
# a running one holds exits at once (status 1), naming the holder's pid,
# and leaves the first serving with every write it acknowledged; the lock
# dies with its process, so after a kill -9 the next start is not blocked.
#   datadir.sh TUMBLERD ACKED_WRITER
set -euo pipefail
tumblerd=("$1") writer=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-datadir.XXXXXX")
source "$(dirname "$0")/lib.sh"
pid="" second=""
cleanup() {
    local rc=$?
    crash_kill $pid $second
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT

port=$(free_port)
crash_start "$dir/data"
first=$pid
"$writer" write "127.0.0.1:$port" /first 20 >"$dir/acked" 2>"$dir/writer.err"
[ "$(grep -c . "$dir/acked")" = 20 ] || { echo "the first writes failed"; cat "$dir/writer.err"; exit 1; }

# The second one, on another port, must not serve: it ends by itself.
port2=$(free_port)
status=0
timeout -s KILL 20 "${tumblerd[@]}" --clientPort="$port2" --dataDir="$dir/data" \
    2>"$dir/second.log" || status=$?
[ "$status" = 1 ] || { echo "the second server ended with $status, not 1:"; cat "$dir/second.log"; exit 1; }
grep -q "data directory $dir/data is in use by another server (pid $first " "$dir/second.log" ||
    { echo "the second server did not name the holder (pid $first):"; cat "$dir/second.log"; exit 1; }
grep ERROR "$dir/second.log"

# The first still serves, with everything it acknowledged.
"$writer" verify "127.0.0.1:$port" <"$dir/acked"
"$writer" write "127.0.0.1:$port" /more 5 >>"$dir/acked" 2>"$dir/writer.err"

# A lock left by a killed server does not block the next one.
crash_kill "$pid"
pid=""
crash_start "$dir/data"
"$writer" verify "127.0.0.1:$port" <"$dir/acked"
echo "1 passed, 0 failed"
