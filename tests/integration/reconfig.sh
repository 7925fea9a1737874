#!/usr/bin/env bash
# Membership at run time through ZooKeeper's reconfig request, driven by Apache's zkCli and
# kazoo against a tumblerd ensemble on 127.0.0.1 (reconfigEnabled=true, a super user).  Each
# check is numbered and says what it found; the script fails if any did.
#   1. reconfig from a client that is not the super user: NoAuth, members unchanged
#   2. a 4th server (joinEnsemble, its data directory empty) serves no client before it is added;
#      added with zkCli's `reconfig -add server.4=...`: the answer is the new configuration with
#      its version
#   3. a write through the new member, read back on member 1
#   4. `config` (getConfig) on members 1, 2 and 4 shows server.4 and the same version; `get -s
#      /zookeeper/config` there has ZooKeeper 3.8's stat: mZxid the version the text names,
#      dataVersion -1 (before the first change too, with version 0, and then exists, getACL
#      and multiRead give the same stat as getData, and multiRead the same data)
#   5. kazoo: while a change is in flight (a joiner that does not run, which never catches up),
#      a second is refused with ReconfigInProgress (-14); the first ends in NewConfigNoQuorum
#      (-13) and changes nothing; a change of a member's election port, a joiner at another
#      member's quorum address (staying or leaving in the same change) and a setData of
#      /zookeeper/config are refused with
#      BadArguments (-8); leaving 0 (no server's id) makes a new version of the same servers;
#      a write pipelined behind a reconfig is applied after it
#   6. `reconfig -remove 3`: member 3 leaves; it says why in its log and serves no client any
#      more; `config` on member 1 no longer shows it
#   7. a server with reconfigEnabled=false answers ZRECONFIGDISABLED
#   8. member 1 restarted with the zoo.cfg it started with (servers 1-3): the members its log
#      holds (1, 2, 4) stay, and it takes writes
#   9. kazoo's reconfig with the whole member list (newMembers): server.4 becomes an observer,
#      most runs while it leads (make_lead): the leader made an observer answers, then hands
#      leadership to a voter, which makes it a standby
#  10. server 3 added again at other ports while its removed process still runs: the new one is
#      sent to (raft_uv dialled an id where it first was), catches up and serves
#
#   reconfig.sh   (TUMBLERD names the server)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ $# = 0 ] || it_die "usage: $0"
[ -x "${TUMBLERD:-}" ] || it_die "TUMBLERD is not set to the server binary"
py=/usr/bin/python3
it_init
work=$(it_tmpdir work)

ens_init 5
ens_reconfig_cfg "$work" 3 # zoo.cfg: members 1-3; zoo4.cfg: a joiner

