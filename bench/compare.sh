#!/usr/bin/env bash
# Tumbler against Apache ZooKeeper 3.8, side by side, with one command:
#
#   bench/compare.sh [REPEATS]        (default 3; environment: BUILD_DIR, QUICK=1)
#
# Builds tumblerd and tbbench, then REPEATS times:
#   A. for each server on a fresh data directory: start-up time (exec to first served request),
#      idle RSS two seconds later, then 100,000 znodes of 100 bytes and the RSS after;
#   B. both servers up on fresh data directories; every scenario runs against one, then the
#      other (the order flips every repetition, so drift on this shared machine hits both); the
#      fair-lock scenarios also against tumblerd with its data on tmpfs, the machine's ceiling.
# The medians and the tumbler/zookeeper ratios go into docs/BENCHMARKS.md, between the markers
# of its generated parts (the one-screen summary near the top and the full tables; text outside
# them is kept), with the machine facts and the commands, and the run's analysis of what bounds
# the lock figures into docs/benchmarks-notes.md, between its markers; the raw results and the
# facts stay in bench/last-results.txt and bench/last-meta.txt, so that `bench/report.py
# bench/last-results.txt bench/last-meta.txt docs/BENCHMARKS.md docs/benchmarks-notes.md` writes
# them again.
# QUICK=1 shortens every scenario, for trying the script itself; its figures are not results.
set -Eeuo pipefail
trap 'echo "compare.sh: line $LINENO: command failed" >&2' ERR
cd "$(dirname "$0")/.."
ROOT=$(pwd)
REPEATS=${1:-3}
BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}
QUICK=${QUICK:-0}

