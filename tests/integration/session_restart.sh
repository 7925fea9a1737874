#!/usr/bin/env bash
# Sessions survive a restart of tumblerd, also after kill -9, with a fresh
# timeout: a session opened before the crash is resumed afterwards with its
# id and password and still owns its ephemeral node; a session nobody
# resumes expires after its timeout counted from the restart, and its
# ephemeral node goes with it.  A server that was stopped (SIGSTOP) counts
# the time it did not run against no session.  Uses the raw client
# (session_tool).
#
# The server ticks every 250 ms (tickTime 500), so the timeouts here are of
# a second or two and the script waits as long; when exactly a session
# expires, and by how much a stall moves its deadline, is tests/unit/
# test_expiry.c's and test_session.c's, on virtual time.
#   session_restart.sh SESSION_TOOL     (TUMBLERD names the server binary)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
tool=$1
it_init
dir=$(it_tmpdir srv)
port=$(free_port)
hp=127.0.0.1:$port

fail() { echo "FAIL: $*"; tail -n 20 "$dir/server.log"; exit 1; }

tick=--tickTime=500
start_tumblerd "$dir" "$port" "$tick"
pid=$SERVER_PID
wait_serving "$port" 30 "$pid" || fail "tumblerd did not start"

read -r sid1 pw1 z1 < <("$tool" open "$hp" /kept 10000) || fail "open 1"
read -r sid2 pw2 z2 < <("$tool" open "$hp" /abandoned 2000) || fail "open 2"
[ -n "$sid1" ] && [ -n "$sid2" ] || fail "no session ids"

kill -9 "$pid"; wait "$pid" 2>/dev/null
start_tumblerd "$dir" "$port" "$tick"
pid=$SERVER_PID
wait_serving "$port" 30 "$pid" || fail "tumblerd did not restart"

# Resumed within the (fresh) timeout: same session, ephemeral still there.
"$tool" resume "$hp" "$sid1" "$pw1" "$z1" /kept || fail "session 1 not resumed after kill -9"
"$tool" exists "$hp" /abandoned || fail "session 2's node vanished before its timeout"
# Session 2 is never resumed: it expires 2 s (+ a tick) after the restart.
for _ in $(seq 150); do
    "$tool" exists "$hp" /abandoned || break
    sleep 0.1
done
"$tool" exists "$hp" /abandoned && fail "session 2's ephemeral outlived its timeout"
"$tool" resume "$hp" "$sid2" "$pw2" "$z2" /abandoned
[ $? = 3 ] || fail "an expired session was resumed"
# A wrong password is refused.
"$tool" resume "$hp" "$sid1" "00000000000000000000000000000000" "$z1" /kept
[ $? = 3 ] || fail "a wrong password was accepted"
# A session of 2 s outlives 3 s of the server stopped: timers run before the
# loop reads what came meanwhile, so without the stall moving the deadlines
# the first tick would expire it.
read -r sid3 pw3 z3 < <("$tool" open "$hp" /paused 2000) || fail "open 3"
kill -STOP "$pid"
sleep 3
kill -CONT "$pid"
"$tool" resume "$hp" "$sid3" "$pw3" "$z3" /paused ||
    fail "a session expired while the server was stopped"
grep -q "stalled [0-9]* ms" "$dir/server.log" || fail "the stall was not logged"
echo "1 passed, 0 failed"
