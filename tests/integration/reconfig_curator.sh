#!/usr/bin/env bash
# Apache Curator's reconfig against a tumblerd ensemble (reconfigEnabled=true, a super user):
# curator/CuratorReconfig.java, on member 1, adds server 4 (a joiner with an empty data
# directory) and removes server 3, each from the configuration version it read, sees a stale
# version refused with BadVersion and its watch on the configuration fire after each change.
# Member 3 leads, most runs (make_lead): it answers the removal through member 1, hands
# leadership over, and the next leader takes it out of raft's members.  Then, from here:
# member 4 serves and holds what was written through member 1 before it joined; member 3 says
# it was removed and serves nobody.
#   reconfig_curator.sh CLASSES   (TUMBLERD names the server; CLASSES holds the compiled test)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ $# = 1 ] || it_die "usage: $0 CLASSES"
[ -x "${TUMBLERD:-}" ] || it_die "TUMBLERD is not set to the server binary"
classes=$1
[ -f "$classes/CuratorReconfig.class" ] || it_die "$classes/CuratorReconfig.class not found"
it_init
work=$(it_tmpdir work)
fail() { echo "FAIL: $*"; exit 1; }

ens_init 4
ens_reconfig_cfg "$work" 3 # zoo.cfg: members 1-3; zoo4.cfg: a joiner
for i in 1 2 3; do ens_start "$i" "$work/zoo.cfg"; done
ens_start 4 "$work/zoo4.cfg"
for i in 1 2 3; do
    wait_serving "${cport[$i]}" 20 "${pid[$i]}" || it_die "member $i did not start"
done
make_lead 3 1 2 3 || it_die "no member leads"
led=$L
echo "3 members, member $L leads; server 4 waits to be added"
until_ok 10 grep -q "joining: no clients" "${dir[4]}/server.log" ||
    fail "server 4 does not say it waits to join"
printf 'create /before4 written\n' |
    zkcli "127.0.0.1:${cport[1]}" "$work/zkcli.log" > /dev/null 2>&1 ||
    fail "create /before4 through member 1"

cp="$classes"
for j in curator-framework curator-client zookeeper zookeeper-jute guava slf4j-api \
    slf4j-nop; do
    cp+=":/usr/share/java/$j.jar"
done
run_bounded 60 java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -Xmx128m -cp "$cp" \
    CuratorReconfig "127.0.0.1:${cport[1]}" "$(ens_line 4)" 3 > "$work/curator.out" 2>&1
rc=$?
sed 's/^/  | /' "$work/curator.out"
[ "$rc" = 0 ] && tail -1 "$work/curator.out" | grep -qx PASSED ||
    fail "Curator's side (exit status $rc)"

wait_serving "${cport[4]}" 20 "${pid[4]}" || fail "member 4 does not serve after it joined"
got=$(printf 'sync /before4\nget /before4\n' |
    zkcli "127.0.0.1:${cport[4]}" "$work/zkcli.log" 2>&1 | grep -x written)
[ "$got" = written ] || fail "member 4 does not hold /before4"
echo "ok - member 4 serves, with what was written before it joined"
until_ok 15 grep -q "not a member of the ensemble any more" "${dir[3]}/server.log" ||
    fail "member 3 does not say it was removed"
# A session asked of member 3 (ZooKeeper's ConnectRequest, by hand): no answer, the connection
# closed.
got=$(timeout 10 python3 - "${cport[3]}" <<'EOF'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
body = struct.pack(">iqiqi16s?", 0, 0, 10000, 0, 16, bytes(16), False)
s.sendall(struct.pack(">i", len(body)) + body)
try:
    print("answered" if s.recv(64) else "closed")
except (socket.timeout, ConnectionResetError):
    print("closed")
EOF
)
[ "$got" = closed ] || fail "member 3 still gives sessions: $got"
# Its four-letter words say so, as a ZooKeeper server outside the quorum's do.
got=$(four_letter "${cport[3]}" srvr)
[ "$got" = "This ZooKeeper instance is not currently serving requests" ] ||
    fail "member 3's srvr: $got"
echo "ok - member 3 says it was removed and serves nobody, srvr included"
if [ "$led" = 3 ]; then
    grep -q "reconfig: server 3 is no voter in the new configuration: it hands leadership" \
        "${dir[3]}/server.log" || fail "member 3, the leader, did not hand leadership over"
    until_ok 10 grep -q "reconfig: server 3 is among raft's members but not in the configuration" \
        "${dir[1]}/server.log" "${dir[2]}/server.log" "${dir[4]}/server.log" ||
        fail "no member took member 3 out of raft's members"
    echo "ok - member 3, the leader, handed leadership over; the next leader took it out of raft"
fi
echo PASSED
