#!/usr/bin/env bash
# Differential test: run the zkdiff script against Apache ZooKeeper 3.8 (the reference) and
# against a second server, and require identical normalized transcripts.
#
#   diff_test.sh ZKDIFF_BINARY zk|tumblerd
#
# With "zk" the second server is another, independent Apache ZooKeeper: the transcripts must
# then match too, which shows the normalization leaves nothing that varies between runs.
# With "tumblerd" it is $TUMBLERD.  Both servers are fresh, on free 127.0.0.1 ports, and are
# stopped whatever happens.  Transcripts are kept on failure (IT_KEEP=1 keeps them always).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

[ $# = 2 ] || it_die "usage: $0 ZKDIFF_BINARY zk|tumblerd"
zkdiff=$1
kind=$2
[ -x "$zkdiff" ] || it_die "$zkdiff is not executable"
it_init

# Quota limits are enforced on both, so that the script can show what each refuses.
export ZK_CFG_EXTRA="enforceQuota=true"
export TUMBLERD_ARGS="--enforceQuota=true ${TUMBLERD_ARGS:-}"
launch zk reference
ref_port=$LAUNCH_PORT
ref_pid=$LAUNCH_PID
launch "$kind" candidate
cand_port=$LAUNCH_PORT
cand_pid=$LAUNCH_PID
out=$(it_tmpdir transcripts)

# Both scripts run at once; each has its own server, so they cannot disturb each other.
run_bg 150 "$zkdiff" "127.0.0.1:$ref_port" > "$out/reference.txt" 2> "$out/reference.err"
ref_run=$BG_PID
run_bg 150 "$zkdiff" "127.0.0.1:$cand_port" > "$out/$kind.txt" 2> "$out/$kind.err"
cand_run=$BG_PID
wait "$ref_run"
ref_rc=$?
wait "$cand_run"
cand_rc=$?

status=0
if [ "$ref_rc" != 0 ]; then
    echo "zkdiff against the reference failed (exit $ref_rc):" >&2
    cat "$out/reference.err" >&2
    status=1
fi
if [ "$cand_rc" != 0 ]; then
    echo "zkdiff against $kind failed (exit $cand_rc):" >&2
    cat "$out/$kind.err" >&2
    status=1
fi
for pid in "$ref_pid" "$cand_pid"; do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "a server (pid $pid) died during the run" >&2
        status=1
    fi
done
if ! grep -q '^## end$' "$out/reference.txt"; then
    echo "the reference transcript is incomplete" >&2
    status=1
fi

if diff -u --label "Apache ZooKeeper" --label "$kind" "$out/reference.txt" "$out/$kind.txt"; then
    echo "transcripts identical ($(wc -l < "$out/reference.txt") lines)"
else
    echo "transcripts differ (see diff above)" >&2
    status=1
fi
if [ "$status" != 0 ] && [ "${IT_KEEP:-0}" != 1 ]; then
    keep=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-diff.XXXXXX")
    cp "$out"/* "$keep"/
    echo "transcripts kept in $keep" >&2
fi
exit "$status"
