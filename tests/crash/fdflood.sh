#!/usr/bin/env bash
# A flood of connections under a low open-file limit (200): tumblerd keeps
# 64 descriptors from its connections, so 136 are held and the rest closed,
# and the log can still open its next segments: 64 KiB creates worth two
# segments are all acknowledged, and the server stays up.  mntr counts the
# connections refused; the log says so a line a second at most.  Without the
# reserve the flood takes every descriptor and the log's next segment
# cannot be opened (the server stops, logfail.sh).  With both HTTP ports
# on, their descriptors are kept too.
#   fdflood.sh TUMBLERD ACKED_WRITER
set -euo pipefail
tumblerd=(prlimit --nofile=200:200 "$1") writer=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-fdflood.XXXXXX")
source "$(dirname "$0")/lib.sh"
pid="" holder=""
cleanup() {
    local rc=$?
    crash_kill $pid $holder
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT

port=$(free_port)
crash_start "$dir/data" --maxClientCnxns=0

# 250 connections; after a second, those the server closed are counted, and
# two of the held ones are let go to make room for the writer.
mkfifo "$dir/holder.out"
python3 - "$port" >"$dir/holder.out" <<'EOF' &
import socket, sys, time
port = int(sys.argv[1])
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(250)]
time.sleep(1)
held = []
for s in socks:
    s.setblocking(False)
    try:
        closed = s.recv(1) == b""
    except BlockingIOError:
        closed = False
    except ConnectionError:
        closed = True
    if not closed:
        held.append(s)
held.pop().close()
held.pop().close()
print(len(held) + 2, 250 - len(held) - 2, flush=True)
time.sleep(120)
EOF
holder=$!
read -r held closed <"$dir/holder.out"
echo "flood: $held connections held, $closed closed"
sleep 0.5

export ACKED_WRITER_DATA=65536
"$writer" write "127.0.0.1:$port" /flood 320 >"$dir/acked" 2>"$dir/writer.err"
[ "$(grep -c . "$dir/acked")" = 320 ] ||
    { echo "creates failed under the flood:"; cat "$dir/writer.err"; tail "$dir/server.log"; exit 1; }
kill -0 "$pid" || { echo "tumblerd stopped:"; tail "$dir/server.log"; exit 1; }
echo "320 creates of 64 KiB acknowledged while the flood held its connections"
[ "$held" -le 136 ] && [ "$closed" -ge 114 ] ||
    { echo "expected at most 136 held (the limit 200 less 64)"; tail "$dir/server.log"; exit 1; }
grep -q "too many connections (136, what the open-file limit leaves room for)" "$dir/server.log" ||
    { echo "no line about the connections closed"; tail "$dir/server.log"; exit 1; }
# Each refusal is counted, but the flood is logged a line a second at most.
lines=$(grep -c "too many connections" "$dir/server.log")
rejected=$(printf mntr | nc -q1 127.0.0.1 "$port" | awk '$1 == "zk_connection_rejected" { print $2 }')
echo "refused: $rejected connections, in $lines lines of the log"
[ "$rejected" = "$closed" ] || { echo "mntr counted $rejected refused, not $closed"; exit 1; }
[ "$lines" -le 5 ] || { echo "$lines lines for one flood"; tail "$dir/server.log"; exit 1; }

# With both HTTP ports on, their descriptors are kept from connections too
# (each: a listener, an epoll set, 64 connections): 204 of a limit of 400
# (was 336, and the HTTP ports' connections could take the log's).
crash_kill $pid $holder
pid="" holder=""
tumblerd=(prlimit --nofile=400:400 "$1")
port=$(free_port) mport=$(free_port) aport=$(free_port)
crash_start "$dir/data2" --maxClientCnxns=0 \
    --metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider \
    --metricsProvider.httpHost=127.0.0.1 --metricsProvider.httpPort="$mport" \
    --admin.enableServer=true --admin.serverAddress=127.0.0.1 --admin.serverPort="$aport"
python3 -c 'import socket, sys, time
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(230)]
time.sleep(20)' "$port" &
holder=$!
for _ in $(seq 100); do
    grep -q "too many connections (204, " "$dir/server.log" && break
    sleep 0.1
done
grep -q "too many connections (204, what the open-file limit leaves room for)" "$dir/server.log" ||
    { echo "expected 204 connections with the HTTP ports on"; tail "$dir/server.log"; exit 1; }
echo "with the HTTP ports on: 204 connections of a limit of 400"
echo "1 passed, 0 failed"
