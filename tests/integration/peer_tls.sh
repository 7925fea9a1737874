#!/usr/bin/env bash
# Peer TLS (sslQuorum, ssl.quorum.*) on three tumblerd members on 127.0.0.1, named localhost in
# their server lines, with tls/mkcerts.sh's certificates valid for that name alone (named.*), so
# that a member checked by its address instead would be refused: members 1 and 2 read PKCS12
# stores, member 3 PEM files.
#   1. the members elect a leader and take writes on every member, each read on another;
#      every connection they write to another on has TCP_NODELAY (nodelay.py), secured too;
#   2. both quorum ports of a member speak TLS and want a certificate: openssl s_client with
#      the CA's certificate finishes a handshake on each and is verified; without one it is
#      refused, and the member logs the refusal; plain bytes (raft's own handshake) get no
#      raft traffic back, only a TLS alert or nothing;
#   2b. SIGHUP reads the stores again: a renewed certificate is presented, a broken store
#      leaves the one in use; with sslQuorumReloadCertFiles a renewed store's file is read
#      again with no signal;
#   3. a 4th member whose certificate another CA signed cannot join: the members refuse it
#      and log why, it logs that they refused it (an alert after its handshake: it is told by
#      the first byte of the other side, an ACK, when it is in), and the three go on with
#      a leader of theirs, taking writes;
#   3a. a 6th member whose certificate our CA signed for another name (other.invalid) is
#      refused too: its address (127.0.0.1) and the host name that reverse-resolves to
#      (localhost) are both tried and named in the members' logs; it logs that they refused
#      its certificate (their first byte a NAK);
#   3b. zkCli's `reconfig -add` of a 5th server with a valid certificate (joinEnsemble, its data
#      directory empty): it joins over TLS, catches up (it holds what was written before) and
#      serves: a write through it, read through the others;
#   4. kill -9 of the leader: the other three elect a new one and take writes;
#   5. sslQuorum with a key store missing, unreadable, with a wrong password or not named
#      stops tumblerd at start, the key and the file named; so does a clientAuth but need;
#      with sslQuorumReloadCertFiles, a start that fails later (its data directory a file)
#      still exits.
#   peer_tls.sh TUMBLER      (TUMBLERD names the server binary)
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

ens_init 6
named_line() { ens_line "$1" | sed 's/=127\.0\.0\.1:/=localhost:/'; } # I: member I's, by name
members() { # N: the server.N lines of members 1..N
    local i
    for ((i = 1; i <= $1; i++)); do named_line "$i"; done
}
{
    echo "tickTime=1000"
    echo "4lw.commands.whitelist=*"
    echo "sslQuorum=true"
    echo "reconfigEnabled=true"
    echo "DigestAuthenticationProvider.superDigest=$(ens_super_digest)"
    members 3
} > "$work/zoo.cfg"
p12=(--ssl.quorum.keyStore.location="$certs/named.p12" --ssl.quorum.keyStore.password=secret
    --ssl.quorum.trustStore.location="$certs/trust.p12" --ssl.quorum.trustStore.password=secret)
cp "$certs/named.pem.key" "$work/m3.pem"
pem=(--ssl.quorum.keyStore.location="$work/m3.pem" --ssl.quorum.keyStore.type=PEM
    --ssl.quorum.trustStore.location="$certs/ca.pem")
ens_start 1 "$work/zoo.cfg" "${p12[@]}"
cp "$certs/named.p12" "$work/m2.p12"
ens_start 2 "$work/zoo.cfg" "${p12[@]}" --ssl.quorum.keyStore.location="$work/m2.p12" \
    --sslQuorumReloadCertFiles=true
ens_start 3 "$work/zoo.cfg" "${pem[@]}"

