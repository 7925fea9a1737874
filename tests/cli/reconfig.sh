#!/usr/bin/env bash
# tumbler config and tumbler reconfig:  reconfig.sh KIND TUMBLER
#
# KIND "tumblerd" (needs TUMBLERD) or "zk" (Apache ZooKeeper 3.8's
# QuorumPeerMain): three members with reconfigEnabled=true and a super
# user (tests/integration/lib.sh's ens_reconfig_cfg and zk_reconfig_cfg),
# then a fourth started to join.  config: the three server lines and
# version=V, V the hex of the node's mZxid (-s), the same through a
# chroot, --json.  reconfig: refused without the super user (102); --add of
# the fourth: its line in the answer, a version above the first, and every
# member's config the same soon after; --remove with the first version
# refused (103); then the removal done by --file - (config's output less
# the fourth, on stdin) at the current version (the fourth gone, the
# version above again).  Bad command lines: 64, and an unreadable --file
# 66, before any connection.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=kind.sh
source "$here/kind.sh"
# version OUT: the V of OUT's version=V line.
version() { sed -n 's/^version=//p' <<< "$1"; }
# members OUT: OUT's server.N ids, in order, on one line.
members() { sed -n 's/^server\.\([0-9]*\)=.*/\1/p' <<< "$1" | paste -sd ' '; }
# above A B: hex A is above hex B.
above() { [ -n "$1" ] && [ $((16#$1)) -gt $((16#$2)) ]; }
super=(-a digest:super:secret)

# ---- bad command lines: 64, nothing on stdout, no server needed ----
nobody=127.0.0.1:$(free_port)
for bad in "" "-r 4 -m server.1=h:1:2" "-a dd" "-a server.4" "-r x" "-r 4, " "-v zz -r 4" "-v -1 -r 4" "-r 4 extra" \
    "-v ffffffffffffffff -r 4" "-v 10000000000000000 -r 4" "-v 8000000000000000 -r 4" "-v +1 -r 4"; do
    # shellcheck disable=SC2086
    out=$(tb -s "$nobody" reconfig $bad 2> /dev/null)
    check_eq "reconfig $bad: status" 64 "$?"
    check_eq "reconfig $bad: nothing on stdout" "" "$out"
done
check_eq "config x: status" 64 "$(tb -s "$nobody" config x > /dev/null 2>&1; echo $?)"
files=$IT_TMPROOT/files
mkdir -p "$files"
printf '# members\nversion=100000000\n\n' > "$files/none"
printf 'server.1=127.0.0.1:1:2;3\nclientPort=3\n' > "$files/other"
printf 'server.1=127.0.0.1:1:2;3\n' > "$files/one"
for bad in "-f $files/none" "-f $files/other" "-f $files/one -r 2" "-f $files/one -m server.1=h:1:2"; do
    # shellcheck disable=SC2086
    out=$(tb -s "$nobody" reconfig $bad 2> /dev/null)
    check_eq "reconfig $bad: status" 64 "$?"
    check_eq "reconfig $bad: nothing on stdout" "" "$out"
done
check_eq "reconfig -f (missing): status" 66 \
    "$(tb -s "$nobody" reconfig -f "$files/missing" > /dev/null 2>&1; echo $?)"

# ---- three members, a fourth to join ----
ens_init 4
if [ "$kind" = tumblerd ]; then
    ens_reconfig_cfg "$IT_TMPROOT" 3
    for i in 1 2 3; do ens_start "$i" "$IT_TMPROOT/zoo.cfg"; done
    for i in 1 2 3; do wait_serving "${cport[$i]}" 60 "${pid[$i]}" || fail "member $i does not serve"; done
else
    zk_reconfig_cfg 500
    for i in 1 2 3; do zk_reconfig_start "$i"; done
    for i in 1 2 3; do wait_serving "${cport[$i]}" 60 || fail "member $i does not serve"; done
fi
m() { echo "127.0.0.1:${cport[$1]}"; }

out=$(tb -s "$(m 1)" config -s)
check_eq "config: status" 0 "$?"
check_eq "config: the members" "1 2 3" "$(members "$out")"
v0=$(version "$out")
check_match "config: a version" '^[0-9a-f]+$' "$v0"
check_eq "config -s: version is mZxid" "0x$v0" "$(sed -n 's/^mZxid = //p' <<< "$out")"
check_eq "config through a chroot" "$(tb -s "$(m 1)" config)" "$(tb -s "$(m 1)/some/chroot" config)"
out=$(tb -s "$(m 1)" --json config)
check_eq "config --json" "/zookeeper/config 1 2 3 0x$v0" \
    "$(python3 -c 'import json, re, sys
d = json.loads(sys.argv[1])
ids = re.findall(r"^server\.(\d+)=", d["data"], re.M)
print(d["path"], " ".join(ids), "0x%x" % d["stat"]["mzxid"])' "$out")"

# ---- reconfig ----
if [ "$kind" = tumblerd ]; then
    ens_start 4 "$IT_TMPROOT/zoo4.cfg"
    # a joiner takes no client before it is added: ruok alone
    # shellcheck disable=SC2016 # eval expands it
    until_ok 30 eval '[ "$(four_letter "${cport[4]}" ruok)" = imok ]' || fail "member 4 not up"
else
    zk_reconfig_start 4
    wait_serving "${cport[4]}" 60 || fail "member 4 does not serve"
fi
add=$(ens_line 4)
tb -s "$(m 2)" reconfig -a "$add" > /dev/null 2>&1
check_eq "reconfig without the super user: status" 102 "$?"

out=$(tb "${super[@]}" -s "$(m 2)" reconfig -a "$add")
check_eq "reconfig --add: status" 0 "$?"
check_eq "reconfig --add: the members it answers" "1 2 3 4" "$(members "$out")"
v1=$(version "$out")
above "$v1" "$v0" || fail "version $v1 after the add is not above $v0"
for i in 1 2 3 4; do
    # shellcheck disable=SC2016 # eval expands it
    until_ok 20 eval '[ "$(version "$(tb -s "$(m $i)" config)")" = "$v1" ]' ||
        fail "member $i: config not at version $v1: $(tb -s "$(m "$i")" config | paste -sd ' ')"
done
check_eq "config on the new member" "1 2 3 4" "$(members "$(tb -s "$(m 4)" config)")"

out=$(tb "${super[@]}" -s "$(m 3)" reconfig -v "$v0" -r 4 2> /dev/null)
check_eq "reconfig -v (stale): status" 103 "$?"
out=$(tb -s "$(m 3)" config | grep -v '^server\.4=' |
    tb "${super[@]}" -s "$(m 3)" reconfig -s -v "0x$v1" -f -)
check_eq "reconfig -v (current) --file - (config less 4): status" 0 "$?"
check_eq "reconfig --file: the members it answers" "1 2 3" "$(members "$out")"
v2=$(version "$out")
above "$v2" "$v1" || fail "version $v2 after the removal is not above $v1"
check_eq "reconfig -s: version is mZxid" "0x$v2" "$(sed -n 's/^mZxid = //p' <<< "$out")"

[ "$FAILS" = 0 ] || { echo "$FAILS check(s) failed" >&2; exit 1; }
echo "config and reconfig: all checks passed against $kind"
