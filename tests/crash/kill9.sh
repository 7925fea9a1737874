#!/usr/bin/env bash
# Acknowledged writes survive kill -9: rounds of pipelined creates against
# tumblerd, the server killed with SIGKILL at a random moment in each
# round, restarted on the same data directory, and every create the client
# saw acknowledged checked present.  Also checks that zxids keep rising
# across the restarts, and that SIGTERM under load stops cleanly.
#   kill9.sh TUMBLERD ACKED_WRITER [ROUNDS]
set -euo pipefail
tumblerd=("$1") writer=$2 rounds=${3:-3}
dir=$(mktemp -d /tmp/tumbler-kill9.XXXXXX)
source "$(dirname "$0")/lib.sh"
pid=""
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT

port=$(free_port)
# Snapshots every 5000 entries, so that some kills land during one.
start() { crash_start "$dir/data" --tickTime=1000 --snapCount=5000; }
zxid() { printf srvr | nc -q1 127.0.0.1 "$port" | sed -n 's/^Zxid: //p'; }

start
last=0
total=0
for round in $(seq "$rounds"); do
    "$writer" write "127.0.0.1:$port" "/crash$round" 200000 >"$dir/acked$round" 2>/dev/null &
    wpid=$!
    # Kill at a random moment once writes are being acknowledged.
    for _ in $(seq 100); do [ -s "$dir/acked$round" ] && break; sleep 0.05; done
    sleep "$((RANDOM % 2)).$((RANDOM % 10))"
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    wait "$wpid" || true
    acked=$(grep -c . "$dir/acked$round" || true)
    [ "$acked" -gt 0 ] || { echo "round $round: no write was acknowledged"; exit 1; }
    start
    "$writer" verify "127.0.0.1:$port" <"$dir/acked$round"
    z=$(( $(zxid) ))
    if [ "$z" -le "$last" ]; then echo "zxid went from $last to $z"; exit 1; fi
    last=$z
    total=$((total + acked))
    echo "round $round: $acked acknowledged creates before kill -9, all present; zxid 0x$(printf %x "$z")"
done
# A clean stop under the same load: SIGTERM exits 0 and loses nothing.
"$writer" write "127.0.0.1:$port" /term 200000 >"$dir/acked-term" 2>/dev/null &
wpid=$!
for _ in $(seq 100); do [ -s "$dir/acked-term" ] && break; sleep 0.05; done
sleep 0.5
kill -TERM "$pid"
status=0; wait "$pid" || status=$?; pid=""
wait "$wpid" || true
[ "$status" -eq 0 ] || { echo "tumblerd exited with $status on SIGTERM"; exit 1; }
grep -q "stopped" "$dir/server.log" || { echo "no clean stop in the log"; exit 1; }
start
"$writer" verify "127.0.0.1:$port" <"$dir/acked-term"
# The earlier rounds' writes are still there after the later restarts.
cat "$dir"/acked* | "$writer" verify "127.0.0.1:$port"
echo "$rounds rounds of kill -9 and one SIGTERM, $total acknowledged writes before kill -9, 0 lost"