tb() { run_bounded 20 "$tumbler" --connect-timeout 10 -s "127.0.0.1:${cport[$1]}" "${@:2}"; }
# write_each ROUND MEMBER...: a create through each member, read back through the next one.
write_each() {
    local round=$1 i n got
    shift
    local m=("$@")
    for ((n = 0; n < ${#m[@]}; n++)); do
        i=${m[$n]}
        tb "$i" create "/$round-$i" "from-$i" > /dev/null || fail "create through member $i"
        got=$(tb "${m[$(((n + 1) % ${#m[@]}))]}" get "/$round-$i") ||
            fail "get /$round-$i through member ${m[$(((n + 1) % ${#m[@]}))]}"
        [ "$got" = "from-$i" ] || fail "/$round-$i holds \"$got\""
    done
}

until_ok 30 find_leader 1 2 3 || fail "no leader"
ok "sslQuorum: leader $L"
write_each a 1 2 3
ok "a write through every member, each read through another"
q=$(IFS=,; echo "${qport[*]:1:3}") e=$(IFS=,; echo "${eport[*]:1:3}")
for i in 1 2 3; do
    /usr/bin/python3 "$here/nodelay.py" "${pid[$i]}" \
        "$([ "$i" = "$L" ] && echo leader || echo follower)" "$q" "$e" ||
        fail "member $i writes to another member without TCP_NODELAY"
done
ok "every connection a member writes to another on has TCP_NODELAY, under TLS too"

# 2. The quorum ports speak TLS, and want a certificate.
sclient() { # PORT [ARG...]
    local port=$1
    shift
    timeout 10 openssl s_client -connect "127.0.0.1:$port" -CAfile "$certs/ca.pem" \
        -verify_return_error "$@" < /dev/null 2>&1
}
for port in "${qport[1]}" "${eport[1]}"; do
    out=$(sclient "$port" -cert "$certs/server.pem" -key "$certs/server.key")
    grep -q "Verify return code: 0 (ok)" <<< "$out" ||
        fail "s_client with a certificate to port $port: $out"
    grep -q "subject=O = Tumbler, CN = localhost" <<< "$out" ||
        fail "port $port's certificate: $out"
done
ok "the quorum and election ports finish a TLS handshake, the member's certificate verified"
# Nothing is kept between connections: no session ticket, in TLS 1.2 either.
out=$(sclient "${qport[1]}" -cert "$certs/server.pem" -key "$certs/server.key" -tls1_2)
grep -q "Verify return code: 0 (ok)" <<< "$out" || fail "TLS 1.2 handshake with member 1: $out"
! grep -q -i "session ticket" <<< "$out" || fail "member 1 gave a TLS 1.2 session ticket: $out"
ok "a TLS 1.2 handshake with a member gets no session ticket"
for port in "${qport[1]}" "${eport[1]}"; do
    out=$(sclient "$port" -ign_eof)
    grep -q "alert certificate required" <<< "$out" ||
        fail "s_client without a certificate to port $port was not refused: $out"
    until_ok 5 grep -q "peer TLS: a connection from 127.0.0.1:[0-9]* (to port $port): .*peer did not return a certificate" \
        "${dir[1]}/server.log" || fail "member 1 did not log the refusal on port $port"
done
ok "a client without a certificate is refused on both ports, and member 1 says so"
[ "$(plain_answer "${qport[1]}")" = tls ] ||
    fail "plain bytes to the quorum port got something other than a TLS alert"
ok "raft's plain handshake on the quorum port: no raft traffic back"

# SIGHUP reads the stores again: a renewed certificate is presented from then on; a store that
# cannot be used leaves the one in use.
cp "$certs/renewed.pem.key" "$work/m3.pem"
kill -HUP "${pid[3]}"
until_ok 10 grep -q "peer TLS: the quorum's key and trust stores were read again" \
    "${dir[3]}/server.log" || fail "member 3 did not read its stores again on SIGHUP"
sclient "${qport[3]}" -cert "$certs/server.pem" -key "$certs/server.key" |
    grep -q "subject=O = Tumbler renewed, CN = localhost" || fail "member 3 kept its old certificate"
echo garbage > "$work/m3.pem"
kill -HUP "${pid[3]}"
until_ok 10 grep -q "peer TLS: the certificates in use stay" "${dir[3]}/server.log" ||
    fail "member 3 did not refuse a store it cannot use"
sclient "${qport[3]}" -cert "$certs/server.pem" -key "$certs/server.key" |
    grep -q "subject=O = Tumbler renewed, CN = localhost" || fail "member 3 lost its certificate"
write_each r 1 2 3
ok "SIGHUP: member 3 presents its renewed certificate, keeps it when the store is broken"
# sslQuorumReloadCertFiles: member 2 reads its store again when the file is renewed (renamed
# over it, as certificate tools do), with no signal.
grep -q "stores were read again" "${dir[2]}/server.log" && fail "member 2 read its stores again unasked"
cp "$certs/renewed.p12" "$work/m2.p12.new"
mv "$work/m2.p12.new" "$work/m2.p12"
until_ok 10 grep -q "peer TLS: the quorum's key and trust stores were read again" \
    "${dir[2]}/server.log" || fail "member 2 did not read its renewed store"
sclient "${qport[2]}" -cert "$certs/server.pem" -key "$certs/server.key" |
    grep -q "subject=O = Tumbler renewed, CN = localhost" || fail "member 2 kept its old certificate"
write_each s 1 2 3
ok "sslQuorumReloadCertFiles: member 2 presents its renewed certificate once the file changed"

# 3. A 4th member, its certificate from another CA (it trusts ours: it goes as far as to present
# its own). The leader it must not displace is the one before it starts: the steps above do not
# keep one (a leader whose loop stalls, as under Valgrind, can lose its leadership).
until_ok 30 find_leader 1 2 3 || fail "no leader before the 4th member starts"
old=$L
{
    echo "tickTime=1000"
    echo "4lw.commands.whitelist=*"
    echo "sslQuorum=true"
    members 4
} > "$work/rogue.cfg"
ens_start 4 "$work/rogue.cfg" --ssl.quorum.keyStore.location="$certs/rogue.p12" \
    --ssl.quorum.keyStore.password=secret --ssl.quorum.trustStore.location="$certs/ca.pem"
# refused_by_all WHY: members 1-3 each logged refusing a connection to its quorum port for WHY
# (a grep pattern).
refused_by_all() {
    local i
    for i in 1 2 3; do
        grep -q "peer TLS: a connection from 127.0.0.1:[0-9]* (to port ${qport[$i]}): $1" \
            "${dir[$i]}/server.log" || return 1
    done
}
until_ok 15 refused_by_all ".*certificate verify failed" || fail "a member did not log refusing the rogue"
until_ok 10 grep -q "peer TLS: connecting to localhost:${qport[1]}: .*alert unknown ca" "${dir[4]}/server.log" ||
    fail "the rogue did not log being refused: $(tail -5 "${dir[4]}/server.log")"
[ "$(member_mode 4)" != leader ] || fail "the rogue leads"
# The three go on with a leader of theirs.  Not necessarily the same one: on a loaded machine
# (memcheck) a leader can step down while it verifies the refused handshakes; what the rogue
# could do is checked above, by the refusals.
until_ok 15 find_leader 1 2 3 || fail "no leader among members 1-3 after the rogue (was $old)"
write_each b 1 2 3
kill -KILL "${pid[4]}"
wait "${pid[4]}" 2> /dev/null
pid[4]=0
ok "a member from another CA is refused by all three and says so; leader $L, writes go on"

# 3a. A 6th member, its certificate from our CA but for another host: the name check refuses it.
until_ok 30 find_leader 1 2 3 || fail "no leader before the 6th member starts"
old=$L
{
    echo "tickTime=1000"
    echo "4lw.commands.whitelist=*"
    echo "sslQuorum=true"
    members 3
    named_line 6
} > "$work/misnamed.cfg"
ens_start 6 "$work/misnamed.cfg" --ssl.quorum.keyStore.location="$certs/misnamed.p12" \
    --ssl.quorum.keyStore.password=secret --ssl.quorum.trustStore.location="$certs/ca.pem"
until_ok 15 refused_by_all "its certificate names neither the address 127.0.0.1 nor localhost, the host name it reverse-resolves to" ||
    fail "a member did not log refusing a certificate for another name: $(grep 'peer TLS' "${dir[1]}/server.log" | tail -3)"
until_ok 10 grep -q "peer TLS: connecting to localhost:${qport[1]}: the member refused our certificate" \
    "${dir[6]}/server.log" || fail "member 6 did not log being refused: $(tail -5 "${dir[6]}/server.log")"
[ "$(member_mode 6)" != leader ] || fail "member 6 leads"
until_ok 15 find_leader 1 2 3 || fail "no leader among members 1-3 after member 6 (was $old)"
write_each e 1 2 3
kill -KILL "${pid[6]}"
wait "${pid[6]}" 2> /dev/null
pid[6]=0
ok "a member of our CA named other.invalid is refused by all three, both names tried; leader $L stays"

# 3b. A 5th server with a certificate of our CA, added at run time.
line5=$(named_line 5)
{ cat "$work/zoo.cfg"; echo "$line5"; echo "joinEnsemble=true"; } > "$work/zoo5.cfg"
ens_start 5 "$work/zoo5.cfg" "${p12[@]}"
until_ok 10 grep -q "joining: no clients" "${dir[5]}/server.log" ||
    fail "member 5 does not say it waits to join"
out=$(printf 'addauth digest super:secret\nreconfig -add %s\n' "$line5" |
    zkcli "127.0.0.1:${cport[1]}" "$work/zkcli.log" 2>&1)
grep -q "^server.5=localhost:${qport[5]}:${eport[5]}:participant;" <<< "$out" ||
    fail "reconfig -add server.5: $out"
wait_serving "${cport[5]}" 20 "${pid[5]}" || fail "member 5 does not serve after it joined"
for r in a r b; do
    got=$(tb 5 get "/$r-1") || fail "get /$r-1 through member 5"
    [ "$got" = from-1 ] || fail "member 5 holds \"$got\" in /$r-1"
done
write_each d 5 1 2 3
ok "reconfig -add of member 5 (a valid certificate) under sslQuorum: it caught up and serves"

# 4. Failover.
kill -KILL "${pid[$L]}"
wait "${pid[$L]}" 2> /dev/null
pid[$L]=0
old=$L
rest=()
for i in 1 2 3 5; do [ "$i" = "$old" ] || rest+=("$i"); done
until_ok 30 find_leader "${rest[@]}" || fail "no leader after the leader's kill"
write_each c "${rest[@]}"
ok "kill -9 of leader $old: member $L leads, writes through the three survivors"

# 5. Stores that cannot be used stop the start.
{
    echo "sslQuorum=true"
    for i in 1 2 3; do
        echo "server.$i=127.0.0.1:$(free_port):$(free_port);127.0.0.1:$(free_port)"
    done
} > "$work/refused.cfg"
refused() { # WHAT TEXT ARG...: a member with ARGs exits non-zero saying TEXT
    local what=$1 text=$2 d
    shift 2
    d=$(it_tmpdir "refused-$passed")
    run_bounded 20 "$TUMBLERD" "$work/refused.cfg" --serverId=1 --dataDir="$d/data" "$@" \
        > "$d/log" 2>&1 && fail "tumblerd started with $what"
    grep -qF -- "$text" "$d/log" || fail "with $what tumblerd did not say \"$text\": $(cat "$d/log")"
    [ ! -e "$d/data" ] || fail "tumblerd with $what made its data directory"
    passed=$((passed + 1))
    echo "ok - refused at start-up: $what"
}
refused "a missing key store" \
    "ssl.quorum.keyStore.location $work/nothing.p12 cannot be used" \
    --ssl.quorum.keyStore.location="$work/nothing.p12" --ssl.quorum.keyStore.password=secret
head -c 600 /dev/urandom > "$work/garbage.p12"
refused "an unreadable key store" "ssl.quorum.keyStore.location $work/garbage.p12 cannot be used" \
    --ssl.quorum.keyStore.location="$work/garbage.p12" --ssl.quorum.keyStore.password=secret
refused "a wrong password" "server.p12 cannot be used: error:11800071:PKCS12 routines::mac verify failure (a wrong password?)" \
    --ssl.quorum.keyStore.location="$certs/server.p12" --ssl.quorum.keyStore.password=wrong
refused "no key store" "sslQuorum is true: ssl.quorum.keyStore.location must name" \
    --ssl.quorum.trustStore.location="$certs/ca.pem"
refused "clientAuth want" "ssl.quorum.clientAuth: only need is supported" "${pem[@]}" \
    --ssl.quorum.clientAuth=want
# A start that fails once the stores are watched still ends: a data directory that is a file.
d=$(it_tmpdir refused-watched)
echo kept > "$d/data"
run_bounded 20 "$TUMBLERD" "$work/refused.cfg" --serverId=1 --dataDir="$d/data" \
    --ssl.quorum.keyStore.location="$certs/named.pem.key" --ssl.quorum.keyStore.type=PEM \
    --ssl.quorum.trustStore.location="$certs/ca.pem" --sslQuorumReloadCertFiles=true \
    > "$d/log" 2>&1
rc=$?
{ [ "$rc" = 1 ] && grep -q "cannot open the log in $d/data" "$d/log"; } ||
    fail "with its stores watched and a file for data directory, tumblerd gave $rc: $(cat "$d/log")"
[ "$(cat "$d/data")" = kept ] || fail "the file named as data directory was changed"
ok "refused at start-up with its stores watched (sslQuorumReloadCertFiles): it exits"

for i in 1 2 3 5; do
    [ "${pid[$i]}" = 0 ] && continue
    stop_server "${pid[$i]}" 10
    [ "$STOP_STATUS" = 0 ] || fail "member $i exited $STOP_STATUS"
done
ok "clean stops"
echo "$passed passed, 0 failed"
