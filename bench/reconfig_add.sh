#!/usr/bin/env bash
# Time to add a member that must receive a large snapshot, tumblerd beside Apache ZooKeeper 3.8
# in one run: for each system in turn, a fresh 3-member ensemble on 127.0.0.1 (reconfigEnabled,
# a super user) is given N znodes (100,000 of 32 bytes by default) through kazoo, then a 4th
# server is started as each system has a joiner started (tumblerd: joinEnsemble=true; ZooKeeper:
# the members' lines and its own) and added with kazoo's reconfig as the super user.  Two
# figures per trial: the reconfig answered, and the new member serving (a session on it whose
# sync returns and which sees all N children), both from the request.  Trials alternate which
# system goes first.  The RESULT lines, then medians and ratios (tumblerd / ZooKeeper) on
# stdout.  Not part of CI (a few minutes).
#
#   TUMBLERD=build/src/server/tumblerd [N=100000] [TRIALS=3] bench/reconfig_add.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/integration" && pwd)
# shellcheck source=../tests/integration/lib.sh
. "$here/lib.sh"
[ -x "${TUMBLERD:-}" ] || it_die "TUMBLERD is not set to the server binary"
it_init
work=$(it_tmpdir work)
N=${N:-100000}
TRIALS=${TRIALS:-3}
py=/usr/bin/python3
results=$work/results.txt
: > "$results"

# ZooKeeper as bench/ensemble.sh runs it: the JVM's defaults and zkEnv.sh's heap limit.
zk_java() { # DIR: QuorumPeerMain on DIR/zoo.cfg, in the background
    # shellcheck disable=SC2046
    java -Xmx1000m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
        -Dorg.slf4j.simpleLogger.logFile="$1/server.log" \
        -Dzookeeper.DigestAuthenticationProvider.superDigest="$(ens_super_digest)" \
        -Dzookeeper.admin.enableServer=false -Dzookeeper.jmx.log4j.disable=true \
        -cp "$(zk_classpath)" org.apache.zookeeper.server.quorum.QuorumPeerMain \
        "$1/zoo.cfg" >> "$1/server.log" 2>&1 < /dev/null &
    pid[$2]=$!
    IT_PIDS+=("${pid[$2]}")
}

# ensemble KIND: a fresh one of KIND, members 1-3 serving; member 4 configured, not started.
ensemble() {
    local kind=$1 i
    ens_init 4
    case "$kind" in
        tumbler)
            ens_reconfig_cfg "$work" 3
            for i in 1 2 3; do ens_start "$i" "$work/zoo.cfg"; done
            ;;
        zookeeper)
            zk_reconfig_cfg 1000
            for i in 1 2 3; do zk_java "${dir[$i]}" "$i"; done
            ;;
    esac
    for i in 1 2 3; do
        wait_serving "${cport[$i]}" 60 "${pid[$i]}" || it_die "$kind member $i did not start"
    done
    until_ok 60 find_leader 1 2 3 || it_die "$kind: no leader"
}

start_joiner() { # KIND
    if [ "$1" = tumbler ]; then ens_start 4 "$work/zoo4.cfg"; else zk_java "${dir[4]}" 4; fi
    until_ok 60 eval '[ "$(four_letter "${cport[4]}" ruok)" = imok ]' ||
        it_die "$1: member 4 did not start"
}

trial() { # KIND TRIAL
    local kind=$1 t=$2 i out
    ensemble "$kind"
    "$py" - "127.0.0.1:${cport[1]}" "$N" <<'PY' || it_die "$kind: load failed"
import sys, time
from kazoo.client import KazooClient
c = KazooClient(hosts=sys.argv[1], timeout=30); c.start(timeout=15)
n = int(sys.argv[2]); c.create("/big")
t = time.time(); pend = []
for i in range(n):
    pend.append(c.create_async("/big/n%07d" % i, b"x" * 32))
    if len(pend) >= 2000:
        for p in pend: p.get()
        pend = []
for p in pend: p.get()
print("  created %d znodes in %.1f s" % (n, time.time() - t))
c.stop()
PY
    start_joiner "$kind"
    out=$("$py" - "127.0.0.1:${cport[1]}" "$(ens_line 4)" "${cport[4]}" "$N" <<'PY'
import sys, time
from kazoo.client import KazooClient
c = KazooClient(hosts=sys.argv[1], timeout=30); c.start(timeout=15)
c.add_auth("digest", "super:secret")
t = time.time()
c.reconfig(sys.argv[2], None, None)
answered = time.time() - t
d = KazooClient(hosts="127.0.0.1:" + sys.argv[3], timeout=30)
d.start(timeout=30)
d.sync("/big")
seen = d.get("/big")[1].numChildren
serving = time.time() - t
if seen != int(sys.argv[4]):
    sys.exit("member 4 sees %d children of /big, not %s" % (seen, sys.argv[4]))
print("RESULT answered_ms=%.1f serving_ms=%.1f" % (answered * 1000, serving * 1000))
d.stop(); c.stop()
PY
) || it_die "$kind: $out"
    echo "  $kind trial $t: $out" >&2
    echo "${out/RESULT/RESULT system=$kind trial=$t}" >> "$results"
    for i in 1 2 3 4; do stop_server "${pid[$i]}" 30; done
    IT_PIDS=()
    for i in 1 2 3 4; do rm -rf "${dir[$i]}"; done # ens_init's next directories have the same names
}

for t in $(seq 1 "$TRIALS"); do
    order="tumbler zookeeper"
    [ $((t % 2)) = 0 ] && order="zookeeper tumbler"
    for kind in $order; do
        echo "== trial $t: $kind, $N znodes, then reconfig -add of a 4th" >&2
        trial "$kind" "$t"
    done
done
cat "$results"
"$py" - "$results" <<'PY'
import re, statistics, sys
v = {}
for line in open(sys.argv[1]):
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    for k in ("answered_ms", "serving_ms"):
        v.setdefault((f["system"], k), []).append(float(f[k]))
print("| figure | tumblerd | ZooKeeper 3.8 | ratio |")
print("|---|---:|---:|---:|")
for k, what in (("answered_ms", "reconfig -add answered"),
                ("serving_ms", "the new member serving (session, sync, all children seen)")):
    a = statistics.median(v[("tumbler", k)]); b = statistics.median(v[("zookeeper", k)])
    print("| %s, median of %d | %.0f ms | %.0f ms | %.2fx |" % (what, len(v[("tumbler", k)]), a, b, a / b))
PY