command -v java >/dev/null || { echo "compare.sh: java not found (scripts/deps.sh --test)" >&2; exit 1; }
[ -f /usr/share/java/zookeeper.jar ] ||
    { echo "compare.sh: Apache ZooKeeper not installed (scripts/deps.sh --test)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "compare.sh: python3 needed for the report" >&2; exit 1; }

cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
ninja -C "$BUILD_DIR" tumblerd tbbench > /dev/null
TUMBLERD=$BUILD_DIR/src/server/tumblerd
TBBENCH=$BUILD_DIR/bench/tbbench

# 10,000 sessions need 10,000 descriptors on both sides; the servers inherit this limit.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

BS_TMPDIR=${BS_TMPDIR:-/var/tmp}
# shellcheck source=servers.sh
. "$ROOT/bench/servers.sh"
bs_init
# A server started in BS_TMPFS (BS_ROOT=$BS_TMPFS bs_start ...) makes no disk write (part B).
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
    BS_TMPFS=$(mktemp -d /dev/shm/tbbench.XXXXXX) || BS_TMPFS=""
fi
RESULTS=$BS_ROOT/results.txt
META=$BS_ROOT/meta.txt
: > "$RESULTS"
: > "$META"

if [ "$QUICK" = 1 ]; then
    D=2; W=1; RD=1; RW=0.5; SD=1; ZN=20000; SESS=2000; ART=200; ARTD=3
else
    D=10; W=2; RD=5; RW=1; SD=3; ZN=100000; SESS=10000; ART=2000; ARTD=10
fi

# The scenarios of part B: NAME|tbbench arguments.  The bulk writes of "raw" come last: they grow
# both servers' memory for good, which would blur the RSS figures of the scenarios after them.
SCENARIOS=(
    "single|raw --clients 1 --outstanding 1 --ops create,get,delete --data-bytes 100 --duration $SD --warmup $RW --tag single"
    "lock_fair_1|lock --variant fair --clients 100 --locks 1 --duration $D --warmup $W"
    "lock_fair_10|lock --variant fair --clients 100 --locks 10 --duration $D --warmup $W"
    "lock_herd_1|lock --variant herd --clients 100 --locks 1 --duration $D --warmup $W"
    "lock_nonfair_1|lock --variant nonfair --clients 100 --locks 1 --duration $D --warmup $W"
    "articles|articles --clients $ART --locks 2 --hold-ms 500 --duration $ARTD"
    "sessions|sessions --clients $SESS --hold-s 5"
    "raw|raw --clients 16 --outstanding 64 --data-bytes 100 --duration $RD --warmup $RW"
)

# bench REP KIND PORT PID ARGS...: one tbbench run; RESULT lines go to $RESULTS tagged with REP.
bench()
{
    local rep=$1 kind=$2 port=$3 pid=$4
    shift 4
    echo "  [$rep] $kind: tbbench $*" >&2
    local out rc=0
    out=$(timeout 900 "$TBBENCH" "$@" --server "127.0.0.1:$port" --pid "$pid" \
        --label "$kind") || rc=$?
    printf '%s\n' "$out" | { grep -v '^RESULT' || true; } | sed 's/^/      /' >&2
    printf '%s\n' "$out" | { grep '^RESULT' || true; } |
        sed "s/^RESULT /RESULT rep=$rep rc=$rc /" >> "$RESULTS"
    [ "$rc" = 0 ] || echo "  [$rep] $kind: tbbench exited with $rc" >&2
}

order()
{
    if [ $(($1 % 2)) = 1 ]; then echo "tumbler zookeeper"; else echo "zookeeper tumbler"; fi
}

# Part A: the disk's floor; then start-up, idle RSS, memory, each on a fresh server.
part_a()
{
    local rep=$1 kind port pid
    echo "  [$rep] tbbench disk" >&2
    "$TBBENCH" disk --dir "$BS_ROOT" --label machine | sed "s/^RESULT /RESULT rep=$rep rc=0 /" |
        tee -a "$RESULTS" | { grep -v '^RESULT' || true; } | sed 's/^/      /' >&2
    for kind in $(order "$rep"); do
        port=$(free_port)
        # The previous scenario's writes reach the disk first: a start-up
        # measured behind them (either server's) took up to 240 ms here.
        sync
        bs_start_probed "$kind" "a$rep-$kind" "$port" bench "$rep" "$kind" "$port" 0 \
            serving --duration 120 --since "@$BS_ROOT/a$rep-$kind.exec"
        pid=$BS_PID
        sleep 2
        bench "$rep" "$kind" "$port" "$pid" idle
        bench "$rep" "$kind" "$port" "$pid" memory --znodes "$ZN" --data-bytes 100 \
            --clients 16 --outstanding 64 --no-cleanup
        bs_stop "$pid"
    done
}

# Part B: both servers up; each scenario against one, then the other.  The fair-lock scenarios
# also run against a third server, tumblerd with its data on tmpfs ("tmpfs"): with no disk write,
# its rate is the most the rest of a handoff (the messages, the two processes, the two CPUs)
# allows on this machine, a bound the report sets beside the targets.
part_b()
{
    local rep=$1 kind s name args kinds=(tumbler zookeeper)
    declare -A port pid
    [ -n "$BS_TMPFS" ] && kinds+=(tmpfs)
    for kind in "${kinds[@]}"; do
        port[$kind]=$(free_port)
        if [ "$kind" = tmpfs ]; then
            BS_ROOT=$BS_TMPFS bs_start tumbler "b$rep-$kind" "${port[$kind]}"
        else
            bs_start "$kind" "b$rep-$kind" "${port[$kind]}"
        fi
        pid[$kind]=$BS_PID
        "$TBBENCH" serving --server "127.0.0.1:${port[$kind]}" --duration 120 > /dev/null
    done
    for s in "${SCENARIOS[@]}"; do
        name=${s%%|*}
        args=${s#*|}
        for kind in $(order "$rep"); do
            # shellcheck disable=SC2086
            bench "$rep" "$kind" "${port[$kind]}" "${pid[$kind]}" $args
        done
        if [ -n "${port[tmpfs]:-}" ] && [[ $name == lock_fair_* ]]; then
            # shellcheck disable=SC2086
            bench "$rep" tmpfs "${port[tmpfs]}" "${pid[tmpfs]}" $args
        fi
    done
    for kind in "${kinds[@]}"; do bs_stop "${pid[$kind]}"; done
}

machine_facts()
{
    local dev q
    dev=$(df --output=source "$BS_ROOT" | tail -1)
    q=/sys/block/$(basename "$dev" | sed 's/[0-9]*$//')/queue
    {
        echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "nproc=$(nproc)"
        echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
        echo "memory=$(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
        echo "kernel=$(uname -sr)"
        # A synced write's cost hangs on the cache (a flush after each write
        # without FUA) and on whether the file system keeps a journal.
        echo "disk=$dev ($(df -h --output=fstype,size "$BS_ROOT" | tail -1 | xargs)," \
             "rotational=$(cat "$q/rotational" 2>/dev/null || echo '?')," \
             "cache $(cat "$q/write_cache" 2>/dev/null || echo '?'), FUA $(cat "$q/fua" 2>/dev/null || echo '?')," \
             "$(ls -d /proc/fs/jbd2/"$(basename "$dev")"-* > /dev/null 2>&1 && echo journal || echo 'no journal'))"
        echo "datadir=$BS_ROOT (both servers)"
        echo "java=$(java -version 2>&1 | head -1)"
        echo "zookeeper=$(basename "$(ls /usr/share/java/zookeeper-3*.jar | head -1)" .jar)"
        echo "tumbler=$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- src || echo '+local changes')"
        echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
        echo "repeats=$REPEATS"
        echo "quick=$QUICK"
    } >> "$META"
    for s in "${SCENARIOS[@]}"; do echo "scenario=${s%%|*}|tbbench ${s#*|}" >> "$META"; done
    echo "scenario=memory|tbbench memory --znodes $ZN --data-bytes 100 --clients 16 --outstanding 64" >> "$META"
}

machine_facts
start=$SECONDS
for rep in $(seq 1 "$REPEATS"); do
    echo "== repetition $rep of $REPEATS" >&2
    part_a "$rep"
    part_b "$rep"
done
echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$META"
echo "elapsed_s=$((SECONDS - start))" >> "$META"

mkdir -p "$ROOT/docs"
cp "$RESULTS" "$ROOT/bench/last-results.txt"
cp "$META" "$ROOT/bench/last-meta.txt"
python3 "$ROOT/bench/report.py" "$RESULTS" "$META" "$ROOT/docs/BENCHMARKS.md" \
    "$ROOT/docs/benchmarks-notes.md"
echo "wrote docs/BENCHMARKS.md and docs/benchmarks-notes.md (raw results in bench/last-results.txt)" >&2
