#!/usr/bin/env bash
# The lines an operator follows in tumblerd's log, each provoked against real
# servers and read back from a --log-format=json log, every line of which must
# be one JSON object (python3's json) with time, level, message and the
# line's fields:
#   - a standalone server (logFormat=json in its zoo.cfg): a session expired,
#     connections refused over maxClientCnxns, a ConnectRequest cut short, a
#     ConnectRequest in clear at its TLS port (tagged "tls"), a request
#     slower than slowRequestMs, a snapshot with its size and time as fields;
#   - three members (--log-format=json as a flag): the leader named with its
#     term on each, raft's line of the leader taking over with its fields, a
#     new leader and a higher term once the leader stops, the old leader's
#     handover and the new one's taking over as fields, and a connection
#     refused by the last member while no leader is known.
#   oplog.sh      (TUMBLERD names the server binary)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
it_init
passed=0
fail() { echo "FAIL: $*"; exit 1; }
ok() { passed=$((passed + 1)); echo "ok - $* (${SECONDS}s)"; }
py() { run_bounded 60 /usr/bin/python3 "$here/oplog.py" "$@"; }
# found LOG EXPR: some line of the JSON log LOG has the fields the Python
# expression EXPR over o (the line's object) asks for (oplog.py find).
found() { py find "$1" "$2" > /dev/null 2>&1; }
# logged LOG PATTERN: some line of the JSON log LOG (as oplog.py check-json
# prints it, keys sorted) matches the extended regex PATTERN.
logged() { py check-json "$1" 2> /dev/null | grep -Eq -- "$2"; }

# ---- one server ------------------------------------------------------------
d=$(it_tmpdir one)
port=$(free_port)
tport=$(free_port)
mkdir -p "$d/data"
# a certificate for the TLS port, made here: none of the test CA's is needed
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/key.pem" -out "$d/cert.pem" \
    -days 2 -subj /CN=localhost > /dev/null 2>&1 || fail "openssl"
cat "$d/key.pem" "$d/cert.pem" > "$d/server.pem"
cat > "$d/zoo.cfg" <<CFG
tickTime=100
dataDir=$d/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=3
4lw.commands.whitelist=*
snapCount=200
slowRequestMs=1
secureClientPort=$tport
ssl.keyStore.location=$d/server.pem
ssl.keyStore.type=PEM
ssl.clientAuth=none
logFormat=json
logFile=$d/tumblerd.log
CFG
"$TUMBLERD" "$d/zoo.cfg" >> "$d/server.log" 2>&1 < /dev/null &
pid=$!
IT_PIDS+=("$pid")
IT_TUMBLERDS+="$pid "
wait_serving "$port" 30 "$pid" || fail "the server did not start"
log=$d/tumblerd.log

sid=$(py abandon "$port" 300) || fail "no session"
until_ok 20 logged "$log" "\"message\": \"expiring session $sid \\(timeout 300 ms\\)\".*\"session\": \"$sid\", \"time\": .*\"timeout_ms\": 300" ||
    fail "no expiry line for $sid: $(tail -5 "$log")"
ok "a session expired: its line names it and its timeout"

closed=$(py crowd "$port" 6) || fail "crowd"
[ "$closed" -ge 3 ] || fail "only $closed of 6 connections refused with maxClientCnxns=3"
until_ok 10 logged "$log" '"level": "WARN", "message": "too many connections from 127.0.0.1 \(maxClientCnxns 3\); closing 127.0.0.1", "peer": "127.0.0.1", "refused": "limit"' ||
    fail "no refusal line: $(tail -5 "$log")"
py garbage "$port" || fail "garbage"
until_ok 10 logged "$log" '"message": "closing 127.0.0.1:[0-9]+: malformed ConnectRequest", "peer": "127.0.0.1", "refused": "handshake"' ||
    fail "no bad handshake line: $(tail -5 "$log")"
py tls "$tport" || fail "a ConnectRequest in clear at the TLS port"
until_ok 10 found "$log" 'o["refused"] == "tls" and o["level"] == "WARN" and o["peer"] == "127.0.0.1" and o["session"] == "0x0" and "TLS handshake failed: " in o["message"]' ||
    fail "no TLS refusal line tagged tls: $(grep -i tls "$log")"
! found "$log" 'o["refused"] == "auth"' || fail "a refusal tagged auth: $(grep auth "$log")"
ok "refused connections say why: over the limit, a bad handshake, TLS (tagged tls)"

sid=$(py burst "$port" 3000) || fail "burst"
until_ok 10 logged "$log" "\"message\": \"slow request: create \\(xid [0-9]+\\) of session $sid from 127.0.0.1 answered in [0-9]+ ms \\(slowRequestMs 1\\)\", \"ms\": [0-9]+, \"op\": \"create\", \"opcode\": 1, \"peer\": \"127.0.0.1\", \"session\": \"$sid\"" ||
    fail "no slow request line: $(grep -c . "$log") lines, the last $(tail -3 "$log")"
ok "a request over slowRequestMs: its op, session, client and time"
until_ok 20 logged "$log" '"message": "raft: snapshot at [0-9]+: state at [0-9]+, [1-9][0-9]* bytes, then [0-9]+ bytes of entries; made in [0-9]+ ms"' ||
    fail "no snapshot line: $(grep snapshot "$log")"
