#!/usr/bin/env bash
# The tree commands of tumbler against a real tumblerd: output, exit
# statuses, --json, watches, ACLs, --help everywhere, stdout that cannot
# be written (71), and the message when no server can be reached.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
srv_start

# ---- create, get, set, stat ----
out=$(tb create /t hello); rc=$?
check_eq "create status" 0 "$rc"
check_eq "create output" "Created /t" "$out"
err=$(tb create /t again 2>&1 >/dev/null); rc=$?
check_eq "create existing: status 110" 110 "$rc"
check_match "create existing: message says what and where" \
    "^tumbler: create /t: node already exists \(ENODEEXISTS\)$" "$err"
check_eq "create seq 1" "Created /t/s-0000000000" "$(tb create -s /t/s- a)"
check_eq "create seq 2" "Created /t/s-0000000001" "$(tb create -s /t/s- b)"
check_eq "get" "hello" "$(tb get /t)"
check_match "get -s shows the stat" "^dataVersion = 0$" "$(tb get -s /t)"
tb set -v 7 /t x 2>/dev/null; check_eq "set with a wrong version: 103" 103 "$?"
tb set -v 0 /t world; check_eq "set with the right version" 0 "$?"
check_eq "get after set" "world" "$(tb get /t)"
check_match "set -s prints the new stat" "^dataVersion = 2$" "$(tb set -s /t again)"
check_match "stat" "^numChildren = 2$" "$(tb stat /t)"
tb stat /none 2>/dev/null; check_eq "stat of a missing node: 101" 101 "$?"
tb get /none 2>/dev/null; check_eq "get of a missing node: 101" 101 "$?"
tb create /none/child 2>/dev/null; check_eq "create under a missing parent: 101" 101 "$?"
check_eq "create without data, get prints nothing" "Created /t/empty" "$(tb create /t/empty)"
check_eq "empty data" "" "$(tb get /t/empty)"
# Standard output that cannot be written: 71, said, also when the write
# that failed was a command's own flush (a last fflush then succeeds).
for c in "get /t" "ls /" "--json stat /t"; do
    # shellcheck disable=SC2086
    err=$(tb $c 2>&1 > /dev/full); rc=$?
    name=${c#--json }
    check_eq "$c > /dev/full: 71" 71 "$rc"
    check_eq "$c > /dev/full: said" \
        "tumbler: ${name%% *}: cannot write the output: No space left on device" "$err"
done

# ---- modes ----
check_eq "create -e" "Created /t/eph" "$(tb create -e /t/eph)"
tb stat /t/eph > /dev/null 2>&1
check_eq "an ephemeral node goes with the one-shot session" 101 "$?"
check_eq "create -c" "Created /t/cont" "$(tb create -c /t/cont)"
check_eq "create -t" "Created /t/ttl" "$(tb create -t 600000 /t/ttl x)"
check_match "create -s -e" "^Created /t/es-[0-9]{10}$" "$(tb create -s -e /t/es-)"
tb create -c -e /t/bad 2>/dev/null; check_eq "-c with -e: usage 64" 64 "$?"
tb create -e -t 5 /t/bad 2>/dev/null; check_eq "-t with -e: usage 64" 64 "$?"
# A TTL is 40 bits (at most 2^40-1 ms): more is the command line's fault
# (64), not the library's EBADARGUMENTS (8).
err=$(tb create -t 1099511627776 /t/bad x 2>&1); rc=$?
check_eq "-t beyond 2^40-1: usage 64" 64 "$rc"
check_match "-t beyond 2^40-1: says why" \
    "^tumbler create: bad TTL '1099511627776' \(milliseconds, 1 to 1099511627775\)$" "$err"
check_eq "-t 2^40-1, the longest" "Created /ttlmax" "$(tb create -t 1099511627775 /ttlmax x)"
tb delete /ttlmax
tb create t/rel 2>/dev/null; check_eq "relative path: usage 64" 64 "$?"

# ---- create with an ACL (zkCli's third operand), create -p ----
check_eq "create with an ACL" "Created /ca" "$(tb create /ca x world:anyone:r)"
check_eq "create with an ACL: getacl" "world:anyone:r" "$(tb getacl /ca)"
tb set /ca y 2>/dev/null; check_eq "create with an ACL: it holds (102)" 102 "$?"
echo fdata | tb create -f - /cf world:anyone:cr > /dev/null
check_eq "create -f FILE PATH ACL" "world:anyone:cr" "$(tb getacl /cf)"
check_eq "create -f FILE PATH ACL: data" "fdata" "$(tb get /cf)"
tb create /cb x bogus 2>/dev/null; check_eq "create with a malformed ACL: 64" 64 "$?"
tb create /cb x world:anyone:r more 2>/dev/null; check_eq "create with four operands: 64" 64 "$?"
tb stat /cb > /dev/null 2>&1; check_eq "create refused on its command line made nothing" 101 "$?"
check_eq "create -p" "Created /p1/p2/p3" "$(tb create -p /p1/p2/p3 leaf)"
check_eq "create -p: the node's data" "leaf" "$(tb get /p1/p2/p3)"
check_eq "create -p: parents have no data" "0" "$(tb --json get /p1/p2 | json_get 'd["stat"]["dataLength"]')"
check_eq "create -p with its parents there" "Created /p1/p2/q" "$(tb create -p /p1/p2/q)"
check_match "create -p -s" "^Created /p1/x/s-[0-9]{10}$" "$(tb create -p -s /p1/x/s-)"
tb create -p /p1/p2/p3 2>/dev/null; check_eq "create -p of an existing node: 110" 110 "$?"
err=$(tb create -p /ca/d/e 2>&1); rc=$?
check_eq "create -p under a parent it may not write to: 102" 102 "$rc"
check_match "create -p names the parent it could not make" "^tumbler: create /ca/d: not authorized" "$err"
tb deleteall /p1; tb delete /ca; tb delete /cf

# ---- ls ----
check_eq "ls sorted, one per line" "$(printf 'cont\nempty\ns-0000000000\ns-0000000001\nttl')" \
    "$(tb ls /t)"
tb create /t/s-0000000000/deep x > /dev/null
check_eq "ls -R: pre-order full paths" \
    "$(printf '/t\n/t/cont\n/t/empty\n/t/s-0000000000\n/t/s-0000000000/deep\n/t/s-0000000001\n/t/ttl')" \
    "$(tb ls -R /t)"
check_match "ls -s prints the stat after the names" "^numChildren = 5$" "$(tb ls -s /t)"
check_match "ls with no path lists /" "^t$" "$(tb ls)"
tb ls /none 2>/dev/null; check_eq "ls of a missing node: 101" 101 "$?"

# ---- getAllChildrenNumber ----
tb create /n > /dev/null && tb create /n/a > /dev/null && tb create /n/a/b > /dev/null
tb create /n/c > /dev/null
check_eq "getAllChildrenNumber: every node below, at any depth" 3 "$(tb getAllChildrenNumber /n)"
check_eq "getAllChildrenNumber --json" 3 \
    "$(tb --json getAllChildrenNumber /n | json_get 'd["count"]')"
tb getAllChildrenNumber /none 2>/dev/null; check_eq "getAllChildrenNumber of a missing node: 101" 101 "$?"
tb deleteall /n

# ---- quotas, written as zkCli 3.8 writes them ----
tb create /qa x > /dev/null && tb create /qa/b yy > /dev/null
tb setquota -n 5 /qa; check_eq "setquota" 0 "$?"
check_eq "setquota writes the limits as zkCli does" \
    "count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1" \
    "$(tb get /zookeeper/quota/qa/zookeeper_limits)"
check_eq "listquota: zkCli's lines, the server's count" \
    "$(printf 'Output quota for /qa count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1\nOutput stat for /qa count=2,bytes=3')" \
    "$(tb listquota /qa)"
tb setquota -B 100 /qa
check_eq "setquota again changes the limit named, keeps the others" \
    "count=5,bytes=-1=;byteHardLimit=100;countHardLimit=-1" \
    "$(tb get /zookeeper/quota/qa/zookeeper_limits)"
check_eq "listquota --json" "100 2 3" \
    "$(tb --json listquota /qa | json_get '" ".join(str(x) for x in (d["quota"]["byteHardLimit"], d["stats"]["count"], d["stats"]["bytes"]))')"
err=$(tb setquota -n 1 /qa 2>&1); rc=$?
check_eq "setquota below the use: done" 0 "$rc"
check_match "setquota below the use: a warning" "warning: the count quota of /qa is below what it uses now, 2" "$err"
err=$(tb setquota -n 2 /qa/b 2>&1); rc=$?
check_eq "setquota under another quota: 8" 8 "$rc"
check_match "setquota under another quota: says which" "/qa/b has a parent /qa which has a quota" "$err"
tb create /qc > /dev/null && tb create /qc/d > /dev/null && tb setquota -b 10 /qc/d
err=$(tb setquota -n 2 /qc 2>&1); rc=$?
check_eq "setquota above another quota: 8" 8 "$rc"
check_match "setquota above another quota: says which" "/qc has a child /qc/d which has a quota" "$err"
tb setquota /qa 2>/dev/null; check_eq "setquota without a limit: 64" 64 "$?"
tb setquota -n 0 /qa 2>/dev/null; check_eq "setquota -n 0: 64" 64 "$?"
tb setquota -n 2 / 2>/dev/null; check_eq "setquota on /: 64" 64 "$?"
tb setquota -n 2 /zookeeper/quota 2>/dev/null; check_eq "setquota under /zookeeper/quota: 64" 64 "$?"
tb setquota -n 2 /none 2>/dev/null; check_eq "setquota on a missing node: 101" 101 "$?"
tb delquota -n /qa; check_eq "delquota -n" "count=-1,bytes=-1=;byteHardLimit=100;countHardLimit=-1" \
    "$(tb get /zookeeper/quota/qa/zookeeper_limits)"
tb delquota /qa; check_eq "delquota" 0 "$?"
err=$(tb listquota /qa 2>&1); rc=$?
check_eq "listquota after delquota: 101" 101 "$rc"
check_match "listquota after delquota: says so" "quota for /qa does not exist" "$err"
tb delquota /qc/d
check_eq "delquota leaves nothing under /zookeeper/quota" "" "$(tb ls /zookeeper/quota)"
tb delquota /qa 2>/dev/null; check_eq "delquota of no quota: 101" 101 "$?"
tb deleteall /qa; tb deleteall /qc

# ---- delete, deleteall, sync ----
tb delete /t 2>/dev/null; check_eq "delete with children: 111" 111 "$?"
tb delete -v 3 /t/s-0000000001 2>/dev/null; check_eq "delete -v wrong: 103" 103 "$?"
tb delete -v 0 /t/s-0000000001; check_eq "delete -v right" 0 "$?"
tb sync /t; check_eq "sync" 0 "$?"
check_eq "sync --json" "True" "$(tb --json sync /t | json_get 'd["synced"]')"

# ---- data from a file, binary data in JSON ----
printf 'a\000b\377' > "$T_DIR/bin"
tb set -f "$T_DIR/bin" /t/empty; check_eq "set -f" 0 "$?"
tb get /t/empty > "$T_DIR/bin.out"
cmp -s <(printf 'a\000b\377\n') "$T_DIR/bin.out"; check_eq "get prints the bytes" 0 "$?"
echo piped | tb create -f - /t/stdin > /dev/null
check_eq "create -f -" "piped" "$(tb get /t/stdin)"

j=$(tb --json get /t/empty)
check_eq "json: binary data as base64" "YQBi/w==" "$(json_get 'd["data_base64"]' <<< "$j")"
j=$(tb get --json /t)
check_eq "json get data" "again" "$(json_get 'd["data"]' <<< "$j")"
check_eq "json get stat" "2" "$(json_get 'd["stat"]["version"]' <<< "$j")"
j=$(tb --json ls /t)
check_eq "json ls" "['cont', 'empty', 's-0000000000', 'stdin', 'ttl']" \
    "$(json_get 'd["children"]' <<< "$j")"
j=$(tb --json ls -R /t/s-0000000000)
check_eq "json ls -R" "['/t/s-0000000000', '/t/s-0000000000/deep']" \
    "$(json_get 'd["nodes"]' <<< "$j")"
# An error below PATH ends the listing; the output stays one JSON
# document, with the nodes listed so far and the error at its top level.
tb create /lr > /dev/null && tb create /lr/a > /dev/null && tb create /lr/z > /dev/null
tb create /lr/s x world:anyone:cdwa > /dev/null  # not listable
j=$(tb --json ls -R /lr 2>/dev/null); rc=$?
check_eq "json ls -R, a node below that cannot be listed: 102" 102 "$rc"
check_eq "json ls -R, a node below that cannot be listed: the nodes so far, the error" \
    "['/lr', '/lr/a'] ENOAUTH /lr/s" \
    "$(json_get 'str(d["nodes"]) + " " + d["error"]["name"] + " " + d["error"]["path"]' <<< "$j")"
check_eq "ls -R, a node below that cannot be listed: the nodes so far" \
    "$(printf '/lr\n/lr/a')" "$(tb ls -R /lr 2>/dev/null)"
j=$(tb --json ls -R /none 2>/dev/null); rc=$?
check_eq "json ls -R of a missing node: 101" 101 "$rc"
check_eq "json ls -R of a missing node: the error object alone" "['error'] ENONODE /none" \
    "$(json_get 'str(list(d)) + " " + d["error"]["name"] + " " + d["error"]["path"]' <<< "$j")"
tb delete /lr/s; tb deleteall /lr
j=$(tb --json create -s /t/j-)
check_match "json create" "^/t/j-[0-9]{10}$" "$(json_get 'd["path"]' <<< "$j")"
j=$(tb --json stat /t)
check_eq "json stat" "0x0" "$(json_get 'd["stat"]["ephemeralOwner"]' <<< "$j")"
j=$(tb --json stat /none 2>/dev/null)
check_eq "json error object" "ENONODE -101 /none" \
    "$(json_get '" ".join([d["error"]["name"], str(d["error"]["code"]), d["error"]["path"]])' <<< "$j")"
j=$(tb --json getacl /t)
check_eq "json getacl" "world anyone cdrwa" \
    "$(json_get '" ".join(d["acl"][0][k] for k in ("scheme", "id", "perms"))' <<< "$j")"

# Data up to what a request carries (1048575 bytes, the path and the ACL
# included): more is a usage error that says so, not 70.
head -c 1048000 /dev/zero | tr '\0' d > "$T_DIR/d1"
head -c 1048560 /dev/zero | tr '\0' d > "$T_DIR/d2"
head -c 1048576 /dev/zero | tr '\0' d > "$T_DIR/d3"
tb create -f "$T_DIR/d1" /t/big > /dev/null; check_eq "create -f of 1048000 bytes" 0 "$?"
check_eq "create -f of 1048000 bytes: stored" 1048000 \
    "$(tb --json stat /t/big | json_get 'd["stat"]["dataLength"]')"
for c in "create -f $T_DIR/d2 /t/big2" "set -f $T_DIR/d2 /t/big"; do
    # shellcheck disable=SC2086
    err=$(tb $c 2>&1); rc=$?
    check_eq "$c: the request cannot carry it: 64" 64 "$rc"
    check_match "$c: says so" "1048560 bytes of data do not fit in a request" "$err"
done
j=$(tb --json set -f "$T_DIR/d2" /t/big 2>/dev/null)
check_eq "set -f too large for a request, --json: the error" ETOOBIG "$(json_get 'd["error"]["name"]' <<< "$j")"
err=$(tb set -f "$T_DIR/d3" /t/big 2>&1); rc=$?
check_eq "set -f of 1 MiB: 64" 64 "$rc"
check_match "set -f of 1 MiB: says so" "is larger than 1048575 bytes" "$err"
check_eq "data refused, the node as it was" 1048000 \
    "$(tb --json stat /t/big | json_get 'd["stat"]["dataLength"]')"
tb delete /t/big

tb deleteall /t; check_eq "deleteall" 0 "$?"
tb stat /t > /dev/null 2>&1; check_eq "deleteall removed the subtree" 101 "$?"
tb deleteall /t 2>/dev/null; check_eq "deleteall of a missing node: 101" 101 "$?"
tb deleteall / 2>/dev/null; check_eq "deleteall /: refused" 64 "$?"

# ---- ACLs and credentials ----
tb create /acl x > /dev/null
check_eq "getacl" "world:anyone:cdrwa" "$(tb getacl /acl)"
tb setacl /acl world:anyone:r; check_eq "setacl" 0 "$?"
check_eq "getacl after setacl" "world:anyone:r" "$(tb getacl /acl)"
tb set /acl y 2>/dev/null; check_eq "write refused by the ACL: 102" 102 "$?"
tb setacl /acl bogus 2>/dev/null; check_eq "malformed ACL: usage 64" 64 "$?"
# An id is any bytes its setter chose: getacl's lines show none that would
# forge an entry or drive the terminal; --json gives the id as it is (a
# digest's hash masked by the server, to a session without ADMIN).
tb create /aclid x > /dev/null
tb setacl /aclid $'digest:a\nworld:anyone:cdrwa,digest:b\e[2J:x:r,world:anyone:r'
check_eq "getacl of ids with a newline and an ESC: one line each" \
    "$(printf 'digest:a?world:x:cdrwa\ndigest:b?[2J:x:r\nworld:anyone:r')" \
    "$(tb getacl /aclid)"
check_eq "getacl --json of such an id: as it is (its hash masked)" "a
world:x" \
    "$(tb --json getacl /aclid | python3 -c 'import json, sys; print(json.load(sys.stdin)["acl"][0]["id"])')"
# setacl -R: the children first, so that an ACL taking READ away reaches
# the whole subtree; one giving it back does too.
tb create /ra > /dev/null && tb create /ra/a > /dev/null && tb create /ra/a/b > /dev/null
acls() { for n in /ra /ra/a /ra/a/b; do tb getacl "$n"; done | xargs; }
tb setacl -R /ra world:anyone:cdwa; check_eq "setacl -R taking READ away: 0" 0 "$?"
check_eq "setacl -R taking READ away: the whole subtree" \
    "world:anyone:cdwa world:anyone:cdwa world:anyone:cdwa" "$(acls)"
tb setacl -R -v 7 /ra world:anyone:cdrwa 2>/dev/null
check_eq "setacl -R -v, a wrong version: 103" 103 "$?"
check_eq "setacl -R -v, a wrong version: nothing changed" \
    "world:anyone:cdwa world:anyone:cdwa world:anyone:cdwa" "$(acls)"
tb setacl -R -v 1 /ra world:anyone:cdrwa; check_eq "setacl -R giving READ back: 0" 0 "$?"
check_eq "setacl -R giving READ back: the whole subtree" \
    "world:anyone:cdrwa world:anyone:cdrwa world:anyone:cdrwa" "$(acls)"
tb deleteall /ra
tb create /sec x > /dev/null
tb -a digest:alice:secret setacl /sec auth::cdrwa; check_eq "setacl auth:: with -a" 0 "$?"
tb get /sec 2>/dev/null; check_eq "read without the credential: 102" 102 "$?"
check_eq "read with -a" "x" "$(tb -a digest:alice:secret get /sec)"
check_match "getacl shows the digest id" "^digest:alice:[A-Za-z0-9+/=]+:cdrwa$" \
    "$(tb -a digest:alice:secret getacl /sec)"
check_match "whoami with -a" "^digest:alice$" "$(tb -a digest:alice:secret whoami)"
tb addauth digest bob:pw; check_eq "addauth" 0 "$?"
tb -a nocolon ls / 2>/dev/null; check_eq "-a without a colon: 64" 64 "$?"
# SASL logins go with the connection (sasl.sh logs in against servers with users).
tb addauth sasl bob:pw 2>/dev/null; check_eq "addauth sasl: 64, use -a" 64 "$?"
tb -a sasl:nocolon ls / 2>/dev/null; check_eq "-a sasl: without a password: 64" 64 "$?"

# ---- watches ----
tb create /w 1 > /dev/null
bg 30 bash -c '"$0" watch -r -c 3 /w > "$1" 2> "$1.err"' "$TUMBLER" "$T_DIR/watch.out"
watch_pid=$BG_PID
bg 30 bash -c '"$0" get -w /w > "$1" 2>&1' "$TUMBLER" "$T_DIR/getw.out"
getw_pid=$BG_PID
wait_for 10 grep -q "watching /w" "$T_DIR/watch.out.err"
check_eq "watch says when it is set" 0 "$?"
wait_for 10 grep -q '^1$' "$T_DIR/getw.out"
tb set /w 2
tb create /w/c > /dev/null
tb delete /w/c
wait_st "$watch_pid"; check_eq "watch -c 3 exits 0" 0 "$ST"
check_eq "watch prints the events in order" \
    "$(printf 'NodeDataChanged /w\nNodeCreated /w/c\nNodeDeleted /w/c')" "$(cat "$T_DIR/watch.out")"
wait_st "$getw_pid"; check_eq "get -w exits once the watch fired" 0 "$ST"
check_eq "get -w prints the data, then the event" "$(printf '1\nNodeDataChanged /w')" \
    "$(cat "$T_DIR/getw.out")"
bgp 30 "$T_DIR/w.pid" bash -c '"$0" watch /w > "$1" 2>&1' "$TUMBLER" "$T_DIR/w2.out"
w2=$BG_PID
wait_for 10 grep -q "watching" "$T_DIR/w2.out"
kill -INT "$(pgrep -P "$(cat "$T_DIR/w.pid")")" 2>/dev/null
wait_st "$w2"; check_eq "watch ends with status 0 on SIGINT" 0 "$ST"
# Its reader gone (watch | head -n1), watch ends at its next line with 71,
# saying nothing (EPIPE), rather than writing into the void for ever.
# shellcheck disable=SC2016  # expanded by the inner bash
bg 30 bash -c '"$0" watch /w 2> "$1.err" | head -n1 > "$1"; echo "${PIPESTATUS[0]}" > "$1.st"' \
    "$TUMBLER" "$T_DIR/whead.out"
whead=$BG_PID
wait_for 10 grep -q "watching /w" "$T_DIR/whead.out.err"
tb set /w 3
wait_for 10 grep -q "NodeDataChanged /w" "$T_DIR/whead.out"
sleep 0.2  # head has its line: let it exit
tb set /w 4
wait_for 10 test -s "$T_DIR/whead.out.st"
check_eq "watch | head -n1: the pipeline ends, watch with 71" 71 "$(cat "$T_DIR/whead.out.st" 2>/dev/null)"
check_eq "watch | head -n1: head's line" "NodeDataChanged /w" "$(cat "$T_DIR/whead.out")"
check_eq "watch | head -n1: nothing said (EPIPE)" "tumbler: watching /w" "$(cat "$T_DIR/whead.out.err")"
kill -TERM "$whead" 2>/dev/null; wait "$whead" 2>/dev/null

# ---- long walks stop at a signal, and once stdout is gone ----
tb create /big > /dev/null
for i in $(seq 1 100); do echo "create /big/n$i"; done | tb > /dev/null
# Through a proxy holding every answer 50 ms, a walk of /big's 101 nodes
# takes 5 s or more (deleteall, setacl -R: 10 s).
proxy_start 0.05
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# walk_signal SIG STATUS ARGS...: tumbler ARGS through the proxy, sent SIG
# after 1 s; it must end with STATUS at once (within 2 s).  Its stderr in
# $T_DIR/walk.err.
walk_signal()
{
    local sig=$1 want=$2 job t0 ms
    shift 2
    rm -f "$T_DIR/walk.pid"
    bgp 60 "$T_DIR/walk.pid" "$TUMBLER" -s "$PROXY" "$@" > /dev/null 2> "$T_DIR/walk.err"
    job=$BG_PID
    pid_in "$T_DIR/walk.pid" > /dev/null
    sleep 1
    t0=$(now_ms)
    kill -"$sig" "$(cat "$T_DIR/walk.pid")"
    wait_st "$job"
    ms=$(($(now_ms) - t0))
    check_eq "$* sent SIG$sig: $want" "$want" "$ST"
    if [ "$ms" -lt 2000 ]; then ok "$* stopped ${ms} ms after SIG$sig"
    else fail "$* stopped ${ms} ms after SIG$sig, not at once"; fi
}
walk_signal TERM 143 ls -R /big
check_match "ls -R stopped by SIGTERM: says so" "stopped by signal 15" "$(cat "$T_DIR/walk.err")"
walk_signal HUP 129 setacl -R /big world:anyone:cdrwa
walk_signal INT 130 deleteall /big
n=$(tb stat /big | sed -n 's/^numChildren = //p')
if [ "${n:-0}" -gt 0 ] && [ "$n" -lt 100 ]; then ok "deleteall stopped part-way: $n nodes left"
else fail "deleteall stopped part-way: [$n] nodes left"; fi
# A reader gone (ls -R | head): the walk stops at its first line (71),
# never reaching the node it could not list at the end (102).
tb create /big/zz x world:anyone:cdwa > /dev/null
python3 -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
sys.exit(subprocess.call(sys.argv[1:], stdout=w))' "$TUMBLER" ls -R /big 2> "$T_DIR/epipe.err"
check_eq "ls -R, stdout a pipe nobody reads: stops, 71" 71 "$?"
check_eq "ls -R, stdout a pipe nobody reads: nothing said (EPIPE)" "" "$(cat "$T_DIR/epipe.err")"
tb delete /big/zz; tb deleteall /big

# ---- help and usage ----
for c in ls get stat create set delete deleteall sync getacl setacl addauth whoami \
         watch lock elect locks help getEphemerals getAllChildrenNumber removewatches \
         setquota listquota delquota; do
    out=$(tb "$c" --help); rc=$?
    if [ "$rc" = 0 ] && printf '%s' "$out" | grep -q "^Usage: tumbler"; then ok "$c --help"
    else fail "$c --help: status $rc, output [$out]"; fi
done
check_match "tumbler --help lists the commands" "^  lock " "$(tb --help)"
tb frobnicate 2>/dev/null; check_eq "unknown command: 64" 64 "$?"
tb ls -Q / 2>/dev/null; check_eq "unknown option: 64" 64 "$?"
tb get 2>/dev/null; check_eq "missing operand: 64" 64 "$?"
# The one PATH of these is checked before any connection: no server is needed to refuse it.
for c in get stat sync getacl watch delete locks getAllChildrenNumber removewatches \
         listquota delquota; do
    err=$(TUMBLER_SERVERS=127.0.0.1:1 tb "$c" rel 2>&1); rc=$?
    check_eq "$c rel: 64" 64 "$rc"
    check_match "$c rel: says why" "'rel' is not an absolute path" "$err"
    err=$(TUMBLER_SERVERS=127.0.0.1:1 tb "$c" /a /b 2>&1); rc=$?
    check_eq "$c /a /b: 64" 64 "$rc"
    check_match "$c /a /b: says why" "expected one PATH" "$err"
done

# -v VERSION is -1 (any) up to 2^31-1, checked before any connection too.
for v in x -2 2147483648; do
    for c in "set -v $v /t x" "delete -v $v /t" "setacl -v $v /t world:anyone:r"; do
        # shellcheck disable=SC2086
        err=$(TUMBLER_SERVERS=127.0.0.1:1 tb $c 2>&1); rc=$?
        check_eq "$c: 64" 64 "$rc"
        check_match "$c: says why" "bad version '$v'" "$err"
    done
done

# ---- unreachable servers ----
p1=$(free_port); p2=$(free_port)
err=$(TUMBLER_SERVERS=127.0.0.1:$p1,127.0.0.1:$p2 tb --connect-timeout 1.5 ls / 2>&1); rc=$?
check_eq "unreachable: 69" 69 "$rc"
check_match "unreachable: says so" "cannot connect to 127.0.0.1:$p1,127.0.0.1:$p2" "$err"
check_match "unreachable: lists the first address tried" "127.0.0.1:$p1 failed: Connection refused" "$err"
check_match "unreachable: lists the second address tried" "127.0.0.1:$p2 failed: Connection refused" "$err"
j=$(TUMBLER_SERVERS=127.0.0.1:$p1 tb --json --connect-timeout 1 ls / 2>/dev/null); rc=$?
check_eq "unreachable --json: 69" 69 "$rc"
check_eq "unreachable --json: the error object" "connect ECONNECTIONLOSS -4 127.0.0.1:$p1" \
    "$(json_get '" ".join(str(d["error"][k]) for k in ("command", "name", "code", "servers"))' <<< "$j")"
check_match "unreachable --json: the attempts" "127.0.0.1:$p1 failed: Connection refused" \
    "$(json_get 'd["error"]["attempts"][0]' <<< "$j")"
check_match "-s overrides TUMBLER_SERVERS" "^zookeeper$" \
    "$(TUMBLER_SERVERS=127.0.0.1:$p1 tb -s "127.0.0.1:$SRV_PORT" ls /)"
tb -s 'no port:x' ls / 2>/dev/null; check_eq "bad server list: 64" 64 "$?"
tb create /chr x > /dev/null && tb create /chr/inner y > /dev/null
check_eq "a chroot in the server list: ls" "inner" "$(tb -s "127.0.0.1:$SRV_PORT/chr" ls /)"
check_eq "a chroot in the server list: get" "y" "$(tb -s "127.0.0.1:$SRV_PORT/chr" get /inner)"

t_end
