#!/usr/bin/env bash
# Builds everything and runs the whole test suite: unit tests, integration
# tests against real tumblerd processes, compatibility tests with Apache
# ZooKeeper 3.8's own clients and server, fuzz-corpus replays; then the same
# suite (less the runs against ZooKeeper itself) again under AddressSanitizer
# and UndefinedBehaviorSanitizer, the cluster harness, the log's durability
# tests (snapshot children included) and tumblerd in three ensemble tests
# under Valgrind's memcheck, and the client's threaded parts
# under ThreadSanitizer.  Extra arguments go to every ctest run.
# Last, every fuzz target runs for TB_TEST_FUZZ_SECONDS (default 20) each.
#   TB_TEST_SANITIZERS=0 skips the sanitizer builds and the fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
# Two tests per CPU: the process tests spend much of their time waiting
# (elections, cut links, sessions expiring); at one per CPU the CPUs were
# idle 40% of the time.
jobs=$((2 * $(nproc)))

echo "== build and test (RelWithDebInfo, -Werror)"
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DTB_WERROR=ON -DTB_ALL_TESTS=ON >/dev/null
ninja -C build-test
(cd build-test && ctest --output-on-failure --timeout 600 -j "$jobs" "$@")

if [ "${TB_TEST_SANITIZERS:-1}" = 1 ]; then
    echo "== ASan + UBSan (tumblerd, libtumbler, recipes, CLI; not the ZooKeeper-only runs)"
    cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
          -DTB_SANITIZE=ON -DTB_WERROR=ON -DTB_ALL_TESTS=ON >/dev/null
    ninja -C build-asan
    # Not here: the runs against ZooKeeper itself, the packaging checks
    # (install tree, exported symbols, the Debian packages: their build is
    # not sanitized), and the kill -9 rounds (replaying a large log under
    # ASan's allocator takes minutes).
    (cd build-asan &&
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        LSAN_OPTIONS="suppressions='$PWD/../tests/sanitizers/lsan.supp'" \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --output-on-failure --timeout 900 -j "$jobs" -LE zk \
              -E 'client_install|client_symbols|crash_kill9|^package$' "$@")

    # ASan does not see a value read before it was written (in the cluster
    # harness such a read makes a schedule depend on the ones run before
    # it), nor what libuv and libraft, not built with it, do to memory.
    echo "== Valgrind memcheck: the cluster harness (scenarios, 100 schedules of each size), the log's durability"
    memcheck=$PWD/tests/sanitizers/memcheck.sh
    "$memcheck" build-test/src/server/replog/test_cluster
    "$memcheck" build-test/src/server/replog/test_cluster_members
    TB_CLUSTER_SEEDS=100 "$memcheck" build-test/src/server/replog/test_cluster_random
    "$memcheck" build-test/src/server/replog/test_raft_durability
    echo "== Valgrind memcheck: tumblerd in ensembles (peer TLS, reconfig, rolling restart)"
    cmake -S . -B build-memcheck -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DTB_ALL_TESTS=ON -DTB_MEMCHECK=ON >/dev/null
    ninja -C build-memcheck tumblerd tumbler_cli acked_writer
    rm -rf build-memcheck/memcheck
    (cd build-memcheck && ctest --output-on-failure \
        -R '^(peer_tls_tumblerd|reconfig_tumblerd|crash_rolling)$' "$@")
    "$memcheck" --check build-memcheck/memcheck

    echo "== ThreadSanitizer (clang): the client library and the recipes' threads"
    CC=clang cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DTB_TSAN=ON -DTB_WERROR=ON -DTB_ALL_TESTS=ON >/dev/null
    ninja -C build-tsan
    (cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        ctest --output-on-failure --timeout 900 -j "$jobs" \
              -R 'unit_client|it_client_(sasl_|tls_)?tumblerd|unit_recipes|recipes_(threads|loop|processes|mutex|connloss|reaped|semaphore|counter|queue|barrier|cbarrier|latch)_tumblerd' "$@")

    echo "== fuzzing (libFuzzer, clang): ${TB_TEST_FUZZ_SECONDS:-20} s per target"
    FUZZ_BUILD_DIR="$PWD/build-fuzz" tests/fuzz/run.sh "${TB_TEST_FUZZ_SECONDS:-20}"
fi
