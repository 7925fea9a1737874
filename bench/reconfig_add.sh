#!/usr/bin/env bash
# Time to add a member that must receive a large snapshot: a 3-member tumblerd ensemble on
# 127.0.0.1 given N znodes (100,000 of 32 bytes by default) through kazoo, then a 4th server
# started with joinEnsemble=true and added with kazoo's reconfig (the super user's).  Prints
# how long the reconfig took to be answered, and how long until the new member serves: a session
# on it whose sync returns and which sees all N children.  Its snapshot install and the leader's
# lines about it follow.  Not part of CI (a minute or so).
#
#   TUMBLERD=build/src/server/tumblerd [N=100000] bench/reconfig_add.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/integration" && pwd)
# shellcheck source=../tests/integration/lib.sh
. "$here/lib.sh"
[ -x "${TUMBLERD:-}" ] || it_die "TUMBLERD is not set to the server binary"
it_init
work=$(it_tmpdir work)
N=${N:-100000}
py=/usr/bin/python3
super_digest=$("$py" -c 'import base64, hashlib
print("super:" + base64.b64encode(hashlib.sha1(b"super:secret").digest()).decode())')
cport=() qport=() eport=() pid=() dir=()
for i in 1 2 3 4; do
    cport[$i]=$(free_port) qport[$i]=$(free_port) eport[$i]=$(free_port)
    dir[$i]=$(it_tmpdir "s$i")
done
line() { echo "server.$1=127.0.0.1:${qport[$1]}:${eport[$1]};127.0.0.1:${cport[$1]}"; }
{
    echo "tickTime=1000"
    echo "4lw.commands.whitelist=*"
    echo "reconfigEnabled=true"
    echo "DigestAuthenticationProvider.superDigest=$super_digest"
    for i in 1 2 3; do line "$i"; done
} > "$work/zoo.cfg"
{ cat "$work/zoo.cfg"; line 4; echo joinEnsemble=true; } > "$work/zoo4.cfg"
start() {
    local cfg=$work/zoo.cfg
    [ "$1" = 4 ] && cfg=$work/zoo4.cfg
    "$TUMBLERD" "$cfg" --serverId="$1" --dataDir="${dir[$1]}/data" \
        >> "${dir[$1]}/server.log" 2>&1 < /dev/null &
    pid[$1]=$!
    IT_PIDS+=("${pid[$1]}")
    IT_TUMBLERDS+="${pid[$1]} "
}
for i in 1 2 3; do start "$i"; done
for i in 1 2 3; do wait_serving "${cport[$i]}" 20 "${pid[$i]}" || it_die "member $i did not start"; done
"$py" - "127.0.0.1:${cport[1]}" "$N" <<'PY'
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
print("created %d znodes in %.1f s" % (n, time.time() - t))
c.stop()
PY
start 4
for _ in $(seq 100); do four_letter "${cport[4]}" ruok | grep -q imok && break; sleep 0.1; done
"$py" - "127.0.0.1:${cport[1]}" "$(line 4)" "${cport[4]}" <<'PY'
import sys, time, socket
from kazoo.client import KazooClient
c = KazooClient(hosts=sys.argv[1], timeout=30); c.start(timeout=15)
c.add_auth("digest", "super:secret")
t = time.time()
c.reconfig(sys.argv[2], None, None)
t1 = time.time()
print("reconfig -add answered in %.3f s" % (t1 - t))
d = KazooClient(hosts="127.0.0.1:" + sys.argv[3], timeout=30)
d.start(timeout=30)
d.sync("/big")
print("member 4 serving (session, sync) %.3f s after the request; /big has %d children there" % (time.time() - t, d.get("/big")[1].numChildren))
d.stop(); c.stop()
PY
grep -h "member 4" "${dir[1]}/server.log" "${dir[2]}/server.log" "${dir[3]}/server.log"
grep -h "restored snapshot\|members:" "${dir[4]}/server.log"
