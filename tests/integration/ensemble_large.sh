#!/usr/bin/env bash
# A node larger than 64 MiB written through a follower: jute.maxbuffer is 100 MB on three
# tumblerd members, and tumblerd_limits' large_node case (67,200,000 bytes created, then read
# back whole) runs against a follower, which forwards the create to the leader in one peer
# frame of that size.  The election timeout is long because this machine's disk takes about a
# second over such an entry (seconds under the sanitizers, with other tests running).
#   ensemble_large.sh TUMBLERD_LIMITS      (TUMBLERD names the server binary)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ $# = 1 ] || it_die "usage: $0 TUMBLERD_LIMITS"
it_init
work=$(it_tmpdir work)

ens_init 3
{
    echo "4lw.commands.whitelist=*"
    echo "jute.maxbuffer=100000000"
    echo "electionTimeout=5000"
    for i in 1 2 3; do ens_line "$i"; done
} > "$work/zoo.cfg"
for i in 1 2 3; do ens_start "$i" "$work/zoo.cfg"; done
until_ok 60 find_leader 1 2 3 || it_die "no leader"
f=$(( L % 3 + 1 ))
until_ok 30 test "$(member_mode "$f")" = follower || it_die "member $f does not follow"
echo "member $L leads; the node goes through member $f"
run_bg 120 "$1" "127.0.0.1:${cport[$f]}" large_node
wait "$BG_PID" || it_die "large_node through follower $f failed"
for i in 1 2 3; do
    ! grep "a frame of" "${dir[$i]}/server.log" || it_die "member $i closed a peer link"
done
echo "1 passed, 0 failed"