start() {
    local cfg=$work/zoo.cfg
    [ "$1" = 4 ] && cfg=$work/zoo4.cfg
    ens_start "$1" "$cfg"
}
leader() { until_ok 15 find_leader 1 2 3 && echo "$L"; }
# zk MEMBER [super]: zkCli on one member, commands from stdin, waiting for its session;
# output (without the banner) on stdout.
zk() {
    # shellcheck disable=SC2046
    { [ "${2:-}" = super ] && echo "addauth digest super:secret"; cat; echo quit; } |
        run_bounded 60 "${ZK_JAVA:-java}" $(zk_jvm_flags "$work/zkcli.log") \
            -cp "$(zk_classpath)" org.apache.zookeeper.ZooKeeperMain \
            -server "127.0.0.1:${cport[$1]}" -timeout 10000 -waitforconnection 2>&1 |
        grep -v -e '^$' -e '^WATCHER::' -e '^WatchedEvent state:SyncConnected' \
            -e '^Connecting to' -e '^Welcome to ZooKeeper' -e '^JLine support'
}
# config MEMBER: what getConfig shows on it, its server and version lines.
config() { echo config | zk "$1" | grep -e '^server\.' -e '^version='; }
# stat_of OUTPUT: the last `get -s /zookeeper/config` in zkCli's OUTPUT, as
# "version=V mZxid=0xM dataVersion=D".
stat_of() {
    awk '/^version=/ { v = $0 } /^mZxid = / { m = "mZxid=" $3 }
         /^dataVersion = / { d = "dataVersion=" $3 } END { print v, m, d }' <<< "$1"
}
# config_stat MEMBER: `get -s /zookeeper/config` on it, as stat_of gives it.
config_stat() { stat_of "$(echo "get -s /zookeeper/config" | zk "$1")"; }
# ZooKeeper 3.8 on a 3-node ensemble, recorded with zkCli (get -s /zookeeper/config): before any
# reconfig, "version=100000000", mZxid = 0x100000000, dataVersion = -1; after `reconfig -add`
# whose zxid was 0x10000000c, "version=10000000c", mZxid = 0x10000000c, dataVersion = -1, the
# same on every member.  From its source: ZKDatabase.initConfigInZKDatabase sets the node with
# DataTree.setData(CONFIG_NODE, qv.toString(), -1, qv.getVersion(), ...), and
# PrepRequestProcessor logs a reconfig as new SetDataTxn(CONFIG_NODE, ..., -1) with the version
# the txn's zxid; DataTree.setData stores the version it is given.  So: the text's version is the
# mZxid in hex, the dataVersion always -1.  ZooKeeper's first version is its first leader's
# zxid (epoch 1, counter 0); tumblerd's members from zoo.cfg have version 0 (no zxid made them).
config_stat_ok() { # STAT [VERSION]: STAT is ZooKeeper's shape, of VERSION if given
    local v
    v=$(sed -n 's/^version=\([0-9a-f]*\) .*/\1/p' <<< "$1")
    [ -n "$v" ] && [ "$1" = "version=$v mZxid=0x$v dataVersion=-1" ] &&
        { [ -z "${2:-}" ] || [ "$v" = "$2" ]; }
}

# serves MEMBER: "no session" when kazoo cannot open one on it (4 s), else what it reads.
serves() {
    "$py" - "127.0.0.1:${cport[$1]}" <<'EOF' 2>/dev/null
import sys
from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError
c = KazooClient(hosts=sys.argv[1], timeout=4, connection_retry={"max_tries": 2})
try:
    c.start(timeout=4)
    print("served: /zookeeper has", c.get_children("/zookeeper"))
    c.stop()
except KazooTimeoutError:
    print("no session")
EOF
}

# settled MEMBER: a write through it acknowledged, so a leader it follows (or it, leading) has
# applied an entry of its own term: until then a reconfig is answered ReconfigInProgress (a new
# leader may not have applied the last change's outcome yet).
settled() {
    "$py" - "127.0.0.1:${cport[$1]}" <<'EOF' > /dev/null 2>&1
import sys
from kazoo.client import KazooClient
c = KazooClient(hosts=sys.argv[1], timeout=10)
c.start(timeout=15)
c.create("/settled", ephemeral=True)
c.stop()
EOF
}

passed=0 failed=0 results=()
run_check() {
    local n=$1 title=$2 fn=$3 t0=$SECONDS
    echo "--- check $n: $title"
    if "$fn"; then
        passed=$((passed + 1))
        results+=("ok $n - $title ($((SECONDS - t0)) s)")
    else
        failed=$((failed + 1))
        results+=("FAIL $n - $title")
    fi
    echo "${results[-1]}"
}

for i in 1 2 3; do start "$i"; done
for i in 1 2 3; do
    wait_serving "${cport[$i]}" 20 "${pid[$i]}" || it_die "member $i did not start"
done
l=$(leader) || it_die "no member leads"
echo "3 members, member $l leads"
start 4
for n in $(seq 100); do four_letter "${cport[4]}" ruok | grep -q imok && break; sleep 0.1; done

