#!/usr/bin/env bash
# The longer reliability runs, in one command (the test command runs short
# versions of the same on every change):
#   scripts/reliability.sh [CRASH_ROUNDS] [FUZZ_SECONDS_PER_TARGET]
# defaults 50 and 300: kill -9 crash rounds under write load, the disk-full
# test (mounts a tmpfs: needs root), the load tests, the cluster harness's
# random fault schedules (CLUSTER_SEEDS of each size, default 30000, ten
# times what the test command runs), the first MEMCHECK_SEEDS of them
# (default 1000) under Valgrind's memcheck, tumblerd under memcheck in every
# test that starts it, then every fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-50} fuzz_s=${2:-300} seeds=${CLUSTER_SEEDS:-30000}
memcheck_seeds=${MEMCHECK_SEEDS:-1000}
scripts/deps.sh --test
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build-test tumblerd acked_writer tumblerd_limits test_cluster_random

echo "== crash loop: $rounds rounds of kill -9"
bash tests/crash/kill9.sh build-test/src/server/tumblerd \
    build-test/tests/crash/acked_writer "$rounds" | grep -v '^verified'
echo "== disk full"
bash tests/crash/diskfull.sh build-test/src/server/tumblerd \
    build-test/tests/crash/acked_writer
echo "== load"
(cd build-test && ctest --output-on-failure -V \
    -R 'limits_(slow_reader|outstanding|wide_children|watch_burst)' |
    grep -E '^[0-9]+:   |tests passed')
echo "== cluster: $seeds random fault schedules of 3 and of 5 servers"
TB_CLUSTER_SEEDS=$seeds build-test/src/server/replog/test_cluster_random |
    grep -E 'schedules|failed|ERROR'
echo "== cluster under Valgrind's memcheck: $memcheck_seeds schedules of each size"
TB_CLUSTER_SEEDS=$memcheck_seeds tests/sanitizers/memcheck.sh \
    build-test/src/server/replog/test_cluster_random |
    grep -E 'schedules|failed|ERROR'
echo "== tumblerd under Valgrind's memcheck, in every test that starts it"
cmake -S . -B build-memcheck -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTB_ALL_TESTS=ON -DTB_MEMCHECK=ON >/dev/null
ninja -C build-memcheck
rm -rf build-memcheck/memcheck
# Left out, as they fail under Valgrind for its own sake: logfail (its
# faults come from strace), fdflood (Valgrind keeps descriptors), three
# limits (their RSS bounds); the upgrades, which build the releases before
# (the rolling restart is run); and the runs that start no tumblerd.
(cd build-memcheck && ctest --output-on-failure -j "$(nproc)" -LE zk \
    -E 'unit_|fuzz_|client_install|client_symbols|^package$|crash_upgrade|crash_logfail|crash_fdflood|limits_(slow_reader|wide_children|many_sessions)' |
    tail -3)
tests/sanitizers/memcheck.sh --check build-memcheck/memcheck
echo "== fuzzing: $fuzz_s s per target"
FUZZ_BUILD_DIR=$PWD/build-fuzz tests/fuzz/run.sh "$fuzz_s"
