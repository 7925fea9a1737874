#!/usr/bin/env bash
# Stops or restarts the server under test in place (same directory, data
# and port), for the client tests that need a server to go away and come
# back.  Uses IT_KIND, IT_DIR and IT_PORT from run.sh.
#   srvctl.sh stop | start
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"

case "${1:-}" in
stop)
    pid=$(cat "$IT_DIR/server.pid" 2>/dev/null) || exit 0
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || exit 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || exit 0
        sleep 0.1
    done
    exit 1
    ;;
start)
    start_server "$IT_KIND" "$IT_DIR" "$IT_PORT"
    wait_serving "$IT_PORT" 60 "$SERVER_PID"
    ;;
*)
    echo "usage: $0 stop|start" >&2
    exit 2
    ;;
esac