check1() {
    local out
    out=$(echo "reconfig -remove 3" | zk 1)
    echo "$out" | sed 's/^/  | /'
    echo "$out" | grep -q -i -e 'NoAuth' -e 'Insufficient permission' ||
        { echo "  FAIL: expected NoAuth"; return 1; }
    [ "$(config 1 | grep -c '^server\.')" = 3 ] || { echo "  FAIL: members changed"; return 1; }
}
run_check 1 "reconfig by a client that is not the super user: NoAuth" check1

check1b() {
    local i got rc=0
    for i in 1 2 3; do
        got=$(config_stat "$i")
        echo "  member $i: $got"
        config_stat_ok "$got" 0 || { echo "  FAIL: not version=0 mZxid=0x0 dataVersion=-1"; rc=1; }
        got=$(run_bounded 30 "$py" "$here/config_views.py" "127.0.0.1:${cport[$i]}" 2>&1) || rc=1
        echo "  member $i: $got"
    done
    return "$rc"
}
run_check 1b "before any change, /zookeeper/config's stat as ZooKeeper's: version 0, dataVersion -1" check1b

version4=""
check2() {
    local out
    # Before it is added, the joiner serves nobody: what it holds is not the ensemble's.
    grep "joining: no clients" "${dir[4]}/server.log" | sed 's/^/  member 4 log: /'
    grep -q "joining: no clients" "${dir[4]}/server.log" ||
        { echo "  FAIL: member 4 does not say it is joining"; return 1; }
    serves 4 | grep -qx "no session" || { echo "  FAIL: member 4 serves before it joined"; return 1; }
    out=$(echo "reconfig -add $(ens_line 4)" | zk 2 super)
    echo "$out" | sed 's/^/  | /'
    echo "$out" | grep -q "^server.4=127.0.0.1:${qport[4]}:${eport[4]}:participant;127.0.0.1:${cport[4]}$" ||
        { echo "  FAIL: the answer does not show server.4"; return 1; }
    version4=$(echo "$out" | sed -n 's/^version=//p')
    [ -n "$version4" ] && [ "$version4" != 0 ] || { echo "  FAIL: no version"; return 1; }
    grep -q "member 4 added" "${dir[$l]}/server.log" ||
        { echo "  FAIL: the leader's log does not show member 4 added"; return 1; }
    echo "  ok   server.4 joined, configuration version $version4"
}
run_check 2 "zkCli reconfig -add server.4 (a joiner with an empty data directory)" check2

check3() {
    local got
    echo "create /via4 joined" | zk 4 | sed 's/^/  member 4: /'
    got=$(printf 'sync /via4\nget /via4\n' | zk 1 | grep -x joined)
    [ "$got" = joined ] || { echo "  FAIL: /via4 on member 1: '$got'"; return 1; }
    echo "  ok   created through member 4, read on member 1"
}
run_check 3 "a write through the new member" check3

# quorum_size_is I N: member I's mntr says zk_quorum_size N.
quorum_size_is() {
    four_letter "${cport[$1]}" mntr | grep -qx "zk_quorum_size.$2"
}

# conf_members_are I N VERSION: member I's conf has N servers after "membership:", then
# version=VERSION, as ZooKeeper's prints the configuration it applied.
conf_members_are() {
    local m
    m=$(four_letter "${cport[$1]}" conf |
        awk '/^membership: $/ { on = 1; next } on { print } on && /^version=/ { exit }')
    [ "$(grep -c '^server\.' <<< "$m")" = "$2" ] && grep -qx "version=$3" <<< "$m"
}

