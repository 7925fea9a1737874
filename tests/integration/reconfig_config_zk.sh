#!/usr/bin/env bash
# What reconfig.sh asserts of /zookeeper/config's stat on tumblerd (checks 1b and 4), asserted of
# Apache ZooKeeper 3.8 itself: a 3-node ensemble (QuorumPeerMain, reconfigEnabled=true, a super
# user) on 127.0.0.1, then zkCli's `reconfig -add` of a 4th node.  On every node, before and
# after, `get -s /zookeeper/config` has the text's "version=V" equal to its mZxid in hex and
# dataVersion -1, the same V everywhere; after the add, V is above the first.  ZooKeeper's first
# V is its first leader's zxid, tumblerd's 0: the one difference, not asserted here.  Before the
# add, config_views.py on every node: exists, getACL and multiRead give getData's stat.
#   reconfig_config_zk.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ $# = 0 ] || it_die "usage: $0"
it_init
work=$(it_tmpdir work)
fail() { echo "FAIL: $*" >&2; exit 1; }

ens_init 4
zk_reconfig_cfg 500
zk() { # MEMBER: zkCli on it, commands from stdin
    { cat; echo quit; } | zkcli "127.0.0.1:${cport[$1]}" "$work/zkcli.log" 2>&1
}
config_stat() { # MEMBER: "version=V mZxid=0xM dataVersion=D"
    printf 'sync /zookeeper/config\nget -s /zookeeper/config\n' | zk "$1" |
        sed -n -e 's/^version=/version=/p' -e 's/^mZxid = /mZxid=/p' -e 's/^dataVersion = /dataVersion=/p' |
        paste -sd ' '
}
# all_stats MEMBER...: V when every member's stat is "version=V mZxid=0xV dataVersion=-1" with
# one V; else fails.
all_stats() {
    local i got v first=""
    for i in "$@"; do
        got=$(config_stat "$i")
        echo "  node $i: $got" >&2
        v=$(sed -n 's/^version=\([0-9a-f]*\) .*/\1/p' <<< "$got")
        [ -n "$v" ] && [ "$got" = "version=$v mZxid=0x$v dataVersion=-1" ] ||
            fail "node $i: not version=V mZxid=0xV dataVersion=-1"
        [ -z "$first" ] || [ "$v" = "$first" ] || fail "node $i has version $v, another $first"
        first=$v
    done
    echo "$first"
}

for i in 1 2 3; do zk_reconfig_start "$i"; done
for i in 1 2 3; do wait_serving "${cport[$i]}" 60 || fail "node $i does not serve"; done
v0=$(all_stats 1 2 3) || exit 1
echo "ok - before any reconfig: version $v0 = mZxid, dataVersion -1 on nodes 1-3"
for i in 1 2 3; do
    /usr/bin/python3 "$here/config_views.py" "127.0.0.1:${cport[$i]}" || fail "node $i's reads differ"
done
zk_reconfig_start 4
wait_serving "${cport[4]}" 60 || fail "node 4 does not serve"
out=$(printf 'addauth digest super:secret\nreconfig -add %s\n' "$(ens_line 4)" | zk 2)
grep -q '^server\.4=' <<< "$out" || fail "reconfig -add: $out"
v1=$(all_stats 1 2 3 4) || exit 1
[ $((16#$v1)) -gt $((16#$v0)) ] || fail "version $v1 after the add is not above $v0"
echo "ok - after reconfig -add: version $v1 = mZxid, dataVersion -1 on nodes 1-4"
echo PASSED
