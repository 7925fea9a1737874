#!/usr/bin/env bash
# What a process that is no member sends to a member's quorum port without
# sslQuorum (raft_uv's, which trusts the lengths it reads): a handshake
# naming an address of 2^62 bytes, and a message whose header says it is
# 2^62 bytes, each sent to every member.  No machine has that memory: each
# member drops the connection and goes on, and the ensemble takes writes
# through every member.  (Taken for a shortage of memory, either one
# stopped the member, exit 74, and three such connections the ensemble.)
#   quorum_input.sh TUMBLERD ACKED_WRITER
set -euo pipefail
tumblerd=("$1") writer=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-quorum-input.XXXXXX")
source "$(dirname "$0")/lib.sh"
cleanup() {
    local rc=$?
    crash_kill "${pids[@]:1}"
    [ "$rc" = 0 ] || for i in 1 2 3; do echo "---- server $i"; tail -5 "$dir/s$i.log"; done
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT

crash_ens_init
for i in 1 2 3; do member_start "$i"; done
ens_leader >/dev/null
# send PORT KIND: KIND "address" or "header", on a connection of its own,
# which stays open a second for the member to read it all.
send() {
    python3 - "$@" <<'PY'
import socket, struct, sys, time
port, kind = int(sys.argv[1]), sys.argv[2]
huge = 1 << 62
s = socket.create_connection(("127.0.0.1", port))
if kind == "address":
    s.sendall(struct.pack("<QQQ", 1, 9, huge))
else:
    addr = b"127.0.0.1:9".ljust(16, b"\0")
    s.sendall(struct.pack("<QQQ", 1, 9, len(addr)) + addr + struct.pack("<QQ", 1, huge))
time.sleep(1)
PY
}
# (A refused connection means its member has stopped: said below.)
for i in 1 2 3; do
    send "${qport[$i]}" address 2>/dev/null || true
    send "${qport[$i]}" header 2>/dev/null || true
done
for i in 1 2 3; do
    kill -0 "${pids[$i]}" 2>/dev/null || { echo "member $i stopped:"; tail -3 "$dir/s$i.log"; exit 1; }
done
echo "every member runs after a handshake and a message of 2^62 bytes"
for i in 1 2 3; do
    "$writer" write "127.0.0.1:${cport[$i]}" "/w$i" 20 >>"$dir/acked" 2>"$dir/writer.err" || true
done
[ "$(grep -c . "$dir/acked")" = 60 ] || { echo "writes failed:"; cat "$dir/writer.err"; exit 1; }
all_have "$dir/acked"
echo "60 writes through the three members, on each"
echo "1 passed, 0 failed"