check4() {
    local i got out rc=0
    for i in 1 2 4; do
        # One session: getConfig's text (up to its version line), then the node's stat.
        out=$(printf 'config\nget -s /zookeeper/config\n' | zk "$i")
        got=$(awk '/^server\./ { print } /^version=/ { print; exit }' <<< "$out")
        echo "$got" | sed "s/^/  member $i: /"
        [ "$(echo "$got" | grep -c '^server\.')" = 4 ] && echo "$got" | grep -q '^server\.4=' &&
            echo "$got" | grep -qx "version=$version4" || { echo "  FAIL on member $i"; rc=1; }
        got=$(stat_of "$out")
        echo "  member $i: $got"
        config_stat_ok "$got" "$version4" ||
            { echo "  FAIL: want version=$version4 mZxid=0x$version4 dataVersion=-1"; rc=1; }
        # mntr follows the configuration applied, not the server.N lines it started with
        until_ok 5 quorum_size_is "$i" 4 ||
            { echo "  FAIL: member $i's zk_quorum_size is not 4"; rc=1; }
        until_ok 5 conf_members_are "$i" 4 "$version4" ||
            { echo "  FAIL: member $i's conf does not show the four servers"; rc=1; }
    done
    return "$rc"
}
run_check 4 "config and its stat on members 1, 2 and 4: four servers, version $version4" check4

check5() {
    local out
    out=$("$py" - "127.0.0.1:${cport[1]}" "$(ens_line 5)" \
        "server.2=127.0.0.1:${qport[2]}:$((eport[2] + 1));127.0.0.1:${cport[2]}" \
        "server.5=127.0.0.1:${qport[3]}:${eport[5]};127.0.0.1:${cport[5]}" <<'EOF' 2>&1
import sys
from kazoo.client import KazooClient
from kazoo.exceptions import (BadArgumentsError, NewConfigNoQuorumError,
                              ReconfigInProcessError)
# The session's replies come in order, its pings' too: they wait for the first change, which
# takes raft's 5 s round; kazoo drops a connection whose ping is not answered within a third
# of the session timeout, so the session is the longest the ensemble allows (20 ticks).
c = KazooClient(hosts=sys.argv[1], timeout=20)
c.start(timeout=15)
c.add_auth("digest", "super:secret")
first = c.reconfig_async(sys.argv[2], None, None, -1)
try:
    c.reconfig(None, "3", None)
    print("FAIL: the second change was accepted")
except ReconfigInProcessError:
    print("second change while one is in flight: ReconfigInProcessError")
try:
    first.get(timeout=30)
    print("FAIL: a joiner that does not run was added")
except NewConfigNoQuorumError:
    print("the first (server.5, not running): NewConfigNoQuorumError")
data, _ = c.get("/zookeeper/config")
print("server.5 in the configuration:", b"server.5=" in data)
# A member's election port, where the others' links go, changes only by leaving and joining
# again; the configuration's text is reconfig's alone to write.
try:
    c.reconfig(sys.argv[3], None, None)
    print("FAIL: server.2's election port changed")
except BadArgumentsError:
    print("server.2's election port changed: BadArgumentsError")
try:
    c.set("/zookeeper/config", data.replace(b"server.3=", b"server.7="))
    print("FAIL: /zookeeper/config written")
except BadArgumentsError:
    print("setData of /zookeeper/config: BadArgumentsError")
# A joiner given another member's quorum address: refused before anything changes.
try:
    c.reconfig(sys.argv[4], None, None)
    print("FAIL: a joiner at server.3's quorum address was added")
except BadArgumentsError:
    print("a joiner at server.3's quorum address: BadArgumentsError")
# ... or at the quorum address of a member that leaves in the same change (raft has no two
# members at one address, and a leaver goes only after the outcome): remove, then add.
try:
    c.reconfig(sys.argv[4], "3", None)
    print("FAIL: a joiner at a leaver's quorum address was added")
except BadArgumentsError:
    print("a joiner at the quorum address of server.3, leaving: BadArgumentsError")
print("unchanged:", c.get("/zookeeper/config")[0] == data)
# As ZooKeeper's, an id no server has leaves nothing: a new version, the same servers.
new, _ = c.reconfig(None, "0", None)
servers = lambda d: [l for l in d.split(b"\n") if l.startswith(b"server.")]
print("leaving 0: the same servers:", servers(new) == servers(data) and new != data)
# A write sent right behind a reconfig, before its answer, is applied after
# it, as ZooKeeper's zxid order has it (the outcome is logged only once
# raft's members have changed).
c.ensure_path("/behind")
r = c.reconfig_async(None, "0", None, -1)
w = c.set_async("/behind", b"x")
_, cstat = r.get(timeout=30)
wstat = w.get(timeout=30)
print("a write behind a reconfig applied after it:", wstat.mzxid > cstat.mzxid,
      hex(cstat.mzxid), hex(wstat.mzxid))
c.stop()
EOF
)
    echo "$out" | sed 's/^/  | /'
    echo "$out" | grep -q "ReconfigInProcessError" && echo "$out" | grep -q "NewConfigNoQuorumError" &&
        echo "$out" | grep -q "in the configuration: False" &&
        echo "$out" | grep -q "election port changed: BadArgumentsError" &&
        echo "$out" | grep -q "zookeeper/config: BadArgumentsError" &&
        echo "$out" | grep -q "quorum address: BadArgumentsError" &&
        echo "$out" | grep -q "server.3, leaving: BadArgumentsError" &&
        echo "$out" | grep -q "unchanged: True" &&
        echo "$out" | grep -q "leaving 0: the same servers: True" &&
        echo "$out" | grep -q "behind a reconfig applied after it: True" && ! echo "$out" | grep -q FAIL
}
run_check 5 "kazoo: a second change while one is in flight is refused (-14); an election port's change and a setData of /zookeeper/config are refused (-8)" check5

