#!/usr/bin/env bash
# A leader whose stored snapshot is damaged under it, while it serves: a
# follower that needs the snapshot (its log ends before the leader's
# begins) is still caught up.  The leader, failing to read the file, says
# so and takes a new snapshot from the state it holds; the next try sends
# that one (libraft tries again after its install_snapshot_timeout, 30 s).
# Without the new snapshot the follower waited for ever, sent the damaged
# file at each try.  Then the leader, killed and started again, loads the
# new snapshot, and every member has every acknowledged write.
#   snapdamage.sh TUMBLERD ACKED_WRITER
set -euo pipefail
tumblerd=("$1") writer=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-snapdamage.XXXXXX")
source "$(dirname "$0")/lib.sh"
cleanup() {
    local rc=$?
    crash_kill "${pids[@]:1}"
    [ "$rc" = 0 ] || for i in 1 2 3; do echo "---- server $i"; grep -v DEBUG "$dir/s$i.log" | tail -20; done
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT

crash_ens_init
for i in 1 2 3; do member_start "$i"; done
lead=$(ens_leader)
f=$((lead % 3 + 1))
# 64 KiB creates: the leader keeps 64 entries after each snapshot (4 MiB
# of them), so the follower, stopped after the first 20, needs a snapshot.
export ACKED_WRITER_DATA=65536
"$writer" write "127.0.0.1:${cport[$lead]}" /before 20 >"$dir/acked" 2>"$dir/writer.err" || true
crash_kill "${pids[$f]}"
pids[$f]=""
"$writer" write "127.0.0.1:${cport[$lead]}" /during 300 >>"$dir/acked" 2>>"$dir/writer.err" || true
[ "$(grep -c . "$dir/acked")" = 320 ] || { echo "the writes failed:"; cat "$dir/writer.err"; exit 1; }

# The leader's snapshots done (one is taken once writes pause): its
# state files unchanged for 2 s, none being written.  Then a byte of the
# newest one's state flipped.
last="" same=0
for _ in $(seq 300); do
    now=$(ls -l "$dir/d$lead"/state-* 2>/dev/null)
    if [ "$now" = "$last" ] && [ ! -e "$dir/d$lead/state-tmp" ]; then
        same=$((same + 1))
        [ "$same" -ge 20 ] && break
    else
        same=0 last=$now
    fi
    sleep 0.1
done
newest=$(ls "$dir/d$lead"/state-* | sort | tail -1)
python3 -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-100] ^= 0xff
open(p, "wb").write(b)' "$newest"
echo "damaged the leader's $(basename "$newest")"

member_start "$f"
member_caught_up "$f" 90
grep "cannot be sent; a new snapshot is taken" "$dir/s$lead.log" ||
    { echo "the leader never read its damaged snapshot"; exit 1; }
grep -q "restored snapshot" "$dir/s$f.log" || { echo "member $f was not sent a snapshot"; exit 1; }
echo "member $f caught up by the leader's new snapshot"

crash_kill "${pids[$lead]}"
pids[$lead]=""
member_start "$lead"
member_caught_up "$lead" 30
all_have "$dir/acked"
echo "the leader restarted on its new snapshot; all 320 acknowledged writes on every member"
echo "1 passed, 0 failed"
