#!/usr/bin/env bash
# Recovery after losing quorum for good (tumblerd --recover-ensemble):
#   - a 3-server ensemble, made so by a reconfig (a 4th member that never
#     ran removed: /zookeeper/config then names the members, not zoo.cfg),
#     takes acknowledged writes; one member (the
#     laggard) is killed, more writes are acknowledged by the other two,
#     then those are killed too, and the leader's data directory deleted;
#   - refused, each naming why and changing no file: the laggard, whose
#     log is behind the survivor's it is told of; the survivor while its
#     directory is in use (LOCK held); a damaged copy of the survivor's
#     log; the survivor told of a survivor whose log cannot be read;
#   - the survivor recovered into a new ensemble of itself and two new
#     servers, one started from a copy of its directory (the two are a
#     majority), the other, started last, empty with joinEnsemble=true:
#     every write acknowledged before is served by each, new writes are
#     acknowledged, and the joiner catches up on them; zxids keep
#     rising across the recovery; /zookeeper/config names the new
#     members, and none is removed as missing from it; a copy taken
#     after the survivor started is refused;
#   - a copy recovered into a server alone serves every write too;
#   - a copy of the laggard recovered alone (the writes it lacks lost)
#     gives zxids above every one acknowledged before: none again.
#   recover.sh TUMBLERD ACKED_WRITER
set -euo pipefail
tumblerd=("$1") writer=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-recover.XXXXXX")
source "$(dirname "$0")/lib.sh"
declare -A pids=()
holder=""
cleanup() {
    local rc=$?
    crash_kill "${pids[@]}" "$holder"
    [ "$rc" = 0 ] || for f in "$dir"/s*.log; do echo "---- $f"; tail -20 "$f"; done
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT

declare -A cport=() qport=() eport=()
for i in 1 2 3 4 5 6 9; do
    cport[$i]=$(free_port) qport[$i]=$(free_port) eport[$i]=$(free_port)
done
# members.cfg ID...: a zoo.cfg with those members.
members() {
    local i
    echo "tickTime=1000"
    echo "4lw.commands.whitelist=*"
    echo "reconfigEnabled=true"
    echo "DigestAuthenticationProvider.superDigest=$super_digest"
    for i in "$@"; do
        echo "server.$i=127.0.0.1:${qport[$i]}:${eport[$i]};127.0.0.1:${cport[$i]}"
    done
}
# The super user's digest, as ZooKeeper's DigestAuthenticationProvider makes it.
super_digest=$(python3 -c 'import base64, hashlib
print("super:" + base64.b64encode(hashlib.sha1(b"super:secret").digest()).decode())')
members 1 2 3 6 >"$dir/old.cfg"

# start CFG ID [DATADIR]
start() {
    "${tumblerd[@]}" "$1" --serverId="$2" --dataDir="${3:-$dir/d$2}" \
        2>>"$dir/s$2.log" &
    pids[$2]=$!
}
stop() { crash_kill "${pids[$1]}"; unset "pids[$1]"; }
srvr() { printf srvr | nc -q1 127.0.0.1 "${cport[$1]}" 2>/dev/null || true; }
mode() { srvr "$1" | sed -n 's/^Mode: //p'; }
zxid() { srvr "$1" | sed -n 's/^Zxid: //p'; }
# leader ID...: the one of them that says it leads, within 20 s.
leader() {
    local i
    for _ in $(seq 200); do
        for i in "$@"; do
            [ "$(mode "$i")" = leader ] && { echo "$i"; return 0; }
        done
        sleep 0.1
    done
    echo "no leader among $*" >&2
    return 1
}
# same_zxid ID...: their zxids agree, within 10 s.
same_zxid() {
    local z i ok
    for _ in $(seq 100); do
        z=$(zxid "$1") ok=1
        for i in "$@"; do [ -n "$z" ] && [ "$(zxid "$i")" = "$z" ] || ok=0; done
        [ "$ok" = 1 ] && return 0
        sleep 0.1
    done
    echo "zxids differ:"; for i in "$@"; do echo "  $i $(zxid "$i")"; done
    return 1
}
# write FILE PREFIX N ID...: N acknowledged creates through those servers.
write() {
    local file=$1 prefix=$2 n=$3 hosts="" i
    shift 3
    for i in "$@"; do hosts+="${hosts:+,}127.0.0.1:${cport[$i]}"; done
    "$writer" write "$hosts" "$prefix" "$n" >"$file" 2>/dev/null || true
    [ "$(grep -c . "$file")" = "$n" ] || { echo "$prefix: $(grep -c . "$file") of $n acknowledged"; exit 1; }
}
verify() { "$writer" verify "127.0.0.1:${cport[$1]}" <"$2"; }
# kz ID ARG...: kazoo as the super user on server ID runs what follows
# (stdin), with `c` the client and `a` the arguments.
kz() {
    local i=$1
    shift
    /usr/bin/python3 -c 'import sys
from kazoo.client import KazooClient
c = KazooClient(hosts=sys.argv[1], timeout=10)
c.start(timeout=15)
c.add_auth("digest", "super:secret")
a = sys.argv[2:]
exec(sys.stdin.read())
c.stop()' "127.0.0.1:${cport[$i]}" "$@"
}
# config_ids ID: the server ids /zookeeper/config names, read on ID.
config_ids() {
    echo 'd, _ = c.get("/zookeeper/config")
print(" ".join(l.split("=")[0][7:] for l in d.decode().splitlines() if l.startswith("server.")))' |
        kz "$1"
}
# files DIR: every file's checksum but LOCK's (its pid is rewritten).
files() { (cd "$1" && find . -type f ! -name LOCK | sort | xargs md5sum); }
# refused WHAT PATTERN DATADIR ARG...: a recovery that exits 1 saying
# PATTERN and leaves DATADIR's files as they were.
refused() {
    local what=$1 pattern=$2 data=$3 status=0
    shift 3
    files "$data" >"$dir/before"
    timeout 30 "${tumblerd[@]}" --recover-ensemble --dataDir="$data" "$@" \
        >"$dir/out" 2>&1 || status=$?
    [ "$status" = 1 ] && grep -q -- "$pattern" "$dir/out" ||
        { echo "$what: exit $status, expected 1 and \"$pattern\":"; cat "$dir/out"; exit 1; }
    files "$data" | diff "$dir/before" - ||
        { echo "$what: files changed"; exit 1; }
    echo "refused, $what: $(grep -o -- "$pattern.*" "$dir/out" | head -1 | cut -c1-100)"
}

for i in 1 2 3; do start "$dir/old.cfg" "$i"; done
l=$(leader 1 2 3)
echo 'c.reconfig(None, "6", None)' | kz "$l"
[ "$(config_ids "$l")" = "1 2 3" ] ||
    { echo "after reconfig -remove 6: /zookeeper/config names $(config_ids "$l")"; exit 1; }
echo "server 6 removed by reconfig: /zookeeper/config names 1 2 3"
write "$dir/a" /a 300 1 2 3
same_zxid 1 2 3
# The laggard: a follower, killed; the two others take more writes.
lag=$(( l % 3 + 1 )) surv=$(( (l + 1) % 3 + 1 ))
stop "$lag"
write "$dir/b" /b 300 "$l" "$surv"
same_zxid "$l" "$surv"
before=$(zxid "$surv")
stop "$l"
stop "$surv"
rm -rf "${dir:?}/d$l"
echo "server $l (the leader) lost with its data, server $lag behind, server $surv survives"

# Refusals.
members "$lag" 4 5 >"$dir/lag.cfg"
refused "the laggard" "the log in $dir/d$surv goes further" "$dir/d$lag" \
    "$dir/lag.cfg" --serverId="$lag" --survivor="$dir/d$surv"
cp -a "$dir/d$lag" "$dir/lagsolo"
members "$surv" 4 5 >"$dir/new.cfg"
python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "a"); fcntl.lockf(f, fcntl.LOCK_EX); print("locked", flush=True); time.sleep(60)' \
    "$dir/d$surv/LOCK" >"$dir/locked" &
holder=$!
for _ in $(seq 100); do [ -s "$dir/locked" ] && break; sleep 0.05; done
refused "a directory in use" "is in use by another server" "$dir/d$surv" \
    "$dir/new.cfg" --serverId="$surv"
crash_kill "$holder"
holder=""
cp -a "$dir/d$surv" "$dir/damaged"
# A byte changed in the first record of the oldest segment (the newest
# may be one made ready, holding nothing yet).
seg=$(ls "$dir/damaged"/wal-0* | head -1)
printf '\xff' | dd of="$seg" bs=1 seek=100 conv=notrunc status=none
refused "a damaged log" "persisted data is corrupted" "$dir/damaged" \
    "$dir/new.cfg" --serverId="$surv"
refused "a survivor that cannot be read" "cannot be compared" "$dir/d$surv" \
    "$dir/new.cfg" --serverId="$surv" --survivor="$dir/damaged"

# The survivor recovered, told of the laggard (behind it: no refusal), into
# itself and two new servers, 4 and 5; 4 starts from a copy.
cp -a "$dir/d$surv" "$dir/solo"
"${tumblerd[@]}" --recover-ensemble "$dir/new.cfg" --serverId="$surv" \
    --dataDir="$dir/d$surv" --survivor="$dir/d$lag" >"$dir/out" 2>&1 ||
    { echo "recovery failed:"; cat "$dir/out"; exit 1; }
grep "^recover:" "$dir/out"
rm -rf "${dir:?}/d$lag"
cp -a "$dir/d$surv" "$dir/d4"
start "$dir/new.cfg" "$surv"
start "$dir/new.cfg" 4
l=$(leader "$surv" 4)
echo "server $l leads the recovered ensemble"
grep -q "a recovered log, now server 4's" "$dir/s4.log" ||
    { echo "server 4 did not take its copy"; exit 1; }
cat "$dir/a" "$dir/b" >"$dir/acked"
verify "$surv" "$dir/acked"
write "$dir/c" /c 300 "$surv" 4
after=$(zxid "$surv")
[ $(( after )) -gt $(( before )) ] || { echo "zxid $after after the recovery, $before before"; exit 1; }
echo "zxids go on rising: $before before, $after after"
# A copy taken once a member has started on it holds that member's vote.
cp -a "$dir/d$surv" "$dir/late"
status=0
timeout 30 "${tumblerd[@]}" "$dir/new.cfg" --serverId=5 --dataDir="$dir/late" \
    >"$dir/out" 2>&1 || status=$?
[ "$status" = 1 ] && grep -q "is server $surv's, not server 5's" "$dir/out" ||
    { echo "a late copy: exit $status:"; cat "$dir/out"; exit 1; }
echo "refused, a copy of a started member: $(grep -o "is server $surv's, not server 5's" "$dir/out")"
cat "$dir/c" >>"$dir/acked"
# The third new member starts empty and joins: the leader sends it the log.
mkdir "$dir/d5"
"${tumblerd[@]}" "$dir/new.cfg" --serverId=5 --dataDir="$dir/d5" --joinEnsemble=true \
    2>>"$dir/s5.log" &
pids[5]=$!
same_zxid "$surv" 4 5
for i in "$surv" 4 5; do verify "$i" "$dir/acked"; done
echo "servers $surv, 4, 5 serve all $(grep -c . "$dir/acked") acknowledged writes"
want=$(printf '%s\n' "$surv" 4 5 | sort -n | tr '\n' ' ' | sed 's/ $//')
for i in "$surv" 4 5; do
    [ "$(config_ids "$i")" = "$want" ] ||
        { echo "server $i: /zookeeper/config names $(config_ids "$i"), not $want"; exit 1; }
done
if grep -h "not in the configuration" "$dir"/s*.log; then
    echo "a recovered member was removed as missing from /zookeeper/config"; exit 1
fi
echo "/zookeeper/config names $want on each, and no member was removed"

# alone ID DATADIR: DATADIR recovered into server ID alone, which then
# serves on cport[9].
alone() {
    "${tumblerd[@]}" --recover-ensemble "$dir/solo.cfg" --serverId="$1" \
        --dataDir="$2" >"$dir/out" 2>&1 ||
        { echo "$2: recovery alone failed:"; cat "$dir/out"; exit 1; }
    "${tumblerd[@]}" "$dir/solo.cfg" --serverId="$1" --clientPort="${cport[9]}" \
        --dataDir="$2" 2>>"$dir/s9.log" &
    pids[9]=$!
    for _ in $(seq 100); do [ "$(mode 9)" = standalone ] && break; sleep 0.1; done
}
# A copy of the survivor taken before the recovery, into a server alone.
members >"$dir/solo.cfg"
alone "$surv" "$dir/solo"
cat "$dir/a" "$dir/b" >"$dir/acked"
verify 9 "$dir/acked"
echo "a copy recovered into server $surv alone serves all $(grep -c . "$dir/acked")"
# A copy of the laggard recovered alone, as if every other member were
# lost: the writes it lacks were acknowledged, and their zxids (fencing
# tokens among them) are not given again.
stop 9
alone "$lag" "$dir/lagsolo"
write "$dir/d" /d 1 9
lagz=$(zxid 9)
[ $(( lagz )) -gt $(( before )) ] ||
    { echo "the laggard recovered gave zxid $lagz, not above $before, acknowledged before"; exit 1; }
echo "the laggard recovered alone gives zxids above those it lacks: $lagz after, $before before"
# --survivor alone is a mistake, named.
status=0
"${tumblerd[@]}" --survivor="$dir/solo" >"$dir/out" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "only with --recover-ensemble" "$dir/out" ||
    { echo "--survivor alone: exit $status:"; cat "$dir/out"; exit 1; }
echo "1 passed, 0 failed"