check6() {
    local out n got
    # Member 2 (never restarted here) removes 3, and so has had a connection to it: check 10
    make_lead 2 1 2 3 4 || { echo "  FAIL: no member leads"; return 1; }
    until_ok 15 settled 2 || { echo "  FAIL: member 2 takes no write"; return 1; }
    out=$(echo "reconfig -remove 3" | zk 1 super)
    echo "$out" | sed 's/^/  | /'
    echo "$out" | grep -q '^server\.3=' && { echo "  FAIL: server.3 still there"; return 1; }
    echo "$out" | grep -q '^server\.4=' || { echo "  FAIL: no answer"; return 1; }
    for n in $(seq 100); do
        grep -q "not a member of the ensemble any more" "${dir[3]}/server.log" && break
        sleep 0.1
    done
    grep "not a member" "${dir[3]}/server.log" | sed 's/^/  member 3 log: /'
    grep -q "not a member of the ensemble any more" "${dir[3]}/server.log" ||
        { echo "  FAIL: member 3 does not say it was removed"; return 1; }
    out=$(serves 3)
    echo "$out" | sed 's/^/  member 3: /'
    [ "$out" = "no session" ] || { echo "  FAIL: member 3 still serves"; return 1; }
    echo "  ok   member 3 serves no client"
    got=$(config 1)
    echo "$got" | sed 's/^/  member 1: /'
    [ "$(echo "$got" | grep -c '^server\.')" = 3 ] && ! echo "$got" | grep -q '^server\.3=' ||
        { echo "  FAIL: member 1's config"; return 1; }
    until_ok 5 quorum_size_is 1 3 || { echo "  FAIL: member 1's zk_quorum_size is not 3"; return 1; }
}
run_check 6 "zkCli reconfig -remove 3: member 3 stops serving, config follows" check6

