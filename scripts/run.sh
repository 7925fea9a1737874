#!/usr/bin/env bash
# Builds tumblerd and runs it on its embedded default: a single node serving
# 127.0.0.1:2181 with its data under ./data.  Extra arguments go to tumblerd
# (e.g. --clientPort=2182, or -c zoo.cfg).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build tumblerd
exec build/src/server/tumblerd "$@"
