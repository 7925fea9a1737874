#!/usr/bin/env bash
# Smoke run of the benchmark against tumblerd, registered in ctest so the benchmark cannot rot:
# starts tumblerd on a free loopback port, runs every scenario for a second or two with small
# numbers, and fails unless each completes, prints its RESULT line, and reports no errors and no
# mutual-exclusion violations; and that bench/report.py writes the committed run's generated
# parts of docs/BENCHMARKS.md and docs/benchmarks-notes.md again unchanged.  It measures nothing
# worth quoting.
#   bench/smoke.sh TUMBLERD TBBENCH
set -euo pipefail
TUMBLERD=${1:?usage: smoke.sh TUMBLERD TBBENCH}
TBBENCH=${2:?usage: smoke.sh TUMBLERD TBBENCH}
BS_TMPDIR=${TMPDIR:-/tmp}
# shellcheck source=servers.sh
. "$(dirname "$0")/servers.sh"
bs_init

port=$(free_port_pair) # and port + 1, the TLS port
pid=0
out=$BS_ROOT/out.txt
: > "$out"
fail=0

# run NAME ARGS...: one tbbench run; its output is kept for the checks below.
run()
{
    local name=$1
    shift
    echo "== $name"
    if ! timeout 120 "$TBBENCH" "$@" --server "127.0.0.1:$port" --pid "$pid" \
        --label tumbler | tee -a "$out"; then
        echo "FAIL: $name exited non-zero" >&2
        fail=1
        return 1
    fi
}

# tumblerd also gets a TLS port, port + 1, for one lock run over TLS.
export BS_TLS=$BS_ROOT/certs
"$(dirname "$0")/../tests/integration/tls/mkcerts.sh" "$BS_TLS"
bs_start_probed tumbler smoke "$port" \
    run serving serving --duration 20 --since "@$BS_ROOT/smoke.exec" || fail=1
pid=$BS_PID
run idle idle
run lock-fair lock --variant fair --clients 20 --locks 2 --duration 1 --warmup 0.2
run lock-herd lock --variant herd --clients 10 --locks 1 --duration 1 --warmup 0.2
run lock-nonfair lock --variant nonfair --clients 10 --locks 2 --hold-ms 1 --duration 1 \
    --warmup 0.2
run lock-tls lock --variant fair --clients 10 --locks 2 --duration 1 --warmup 0.2 \
    --tls-port $((port + 1)) --tls-ca "$BS_TLS/ca.pem" --tls-cert "$BS_TLS/client.pem" \
    --tls-key "$BS_TLS/client.key" --tag tls
run articles articles --clients 40 --locks 2 --hold-ms 20 --duration 1
run raw raw --clients 4 --outstanding 8 --duration 0.3 --warmup 0.1
run sessions sessions --clients 300 --hold-s 1
run memory memory --znodes 3000 --clients 4
run disk disk --dir "$BS_ROOT"

# Every scenario must have printed its RESULT line(s), with work done and nothing wrong.
expect()
{
    local pattern=$1 n
    n=$(grep -c "^RESULT scenario=$pattern" "$out" || true)
    if [ "$n" -lt "${2:-1}" ]; then
        echo "FAIL: expected ${2:-1} RESULT line(s) for '$pattern', got $n" >&2
        fail=1
    fi
}
expect startup
expect idle
expect "lock .*variant=fair" 2
expect "lock .*tag=tls" 1
expect "lock .*variant=herd" 1
expect "lock .*variant=nonfair" 1
expect articles
expect "raw " 5
expect sessions
expect memory
expect disk
if grep '^RESULT' "$out" | grep -Eq ' (violations|errors)=[1-9]'; then
    echo "FAIL: a scenario reported violations or errors" >&2
    fail=1
fi
if grep '^RESULT scenario=lock' "$out" | grep -q ' acquisitions=0 '; then
    echo "FAIL: a lock scenario made no acquisitions" >&2
    fail=1
fi
# figure NAME KEY: KEY's value in the RESULT line of scenario NAME (first match), or empty.
figure()
{
    grep "^RESULT scenario=$1" "$out" | head -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}
# Start-up was timed from the exec time the probe read from its file.
if ! awk -v v="$(figure startup startup_ms)" 'BEGIN { exit !(v + 0 > 0) }'; then
    echo "FAIL: start-up time is missing or not positive" >&2
    fail=1
fi
# The handoff's legs and the server's synced writes are there and not zero.
for key in notice_n regrant_n synced_writes_per_acq; do
    if ! awk -v v="$(figure 'lock .*variant=fair' $key)" 'BEGIN { exit !(v + 0 > 0) }'; then
        echo "FAIL: the fair lock's $key is missing or zero" >&2
        fail=1
    fi
done
# tumblerd times its appends' waits for a write; none may have waited.
if [ -z "$(figure 'lock .*variant=fair' append_wait_mean_us)" ]; then
    echo "FAIL: the fair lock's append_wait_mean_us is missing" >&2
    fail=1
fi
keys=sync_write2_per_s
# Kernel AIO is timed only where the file system takes O_DIRECT (tmpfs does not).
[ "$(figure disk direct)" = 1 ] && keys="$keys sync_write2_aio_per_s"
for key in $keys; do
    if ! awk -v v="$(figure disk $key)" 'BEGIN { exit !(v + 0 > 0) }'; then
        echo "FAIL: the disk's $key is missing or zero" >&2
        fail=1
    fi
done
if ! grep '^RESULT scenario=sessions' "$out" | grep -q ' connected=300 alive=300 '; then
    echo "FAIL: sessions were not all connected and alive" >&2
    fail=1
fi
# The report writes the committed run's parts again as they stand in docs/BENCHMARKS.md (the
# summary and the full tables) and docs/benchmarks-notes.md (what bounds the lock figures), and
# with the ceiling that run measured (tumblerd on tmpfs) beside the lock targets.
here=$(cd "$(dirname "$0")" && pwd)
docs=$here/../docs
cp "$docs/BENCHMARKS.md" "$docs/benchmarks-notes.md" "$BS_ROOT/"
if ! python3 "$here/report.py" "$here/last-results.txt" "$here/last-meta.txt" \
    "$BS_ROOT/BENCHMARKS.md" "$BS_ROOT/benchmarks-notes.md"; then
    echo "FAIL: bench/report.py failed on bench/last-results.txt" >&2
    fail=1
else
    for f in BENCHMARKS.md benchmarks-notes.md; do
        if ! cmp -s "$docs/$f" "$BS_ROOT/$f"; then
            echo "FAIL: docs/$f differs from what bench/report.py writes of bench/last-results.txt" >&2
            diff "$docs/$f" "$BS_ROOT/$f" | head -20 >&2 || true
            fail=1
        fi
    done
    for marker in 'BEGIN bench/compare.sh summary' 'BEGIN bench/compare.sh output'; do
        grep -q "$marker" "$BS_ROOT/BENCHMARKS.md" ||
            { echo "FAIL: docs/BENCHMARKS.md has no '$marker' marker" >&2; fail=1; }
    done
    grep -q 'BEGIN bench/compare.sh bounds' "$BS_ROOT/benchmarks-notes.md" ||
        { echo "FAIL: docs/benchmarks-notes.md has no bounds marker" >&2; fail=1; }
    if ! grep -q '| met with no disk write |' "$BS_ROOT/BENCHMARKS.md"; then
        echo "FAIL: the report has no lock targets beside the no-disk ceiling" >&2
        fail=1
    fi
fi
[ "$fail" = 0 ] && echo "bench smoke: all scenarios completed, 0 violations"
exit "$fail"