check7() {
    local d p out
    d=$(it_tmpdir standalone)
    p=${cport[5]}
    start_tumblerd "$d" "$p"
    wait_serving "$p" 20 "$SERVER_PID" || return 1
    # shellcheck disable=SC2046
    out=$(echo "reconfig -remove 3" | run_bounded 60 "${ZK_JAVA:-java}" \
        $(zk_jvm_flags "$work/zkcli.log") -cp "$(zk_classpath)" \
        org.apache.zookeeper.ZooKeeperMain -server "127.0.0.1:$p" -waitforconnection 2>&1)
    echo "$out" | grep -i -e 'reconfig' | grep -v '^\[' | sed 's/^/  | /'
    echo "$out" | grep -q -i 'Reconfig is disabled' || { echo "  FAIL: expected ZRECONFIGDISABLED"; return 1; }
}
run_check 7 "reconfigEnabled=false: ZRECONFIGDISABLED" check7

check8() {
    local got n status=0
    kill -TERM "${pid[1]}"
    for n in $(seq 200); do running "${pid[1]}" || break; sleep 0.05; done
    wait "${pid[1]}" 2>/dev/null
    # Given no server.N lines, on that log (its members changed at run
    # time): refused, not a standalone start on an ensemble's state.
    timeout 20 "$TUMBLERD" --clientPort="$(free_port)" --serverId=1 \
        --dataDir="${dir[1]}/data" > "$work/alone.log" 2>&1 < /dev/null || status=$?
    if [ "$status" != 1 ] || ! grep -q "the log belongs to an ensemble" "$work/alone.log"; then
        echo "  FAIL: a standalone start on member 1's log (status $status):"
        sed 's/^/  | /' "$work/alone.log"
        return 1
    fi
    echo "  ok   no standalone start on member 1's log: $(grep -o 'the log belongs to an ensemble.*' "$work/alone.log")"
    start 1
    wait_serving "${cport[1]}" 20 "${pid[1]}" || return 1
    grep "in the log, changed at run time" "${dir[1]}/server.log" | sed 's/^/  member 1 log: /'
    # Its zoo.cfg's lines (servers 1-3) differ from the log's (1, 2, 4):
    # said in a warning, which names the way for a server they add.
    grep -q "WARN .*changed at run time: they hold, not the server.N lines, which differ" \
        "${dir[1]}/server.log" ||
        { echo "  FAIL: no warning that member 1's server.N lines differ from its log's"; return 1; }
    got=$(config 1)
    echo "$got" | sed 's/^/  member 1: /'
    echo "$got" | grep -q '^server\.4=' && ! echo "$got" | grep -q '^server\.3=' ||
        { echo "  FAIL: member 1's config after the restart"; return 1; }
    got=$(printf 'create /after1 x\nget /after1\n' | zk 1 | grep -x x)
    [ "$got" = x ] || { echo "  FAIL: no write through member 1 after the restart"; return 1; }
    echo "  ok   member 1 back with servers 1, 2 and 4; a write through it"
}
run_check 8 "member 1 restarted with its first zoo.cfg: the members the log holds stay; without server.N lines, refused" check8

