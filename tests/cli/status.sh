#!/usr/bin/env bash
# tumbler status:  status.sh KIND TUMBLER
#
# KIND "zk" (Apache ZooKeeper 3.8) or "tumblerd" (needs TUMBLERD), started by
# tests/integration/lib.sh.  Against either, one server alone: its line,
# "standalone", status 0, the same in JSON.  Against tumblerd, also three
# members on ZooKeeper's default four-letter-word whitelist (srvr alone):
# one leader and two followers, status 0, the leader named as srvr names
# it; a member killed, then one paused (no answer within 2 s), each named
# with status 1; a member that knows no leader (the other two gone) says
# it is not serving, status 1; no server at all, status 69.  Bad command
# lines: 64.  (srvr itself cannot be refused: both servers keep it in
# every whitelist, as zkServer.sh needs it.)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=kind.sh
source "$here/kind.sh"

# line OUT SERVER: SERVER's line of the table in OUT, its fields squeezed.
line() { awk -v s="$2" '$1 == s { $1 = $1; print }' <<< "$1"; }
# json_get OUT EXPR: EXPR of the JSON object d in OUT (python).
json_get() { python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }

# ---- bad command lines: 64, nothing on stdout ----
for bad in "x" "-x" "--tls"; do
    if [ "$bad" = --tls ]; then
        out=$(tb --tls status 2> "$IT_TMPROOT/err")
    else
        out=$(tb status $bad 2> "$IT_TMPROOT/err")
    fi
    check_eq "status $bad: status" 64 "$?"
    check_eq "status $bad: nothing on stdout" "" "$out"
done
check_match "--tls: says why" "srvr goes in clear" "$(cat "$IT_TMPROOT/err")"

# ---- no server ----
nobody=127.0.0.1:$(free_port)
out=$(tb -s "$nobody" status)
check_eq "no server: status" 69 "$?"
check_match "no server: its line" "^$nobody +unreachable +Connection refused$" "$out"
check_eq "no server: the verdict" "no leader known; 0 of 1 servers answered" "$(tail -n 1 <<< "$out")"
# an IPv6 address with no "]": named unreachable, not a crash
out=$(tb -s "$nobody,[::1,[" status)
check_eq "a host of '[' without ']': status" 69 "$?"
check_match "a host of '[' without ']': its line" "^\[ +unreachable +not host:port$" "$out"

# ---- one server alone ----
launch "$kind" alone
hp=127.0.0.1:$LAUNCH_PORT
tb -s "$hp" create /status-check x > /dev/null || fail "create on $kind"
out=$(tb -s "$hp" status)
check_eq "alone: status" 0 "$?"
check_eq "alone: the header" "SERVER MODE ZXID CLIENTS OUTSTANDING LATENCY ms NODES" \
    "$(head -n 1 <<< "$out" | tr -s ' ')"
zxid=$(four_letter "$LAUNCH_PORT" srvr | sed -n 's/^Zxid: //p')
check_match "alone: its line (mode, zxid, clients, latency, nodes)" \
    "^$hp standalone $zxid [0-9]+ [0-9]+ [0-9.]+/[0-9.]+/[0-9.]+ [0-9]+$" "$(line "$out" "$hp")"
check_eq "alone: the verdict" "standalone; 1 of 1 servers answered" "$(tail -n 1 <<< "$out")"
out=$(tb -s "$hp" --json status)
check_eq "alone, JSON: status" 0 "$?"
check_eq "alone, JSON" "standalone $zxid None 1 True" \
    "$(json_get "$out" '" ".join(str(x) for x in (d["servers"][0]["mode"], d["servers"][0]["zxid"], d["leader"], d["answered"], d["ok"]))')"
stop_server "$LAUNCH_PID"

