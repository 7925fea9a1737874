#!/usr/bin/env bash
# Builds everything and runs the whole test suite: unit tests, integration
# tests against real tumblerd processes, and compatibility tests with Apache
# ZooKeeper 3.8's own clients and server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DTB_WERROR=ON >/dev/null
ninja -C build-test
cd build-test
ctest --output-on-failure --timeout 600 "$@"