snap='o["event"] == "snapshot" and o["level"] == "INFO" and o["index"] >= o["state_index"] > 0 and o["state_bytes"] > 0 and o["entries_bytes"] >= 0 and o["made_ms"] >= 0'
found "$log" "$snap" || fail "the snapshot line's fields: $(grep snapshot "$log")"
line=$(py find "$log" "$snap" | head -1)
py find "$log" "$snap and o['message'] == 'raft: snapshot at %d: state at %d, %d bytes, then %d bytes of entries; made in %d ms' % (o['index'], o['state_index'], o['state_bytes'], o['entries_bytes'], o['made_ms'])" > /dev/null ||
    fail "the snapshot line's fields are not its message's figures: $line"
ok "a snapshot: its size and how long it took, in its message and as fields"

stop_server "$pid" 10
[ "$STOP_STATUS" = 0 ] || fail "exit $STOP_STATUS on SIGTERM"
n=$(py check-json "$log" | wc -l) || fail "$(py check-json "$log" 2>&1 >/dev/null)"
[ "$n" -ge 8 ] || fail "only $n lines"
ok "all $n lines of the log are JSON objects with time, level and message"

# ---- three members ---------------------------------------------------------
work=$(it_tmpdir three)
ens_init 3
logs=()
for i in 1 2 3; do logs[$i]=${dir[$i]}/tumblerd.log; done
{
    echo "tickTime=1000"
    echo "4lw.commands.whitelist=*"
    for i in 1 2 3; do ens_line "$i"; done
} > "$work/zoo.cfg"
for i in 1 2 3; do
    ens_start "$i" "$work/zoo.cfg" --log-format=json --logFile="${logs[$i]}"
done
# leader_line I LEADER: member I's log has named LEADER; sets TERM to its term
leader_line() {
    TERM_SEEN=$(py check-json "${logs[$1]}" 2> /dev/null |
        sed -n "s/.*\"leader\": $2, \"level\": \"INFO\", \"message\": \"leader: server $2 (term \\([0-9]*\\))[^\"]*\", \"term\": \\1,.*/\\1/p" |
        tail -1)
    [ -n "$TERM_SEEN" ]
}
until_ok 30 find_leader 1 2 3 || fail "no leader"
for i in 1 2 3; do
    until_ok 10 leader_line "$i" "$L" || fail "member $i did not log leader $L: $(cat "${logs[$i]}")"
    term=$TERM_SEEN
done
ok "each member names the leader, server $L, and its term $term"
until_ok 10 found "${logs[$L]}" "o['event'] == 'leadership_taken' and o['server'] == $L and o['term'] == $term and o['message'] == 'raft: server $L took leadership (term $term)'" ||
    fail "leader $L's raft line has no fields: $(grep leadership "${logs[$L]}")"
ok "raft's line on leader $L: event leadership_taken, server and term as fields"
old=$L

others=()
for i in 1 2 3; do [ "$i" = "$L" ] || others+=("$i"); done
stop_server "${pid[$L]}" 10
[ "$STOP_STATUS" = 0 ] || fail "the leader exited $STOP_STATUS"
until_ok 30 find_leader "${others[@]}" || fail "no new leader"
for i in "${others[@]}"; do
    until_ok 10 leader_line "$i" "$L" || fail "member $i did not log the new leader $L"
    [ "$TERM_SEEN" -gt "$term" ] || fail "member $i: term $TERM_SEEN after $term"
done
ok "after the leader stopped, both others name server $L and a higher term"
# the stopping leader hands over (to the new one, unless raft's transfer
# timed out and it kept it until it stopped): its line's fields are its
# message's
found "${logs[$old]}" "o['event'] == 'leadership_transfer' and o['message'] == 'raft: leadership %s server %d' % ('handed to' if o['handed'] else 'kept by', o['leader']) and (o['leader'] == $L or not o['handed'])" ||
    fail "member $old's handover has no fields: $(grep leadership "${logs[$old]}")"
until_ok 10 found "${logs[$L]}" "o['event'] == 'leadership_taken' and o['server'] == $L and o['term'] > $term" ||
    fail "leader $L's raft line: $(grep leadership "${logs[$L]}")"
ok "raft's lines as fields: member $old's handover, and $L taking leadership in a later term"

for i in "${others[@]}"; do [ "$i" = "$L" ] || last=$i; done
stop_server "${pid[$L]}" 10
# refused_line: a ConnectRequest to the last member is refused, and logged so
refused_line() {
    py refused "${cport[$last]}" 2> /dev/null &&
        logged "${logs[$last]}" '"level": "INFO", "message": "refusing 127.0.0.1:[0-9]+: no leader is known, this server is not serving.*", "peer": "127.0.0.1", "refused": "not serving"'
}
until_ok 30 refused_line || fail "no refusal while leaderless: $(tail -5 "${logs[$last]}")"
ok "with no leader, a connection is refused and the line says why"

stop_server "${pid[$last]}" 10
for i in 1 2 3; do
    py check-json "${logs[$i]}" > /dev/null || fail "member $i's log"
done
ok "every line of the three members' logs is a JSON object"
echo "$passed passed, 0 failed"
