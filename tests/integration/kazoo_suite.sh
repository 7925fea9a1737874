#!/usr/bin/env bash
# kazoo's own test suite (Debian's python3-kazoo ships it as kazoo.tests), run against one
# fresh server of KIND, zk or tumblerd, in place of the three-node cluster kazoo starts for it
# (kazoo/kazoo_server.py).
#
#   kazoo_suite.sh KIND [PYTEST ARG ...]
#
# Not run: the tests that need more than one server (test_update_host_list, TestReconfig,
# TestReadOnlyMode) and SASL, which needs a JAAS configuration on the server side (tumblerd
# has no SASL).  The rest, about 465 tests, passes against Apache ZooKeeper 3.8; there a
# failed test is tried once more, as a few of them wait only 5 s for a restarted JVM.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

[ $# -ge 1 ] || it_die "usage: $0 zk|tumblerd [PYTEST ARG ...]"
kind=$1
shift
# As start_zk's zoo.cfg: the suite's clients come and go faster than they close.
export TUMBLERD_ARGS="--maxClientCnxns=0 ${TUMBLERD_ARGS:-}"
reruns=()
[ "$kind" = zk ] && reruns=(--reruns 1)
it_init
launch "$kind" "$kind"
export IT_PORT=$LAUNCH_PORT IT_SERVER_PID=$LAUNCH_PID
export PYTHONPATH="$here/kazoo" PYTHONDONTWRITEBYTECODE=1
cd "$IT_TMPROOT" || exit 1
run_bounded "${IT_TIMEOUT:-600}" /usr/bin/python3 -m pytest -p kazoo_server \
    -p no:cacheprovider --pyargs kazoo.tests -q -rfE --timeout=60 "${reruns[@]}" \
    -k "not (test_update_host_list or TestReconfig or TestReadOnlyMode or SASLDigest)" "$@"
