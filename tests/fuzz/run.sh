#!/usr/bin/env bash
# Fuzzes every target for SECONDS, one fuzzer process per CPU at a time,
# then prints the executions and crashes per target.
#
#   tests/fuzz/run.sh [SECONDS]          default 60
#
# Environment: FUZZ_BUILD_DIR (default build-fuzz, configured with clang
# and -DTB_FUZZ=ON if it does not exist yet), FUZZ_TARGETS (a subset),
# FUZZ_ARGS (extra libFuzzer flags).  New inputs go to
# $FUZZ_BUILD_DIR/fuzz-work/<target>/corpus, never into the seed corpus;
# a crash is saved in $FUZZ_BUILD_DIR/fuzz-work/<target>/artifacts/ - once
# minimized (fuzz_<target> -minimize_crash=1 -runs=10000 FILE), it belongs
# in tests/fuzz/regressions/<target>/.  Exit status 1 if anything crashed.
set -eu

secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
targets=${FUZZ_TARGETS:-"frame request reply path txn_apply snapshot_load tree_model"}
extra=${FUZZ_ARGS:-}

if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_FUZZ=ON
fi
bins=""
for t in $targets; do
    bins="$bins fuzz_$t"
done
# shellcheck disable=SC2086
ninja -C "$build" $bins

max_len() {
    case $1 in
    snapshot_load) echo 16384 ;;
    frame) echo 8192 ;;
    *) echo 4096 ;;
    esac
}

# fuzz_one TARGET BINARY: fuzzes it, and leaves its line of the summary in
# $work/summary and its crash count in $work/crashes.
fuzz_one() {
    local t=$1 bin=$2 work dirs before after execs cov crashes
    work=$build/fuzz-work/$t
    mkdir -p "$work/corpus" "$work/artifacts"
    rm -f "$work/summary" "$work/crashes"
    # Not the regressions: one that is not fixed yet would stop the run
    # at once (ctest replays them).
    dirs="$work/corpus $root/tests/fuzz/corpus/$t"
    before=$(find "$work/artifacts" -type f | wc -l)
    echo "== fuzz_$t for ${secs}s"
    # shellcheck disable=SC2086
    "$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
        -rss_limit_mb=2048 -max_len="$(max_len "$t")" -use_value_profile=1 \
        -artifact_prefix="$work/artifacts/" $extra $dirs \
        >"$work/log.txt" 2>&1 || true
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log.txt" |
        tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$work/log.txt" | tail -n 1 | cut -d' ' -f2)
    after=$(find "$work/artifacts" -type f | wc -l)
    crashes=$((after - before))
    if [ "$crashes" -gt 0 ]; then
        grep -m 3 -E 'ERROR|runtime error|check failed' "$work/log.txt" || true
        echo "   artifacts in $work/artifacts, log in $work/log.txt"
    fi
    printf '%-14s %12s execs  cov %6s  %d crash(es)\n' \
        "$t" "${execs:-?}" "${cov:-?}" "$crashes" >"$work/summary"
    echo "$crashes" >"$work/crashes"
}

# Every target's binary found before any fuzzing starts.
declare -A fuzzers
for t in $targets; do
    fuzzers[$t]=$(find "$build" -type f -name "fuzz_$t" -perm -u+x | head -n 1)
    if [ -z "${fuzzers[$t]}" ]; then
        echo "run.sh: fuzz_$t not built in $build" >&2
        exit 2
    fi
done
for t in $targets; do
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do
        wait -n
    done
    fuzz_one "$t" "${fuzzers[$t]}" &
done
wait
echo
failed=0
for t in $targets; do
    cat "$build/fuzz-work/$t/summary"
    [ "$(cat "$build/fuzz-work/$t/crashes")" = 0 ] || failed=1
done
exit $failed
