#!/usr/bin/env bash
# A running ensemble of three moved to peer TLS one member at a time, with no stop of service,
# as ZooKeeper's portUnification allows, while a client writes without pause through all three:
#   1. the members on plain connections;
#   2. each restarted with portUnification=true and its stores: it takes TLS and plain
#      connections, and still makes plain ones;
#   3. each restarted with sslQuorum=true as well: it makes TLS connections, and still takes the
#      plain ones of the members not yet restarted;
#   4. each restarted with sslQuorum=true alone.
# After every restart (SIGTERM: a leader hands over) the member serves at the zxid the leader had
# when it came back, so it speaks with the other two, whatever they are at; at the end every
# acknowledged create is on every member, and the quorum port answers plain bytes with a TLS
# alert only.  Then the way back: portUnification=true on the three with sslQuorum still true,
# then sslQuorum=false, then portUnification off, each step member by member, and the writes
# checked again.  portUnification without a key store is refused at start-up.
#   peer_tls_migrate.sh TUMBLER      (TUMBLERD names the server binary)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ $# = 1 ] || it_die "usage: $0 TUMBLER"
tumbler=$1
it_init
work=$(it_tmpdir work)
certs=$work/certs
"$here/tls/mkcerts.sh" "$certs" > /dev/null || it_die "cannot make the test certificates"
passed=0
fail() { echo "FAIL: $*"; exit 1; }
ok() { passed=$((passed + 1)); echo "ok - $* (${SECONDS}s)"; }

ens_init 3
{
    echo "tickTime=1000"
    echo "4lw.commands.whitelist=*"
    for i in 1 2 3; do ens_line "$i"; done
} > "$work/zoo.cfg"
stores=(--ssl.quorum.keyStore.location="$certs/server.p12" --ssl.quorum.keyStore.password=secret
    --ssl.quorum.trustStore.location="$certs/trust.p12" --ssl.quorum.trustStore.password=secret)
hosts="127.0.0.1:${cport[1]},127.0.0.1:${cport[2]},127.0.0.1:${cport[3]}"
zxid() { four_letter "${cport[$1]}" srvr | sed -n 's/^Zxid: //p'; }

for i in 1 2 3; do ens_start "$i" "$work/zoo.cfg"; done
until_ok 30 find_leader 1 2 3 || fail "no leader"
ok "plain: leader $L"

# The writer: one create after another through any member, each acknowledged one recorded.
touch "$work/acked"
(
    k=0
    while [ ! -e "$work/stop" ]; do
        k=$((k + 1))
        timeout 20 "$tumbler" -s "$hosts" --connect-timeout 10 create "/w$k" x > /dev/null 2>&1 &&
            echo "/w$k" >> "$work/acked"
    done
) &
writer=$!
IT_JOBS+=("$writer")
acked() { grep -c . "$work/acked"; }
more_acked() { [ "$(acked)" -gt "$1" ]; }                         # N: more than N so far
at_least() { local z; z=$(zxid "$1") && [ -n "$z" ] && [ $((z)) -ge $(($2)) ]; } # I ZXID

# restart I ARG...: member I stopped (SIGTERM, exit 0) and started with ARGs, then serving at
# the leader's zxid of that moment within 30 s, and a create acknowledged since.
restart() {
    local i=$1 target before
    shift
    stop_server "${pid[$i]}"
    [ "$STOP_STATUS" = 0 ] || fail "member $i exited $STOP_STATUS on SIGTERM"
    ens_start "$i" "$work/zoo.cfg" "$@"
    until_ok 30 find_leader 1 2 3 || fail "no leader after member $i restarted"
    target=$(zxid "$L")
    until_ok 30 at_least "$i" "$target" ||
        fail "member $i does not serve at zxid $target 30 s after its restart ($*): $(tail -5 "${dir[$i]}/server.log")"
    before=$(acked)
    until_ok 30 more_acked "$before" || fail "no create acknowledged after member $i restarted"
}
# step NAME ARG...: the three restarted with ARGs, one after the other.
step() {
    local name=$1 i
    shift
    for i in 1 2 3; do restart "$i" "$@"; done
    ok "$name: the three restarted one at a time, each serving at the leader's zxid ($(acked) creates acknowledged so far)"
}
# all_there: every acknowledged create on every member.  The creates acknowledged so far are
# taken first, then the leader's zxid, which they are all at or below: the writer goes on, and a
# create a majority has taken may not be on the third member yet.
all_there() {
    local i missing target
    sort "$work/acked" > "$work/acked.sorted"
    until_ok 30 find_leader 1 2 3 || fail "no leader"
    target=$(zxid "$L")
    for i in 1 2 3; do
        until_ok 30 at_least "$i" "$target" || fail "member $i does not catch up"
        missing=$(run_bounded 30 "$tumbler" -s "127.0.0.1:${cport[$i]}" ls / |
            sed 's|^|/|' | sort | comm -13 - "$work/acked.sorted" | head -3)
        [ -z "$missing" ] || fail "member $i lacks acknowledged creates: $missing"
    done
    ok "$1: the $(grep -c . "$work/acked.sorted") acknowledged creates are on every member"
}

step "portUnification" --portUnification=true "${stores[@]}"
step "portUnification and sslQuorum" --portUnification=true --sslQuorum=true "${stores[@]}"
step "sslQuorum" --sslQuorum=true "${stores[@]}"
all_there "on sslQuorum"
for i in 1 2 3; do
    [ "$(plain_answer "${qport[$i]}")" = tls ] || fail "member $i's quorum port still takes plain bytes"
done
ok "every quorum port answers plain bytes with TLS only"

step "back: portUnification and sslQuorum" --portUnification=true --sslQuorum=true "${stores[@]}"
step "back: portUnification" --portUnification=true "${stores[@]}"
step "back: plain"
touch "$work/stop"
wait "$writer"
all_there "plain again"

# portUnification reads the stores: without a key store the start is refused, naming the key.
d=$(it_tmpdir nokey)
st=0
run_bounded 20 "$TUMBLERD" "$work/zoo.cfg" --serverId=1 --dataDir="$d/data" --portUnification=true \
    > "$d/log" 2>&1 < /dev/null || st=$?
[ "$st" = 2 ] || fail "portUnification without a key store: exit $st, not 2: $(cat "$d/log")"
grep -qF "portUnification is true: ssl.quorum.keyStore.location must name" "$d/log" ||
    fail "portUnification without a key store: $(cat "$d/log")"
[ ! -e "$d/data" ] || fail "portUnification without a key store: the data directory was made"
ok "portUnification without a key store is refused at start-up, the key named"
echo "$passed passed, 0 failed"
