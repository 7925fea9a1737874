#!/usr/bin/env bash
# One name for the whole ensemble: `tumbler -s NAME:PORT`, NAME resolving to the three members'
# addresses (127.0.0.2-4, one client port), as a DNS name for a service's servers does.  The
# client is on the first address; that member stopped (SIGSTOP: connections open, nothing
# answered), the client moves to the next address within its session timeout, its lock kept:
# CMD runs to its end and tumbler exits 0.  (A new lookup at each loss began again with the
# stopped member, whose handshake took a connect timeout more, past the session's end.)
# The name is in a hosts file bound over /etc/hosts in a mount namespace of the client's own:
# root only, else skipped (77).  None is on 127.0.0.1, which the kernel gives every connection
# to 127/8 as its source: a follower's link to the leader leaves from its own address (the
# leader takes links from members' addresses only) because it binds it.  (Unbound, every
# follower's link was refused, and no follower served.)
#   ensemble_names.sh TUMBLER      (TUMBLERD names the server binary)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ $# = 1 ] || it_die "usage: $0 TUMBLER"
tumbler=$1
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
    echo "SKIP: needs root and unshare -m (a hosts file of the client's own)"
    exit 77
fi
it_init
work=$(it_tmpdir work)
name="tumbler-ens.test"

ens_init 3
port=${cport[1]}
# addr I: member I's address.
addr() { echo "127.0.0.$(($1 + 1))"; }
{
    echo "tickTime=1000"
    echo "4lw.commands.whitelist=*"
    for i in 1 2 3; do echo "server.$i=$(addr $i):${qport[$i]}:${eport[$i]};$(addr $i):$port"; done
} > "$work/zoo.cfg"
for i in 1 2 3; do echo "$(addr $i) $name"; done > "$work/hosts"
# In the client's namespace, the hosts file naming them (exec'd: CMD keeps the pid).
named=(unshare -m sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$work/hosts")
# word I WORD: member I's answer to a four-letter word.
word() {
    timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1" && printf %s "$2" >&3 && cat <&3' \
        "$(addr "$1")" "$port" "$2" 2>/dev/null
}
# member_of PID: the member process PID has a connection to (by its address), or nothing.
member_of() {
    local inodes
    inodes=$(ls -l "/proc/$1/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p')
    awk -v inodes="$inodes" -v port="$(printf %04X "$port")" '
        BEGIN { n = split(inodes, a, "\n"); for (i = 1; i <= n; i++) ours[a[i]] = 1 }
        FNR > 1 && $4 == "01" && ($10 in ours) && $3 ~ ("^0[2-4]00007F:" port "$") {
            print substr($3, 2, 1) - 1 }' /proc/net/tcp | head -n 1
}

for i in 1 2 3; do ens_start "$i" "$work/zoo.cfg"; done
# Each makes sessions (knows its leader): else the client's first attempt fails, and it is on
# another address from the start.
for i in 1 2 3; do
    until_ok 30 "$tumbler" -s "$(addr $i):$port" stat / > /dev/null 2>&1 ||
        it_die "member $i makes no session"
done
got=$("${named[@]}" getent ahostsv4 "$name" | awk '$2 == "STREAM" { print $1 }' | tr '\n' ' ')
[ "$got" = "127.0.0.2 127.0.0.3 127.0.0.4 " ] ||
    it_die "$name resolves to '$got' in the client's namespace, not to the three members in order"

tok=$work/token mark=$work/done
"${named[@]}" "$tumbler" -s "$name:$port" --session-timeout 8 lock /names -- \
    sh -c 'echo "$TUMBLER_LOCK_TOKEN" > "$0"; sleep 12; echo done > "$1"' "$tok" "$mark" \
    > "$work/lock.out" 2>&1 &
lk=$!
IT_JOBS+=("$lk")
until_ok 15 test -s "$tok" || it_die "the lock was not taken: $(cat "$work/lock.out")"
k=$(member_of "$lk")
[ "$k" = 1 ] || it_die "tumbler is on member '$k', not on the first address's (1)"
echo "tumbler holds /names through member 1 ($(word 1 srvr | sed -n 's/^Mode: //p')); stopping it"
kill -STOP "${pid[1]}"
passed=0 failed=0
# The session's 8 s: 5.3 s until the connection is given up, then the next address at once.
if until_ok 8 eval 'k=$(member_of "$lk"); [ -n "$k" ] && [ "$k" != 1 ]'; then
    echo "ok: tumbler moved to member $k"; passed=$((passed + 1))
else
    echo "FAIL: tumbler not on another member 8 s after member 1 stopped"; failed=$((failed + 1))
fi
until_ok 20 eval '! running "$lk"'
kill -CONT "${pid[1]}"
wait "$lk"
rc=$?
sed 's/^/  | /' "$work/lock.out"
if [ "$rc" = 0 ] && [ "$(cat "$mark" 2>/dev/null)" = "done" ]; then
    echo "ok: the lock kept, CMD ran to its end, tumbler exited 0"; passed=$((passed + 1))
else
    echo "FAIL: tumbler exited $rc, CMD $([ -s "$mark" ] && echo finished || echo 'did not finish')"
    failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
