#!/usr/bin/env bash
# The articles' test as they describe it, through libtumbler: CLIENTS
# clients on each of two keys, every client its own session, each taking
# its key's fair lock once and holding it HOLD_MS, both keys at once;
# every hold recorded and checked (tests/recipes/t_articles.c: no overlap,
# grants in queue order, every client served, no node left).  Runs
# against tumblerd, then against Apache ZooKeeper 3.8 on the same
# machine, and prints for each: the time from the first grant to the last
# release against the holds alone, the mean gap between holds, the
# server's most sessions and resident memory while it ran, overlaps.
#
#   bench/articles.sh [CLIENTS [HOLD_MS]]     (default 1000 500: ~9 min a server)
#
# BUILD names the build tree (default build/), with tumblerd and
# src/recipes/recipes_it.  Not in ctest (ctest runs it at 100 x 2 x 20 ms:
# recipes_articles_*).  The result is in docs/BENCHMARKS.md.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../tests/integration/lib.sh
source "$root/tests/integration/lib.sh"
BUILD=${BUILD:-$root/build}
N=${1:-1000}
HOLD=${2:-500}
export TUMBLERD=$BUILD/src/server/tumblerd
it=$BUILD/src/recipes/recipes_it
# Every client has a session, a socket and two threads.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
export TUMBLERD_ARGS="--maxClientCnxns=0"
it_init

# mntr's value of KEY from the server on PORT.
mntr()
{
    timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" && printf mntr >&3 && cat <&3' \
        "$1" 2>/dev/null | awk -v k="$2" '$1 == k { print $2 }'
}

for kind in tumblerd zk; do
    launch "$kind" "$kind"
    out=$(it_tmpdir "$kind-out")/run.log
    "$it" "127.0.0.1:$LAUNCH_PORT" articles "$N" 2 "$HOLD" > "$out" 2>&1 &
    run=$!
    sessions=0 rss=0
    while kill -0 "$run" 2>/dev/null; do
        s=$(mntr "$LAUNCH_PORT" zk_num_alive_connections)
        r=$(ps -o rss= -p "$LAUNCH_PID" 2>/dev/null | tr -d ' ')
        [ -n "$s" ] && [ "$s" -gt "$sessions" ] && sessions=$s
        [ -n "$r" ] && [ "$r" -gt "$rss" ] && rss=$r
        sleep 1
    done
    wait "$run"
    st=$?
    echo "== $kind: $N clients x 2 keys x $HOLD ms (exit status $st)"
    grep -E '^(key[0-9]|articles:)' "$out"
    echo "$kind: most connections $sessions, resident memory at most $((rss / 1024)) MB"
    [ "$st" = 0 ] || { tail -20 "$out"; exit 1; }
    stop_server "$LAUNCH_PID" 30
done