# Check 9 makes the leader itself an observer: member 4 leads, most likely (make_lead), and the
# check passes whoever leads.
check9() {
    local out
    make_lead 4 1 2 4 || { echo "  FAIL: no member leads"; return 1; }
    until_ok 15 settled "$L" || { echo "  FAIL: member $L takes no write"; return 1; }
    echo "  member $L leads"
    local led=$L
    out=$("$py" - "127.0.0.1:${cport[2]}" "$(ens_line 1),$(ens_line 2),$(ens_line 4 | sed 's/;/:observer;/')" <<'EOF' 2>&1
import sys
from kazoo.client import KazooClient
c = KazooClient(hosts=sys.argv[1], timeout=10)
c.start(timeout=15)
c.add_auth("digest", "super:secret")
data, stat = c.reconfig(None, None, sys.argv[2])
print(data.decode())
c.stop()
EOF
)
    echo "$out" | sed 's/^/  | /'
    echo "$out" | grep -q "^server.4=127.0.0.1:${qport[4]}:${eport[4]}:observer;" ||
        { echo "  FAIL: server.4 is no observer"; return 1; }
    until_ok 10 grep -q "member 4: becoming a standby" "${dir[1]}/server.log" "${dir[2]}/server.log" \
        "${dir[4]}/server.log" ||
        { echo "  FAIL: raft's role of member 4 did not change"; return 1; }
    # Member 4, made an observer while it led, handed leadership to a voter, which made it a
    # standby: a leader never takes its own vote away.
    until_ok 15 find_leader 1 2 || { echo "  FAIL: neither member 1 nor 2 leads"; return 1; }
    echo "  member $L leads"
    if [ "$led" = 4 ]; then
        grep -q "reconfig: server 4 is no voter in the new configuration: it hands leadership" \
            "${dir[4]}/server.log" || { echo "  FAIL: member 4 did not hand leadership over"; return 1; }
        until_ok 10 grep -q "reconfig: server 4 is a voter in raft's members but an observer in the configuration .*: making it a standby" \
            "${dir[$L]}/server.log" || { echo "  FAIL: member $L did not make member 4 a standby"; return 1; }
        echo "  ok   member 4 handed leadership to member $L, which made it a standby"
    fi
    config 4 | grep -q "^server.4=.*:observer;" || { echo "  FAIL: config on member 4"; return 1; }
    echo "  ok   server.4 is an observer: a standby in raft"
}
run_check 9 "kazoo reconfig with the whole member list: server.4 becomes an observer" check9

# Server 3, removed in check 6, its process still running, added again at other ports (as the
# refusal of an address change says to): the members send to the new one, not to the old process
# at the address they first had for server 3 (which would take the entries and leave the new one
# empty).
# old_links: connections established to server 3's first quorum port (raft's, of the members).
old_links() { ss -Htn state established "( dport = :${qport[3]} )" | grep -c .; }
check10() {
    local d line out p3 before
    cport[6]=$(free_port) qport[6]=$(free_port) eport[6]=$(free_port)
    line="server.3=127.0.0.1:${qport[6]}:${eport[6]};127.0.0.1:${cport[6]}"
    d=$(it_tmpdir three-again)
    { grep -v '^server\.' "$work/zoo.cfg"; config 1 | grep '^server\.'; echo "$line"
      echo "joinEnsemble=true"; } > "$d/zoo.cfg"
    "$TUMBLERD" "$d/zoo.cfg" --serverId=3 --dataDir="$d/data" >> "$d/server.log" 2>&1 < /dev/null &
    p3=$!
    IT_PIDS+=("$p3")
    IT_TUMBLERDS+="$p3 "
    kill -0 "${pid[3]}" || { echo "  FAIL: server 3's old process is gone"; return 1; }
    before=$(old_links)
    out=$(echo "reconfig -add $line" | zk 1 super)
    echo "  | ${out//$'\n'/$'\n'  | }"
    echo "$out" | grep -q "^server\.3=127.0.0.1:${qport[6]}:" || { echo "  FAIL: not added"; return 1; }
    wait_serving "${cport[6]}" 30 "$p3" ||
        { echo "  FAIL: the new server 3 does not serve"; tail -5 "$d/server.log"; return 1; }
    out=$(serves 6)
    echo "  new member 3: $out"
    [ "$out" != "no session" ] || { echo "  FAIL: the new member 3 serves no session"; return 1; }
    [ "$(serves 3)" = "no session" ] || { echo "  FAIL: the old member 3 serves"; return 1; }
    # Member 2, which led when 3 was removed, had a connection to it (raft_uv keeps one per id,
    # and dialled the id where it first was): those to the old address end.
    echo "  connections to server 3's old quorum port: $before before the add"
    until_ok 10 test "$(old_links)" = 0 ||
        { echo "  FAIL: $(old_links) connection(s) to the old server 3 left"; return 1; }
}
run_check 10 "server 3 added again at other ports, its old process running: the new one is sent to and serves" check10

echo
printf '%s\n' "${results[@]}"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