if [ "$kind" = tumblerd ]; then
    # ---- three members, the default whitelist ----
    # An election timeout well above the default, so that no election
    # between two looks (a member stalled on a loaded machine) moves the
    # leadership the checks name.
    ens_init 3
    cfg=$IT_TMPROOT/zoo.cfg
    { echo "tickTime=1000"; echo "electionTimeout=1500"; for i in 1 2 3; do ens_line "$i"; done; } > "$cfg"
    for i in 1 2 3; do ens_start "$i" "$cfg"; done
    hosts=127.0.0.1:${cport[1]},127.0.0.1:${cport[2]},127.0.0.1:${cport[3]}
    until_ok 30 tb -s "$hosts" status > /dev/null || fail "status never 0"
    out=$(tb -s "$hosts" status)
    check_eq "three: status" 0 "$?"
    L=0
    for i in 1 2 3; do
        check_match "three: member $i" "^127.0.0.1:${cport[$i]} (leader|follower) 0x[0-9a-f]+ " \
            "$(line "$out" "127.0.0.1:${cport[$i]}")"
        case "$(line "$out" "127.0.0.1:${cport[$i]}")" in *" leader "*) L=$i ;; esac
    done
    check_eq "three: one leader" 1 "$(grep -c ' leader ' <<< "$out")"
    check_eq "three: the verdict" "leader 127.0.0.1:${cport[$L]}; 3 of 3 servers answered" \
        "$(tail -n 1 <<< "$out")"
    check_eq "three: the leader's own srvr" leader "$(member_mode "$L")"
    out=$(tb -s "$hosts" --json status)
    check_eq "three, JSON" "127.0.0.1:${cport[$L]} 3 True leader,follower,follower" \
        "$(json_get "$out" '" ".join((str(d["leader"]), str(d["answered"]), str(d["ok"]), ",".join(sorted((s["mode"] for s in d["servers"]), key=lambda m: m != "leader"))))')"

    # a follower killed
    f=$((L % 3 + 1))
    other=$(((L + 1) % 3 + 1))
    kill -KILL "${pid[$f]}"
    wait "${pid[$f]}" 2> /dev/null
    out=$(tb -s "$hosts" status)
    check_eq "a follower killed: status" 1 "$?"
    check_match "a follower killed: its line" "^127.0.0.1:${cport[$f]} unreachable Connection refused$" \
        "$(line "$out" "127.0.0.1:${cport[$f]}")"
    check_eq "a follower killed: the verdict" \
        "leader 127.0.0.1:${cport[$L]}; 2 of 3 servers answered" "$(tail -n 1 <<< "$out")"

    # the follower back; then the other paused: no answer within 2 s
    ens_start "$f" "$cfg"
    until_ok 30 tb -s "$hosts" status > /dev/null || fail "member $f back: status never 0"
    kill -STOP "${pid[$other]}"
    out=$(tb -s "$hosts" status)
    check_eq "a member paused: status" 1 "$?"
    check_match "a member paused: its line" "^127.0.0.1:${cport[$other]} unreachable no answer to srvr$" \
        "$(line "$out" "127.0.0.1:${cport[$other]}")"
    check_match "a member paused: the verdict" "^leader 127.0.0.1:[0-9]+; 2 of 3 servers answered$" \
        "$(tail -n 1 <<< "$out")"
    kill -CONT "${pid[$other]}"

    # only one member left: it knows no leader, so it serves no one
    for i in "$L" "$f"; do
        stop_server "${pid[$i]}"
        check_eq "member $i: exit on SIGTERM" 0 "$STOP_STATUS"
    done
    # shellcheck disable=SC2016 # eval expands it
    until_ok 30 eval 'four_letter "${cport[$other]}" srvr | grep -q "not currently serving"' ||
        fail "member $other still serving alone"
    out=$(tb -s "$hosts" status)
    check_eq "alone of three: status" 1 "$?"
    check_match "alone of three: its line" \
        "^127.0.0.1:${cport[$other]} not serving This ZooKeeper instance is not currently serving requests$" \
        "$(line "$out" "127.0.0.1:${cport[$other]}")"
    check_eq "alone of three: the verdict" "no leader known; 0 of 3 servers answered" \
        "$(tail -n 1 <<< "$out")"
fi

[ "$FAILS" = 0 ] || { echo "$FAILS check(s) failed" >&2; exit 1; }
echo "status: all checks passed against $kind"
