#!/usr/bin/env bash
# Builds tumblerd and runs it on its embedded default: a single node serving
# 127.0.0.1:2181 with its data under ./data.  Extra arguments go to tumblerd
# (e.g. --clientPort=2182, or -c zoo.cfg).  tumblerd runs in the directory
# this is run from, so relative paths in them (and ./data) are the
# caller's; only the build happens in the checkout.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
(
    cd "$top"
    scripts/deps.sh
    # Configure only once: every configure stamps a new build time into
    # tumblerd (src/server/admin/CMakeLists.txt), which would then be
    # rebuilt on every start.  ninja runs cmake again by itself when a
    # CMakeLists.txt changes.
    [ -f build/build.ninja ] ||
        cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    ninja -C build tumblerd
)
exec "$top/build/src/server/tumblerd" "$@"
