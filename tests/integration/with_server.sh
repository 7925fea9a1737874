#!/usr/bin/env bash
# Run one test command against a freshly started server, then stop the server.
#
#   with_server.sh KIND COMMAND [ARG ...]
#
# KIND is "zk" (Apache ZooKeeper 3.8 from the Debian package) or "tumblerd" ($TUMBLERD).  The
# server gets its own temp dir and a free 127.0.0.1 port; every "@HOSTPORT@" in the arguments is
# replaced by 127.0.0.1:PORT, and IT_HOSTPORT / IT_PORT are exported.  The command's exit status
# is the script's; the server is stopped (SIGTERM, then SIGKILL) whatever happens.  The command
# itself is bounded by IT_TIMEOUT seconds (default 150).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

[ $# -ge 2 ] || it_die "usage: $0 zk|tumblerd COMMAND [ARG ...]"
kind=$1
shift
it_init
launch "$kind" "$kind"
export IT_PORT=$LAUNCH_PORT
export IT_HOSTPORT=127.0.0.1:$LAUNCH_PORT
export IT_SERVER_KIND=$kind
export IT_SERVER_PID=$LAUNCH_PID

args=()
for a in "$@"; do
    args+=("${a//@HOSTPORT@/$IT_HOSTPORT}")
done

run_bounded "${IT_TIMEOUT:-150}" "${args[@]}"
rc=$?
if [ "$rc" = 124 ]; then
    echo "test command timed out after ${IT_TIMEOUT:-150}s" >&2
fi
if ! kill -0 "$LAUNCH_PID" 2>/dev/null; then
    echo "server ($kind) died during the test" >&2
    [ "$rc" != 0 ] || rc=1
fi
exit "$rc"
