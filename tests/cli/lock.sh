#!/usr/bin/env bash
# tumbler lock as a distributed flock(1): exit statuses, -n / -w / -E,
# the child's environment (nested locks too) and fencing tokens, ten concurrent incrementers
# of one file (no lost update, never two inside), the non-fair mutex, the
# read-write and semaphore kinds; without CMD, holding until interrupted.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
srv_start
D=$T_DIR

# hold_until ID LOCK-ARGS...: a holder that keeps the lock until
# $D/release.ID exists; $D/held.ID tells when it holds.
hold_until()
{
    bg 60 "$TUMBLER" lock "${@:2}" -- sh -c \
        'touch "$0/held.$1"; while [ ! -e "$0/release.$1" ]; do sleep 0.05; done' "$D" "$1"
}

# ---- exit statuses ----
tb lock /l -- sh -c 'exit 7'; check_eq "CMD's status is tumbler's" 7 "$?"
tb lock /l -- true; check_eq "status 0" 0 "$?"
tb lock /l -c 'exit 3'; check_eq "-c runs a shell command" 3 "$?"
tb lock /l -- sh -c 'kill -9 $$'; check_eq "CMD killed by signal 9: 137" 137 "$?"
tb lock /l -- "$D/does-not-exist" 2>/dev/null; check_eq "CMD not found: 127" 127 "$?"
printf '#!/bin/sh\n' > "$D/noexec"; chmod 644 "$D/noexec"
tb lock /l -- "$D/noexec" 2>/dev/null; check_eq "CMD not executable: 126" 126 "$?"
tb lock -w soon /l true 2>/dev/null; check_eq "bad -w: 64" 64 "$?"
tb lock -E 300 /l true 2>/dev/null; check_eq "bad -E: 64" 64 "$?"
tb lock l -- true 2>/dev/null; check_eq "relative PATH: 64" 64 "$?"
tb lock --shared --semaphore 2 /l true 2>/dev/null
check_eq "conflicting kinds: 64" 64 "$?"
p=$(free_port)
out=$(TUMBLER_SERVERS=127.0.0.1:$p tb --connect-timeout 1 lock /l -- echo ran 2>&1); rc=$?
check_eq "server unreachable: 69" 69 "$rc"
check_match "server unreachable: CMD did not run, addresses shown" "127.0.0.1:$p failed" "$out"
if printf '%s\n' "$out" | grep -qx ran; then fail "CMD ran without the lock"; else ok "CMD not run"; fi

# ---- environment and fencing tokens ----
env1=$(tb lock /l -- env | grep '^TUMBLER_')
env2=$(tb lock /l -- env | grep '^TUMBLER_')
check_match "TUMBLER_LOCK_PATH" "^TUMBLER_LOCK_PATH=/l$" "$env1"
check_match "TUMBLER_LOCK_TOKEN" "^TUMBLER_LOCK_TOKEN=[0-9]+$" "$env1"
check_match "TUMBLER_LOCK_NODE" "^TUMBLER_LOCK_NODE=/l/_c_[0-9a-f-]{36}-lock-[0-9]{10}$" "$env1"
check_match "TUMBLER_SERVERS" "^TUMBLER_SERVERS=$TUMBLER_SERVERS$" "$env1"
t1=$(sed -n 's/^TUMBLER_LOCK_TOKEN=//p' <<< "$env1")
t2=$(sed -n 's/^TUMBLER_LOCK_TOKEN=//p' <<< "$env2")
if [ "$t2" -gt "$t1" ]; then ok "tokens rise ($t1 < $t2)"; else fail "tokens: $t1 then $t2"; fi
# The token is the czxid of the node, as the child can check itself.
out=$(tb lock /l -- sh -c '"$0" --json stat "$TUMBLER_LOCK_NODE" |
      python3 -c "import json,sys; print(json.load(sys.stdin)[\"stat\"][\"czxid\"])";
      echo "$TUMBLER_LOCK_TOKEN"' "$TUMBLER" 2>/dev/null)
check_eq "token = czxid of the lock node" "$(sed -n 2p <<< "$out")" "$(sed -n 1p <<< "$out")"
# Nested: the inner lock's variables only, none left from the outer one
# (a semaphore and an election have no TUMBLER_LOCK_NODE of their own;
# each its own path, which the other would refuse).
for inner in "lock --semaphore 2" elect; do
    in=/inner-${inner%% *}
    # shellcheck disable=SC2086 # $inner is the command and its option
    envn=$(tb lock /outer -- "$TUMBLER" $inner "$in" -- env | grep '^TUMBLER_LOCK_' | sort)
    check_eq "$inner inside lock: only its own variables" \
        "TUMBLER_LOCK_PATH=$in" "$(grep -v '^TUMBLER_LOCK_TOKEN=' <<< "$envn")"
done

# A PATH of 1212 bytes (ZooKeeper sets paths no short limit): CMD's
# variables hold all of it, as does the node of --json without CMD.
long=$(printf '/%0100d' $(seq 1 12))
# shellcheck disable=SC2016 # expanded by CMD's shell
check_eq "a long PATH: TUMBLER_LOCK_PATH whole" "$long" \
    "$(tb lock "$long" -- sh -c 'printf %s "$TUMBLER_LOCK_PATH"')"
# shellcheck disable=SC2016 # expanded by CMD's shell
check_match "a long PATH: TUMBLER_LOCK_NODE whole" "^$long/_c_[0-9a-f-]{36}-lock-[0-9]{10}\$" \
    "$(tb lock "$long" -- sh -c 'printf %s "$TUMBLER_LOCK_NODE"')"
# shellcheck disable=SC2016 # expanded by CMD's shell
check_eq "a long PATH, --non-fair: TUMBLER_LOCK_NODE is PATH, whole" "$long-nf" \
    "$(tb lock --non-fair "$long-nf" -- sh -c 'printf %s "$TUMBLER_LOCK_NODE"')"
bgp 60 "$D/h.pid" "$TUMBLER" --json lock "$long" > "$D/long.out"
job=$BG_PID
wait_for 10 grep -q token "$D/long.out"
check_match "a long PATH, --json without CMD: the node whole" "^$long/_c_.*-lock-[0-9]{10}\$" \
    "$(json_get 'd["node"]' < "$D/long.out")"
kill -TERM "$(pid_in "$D/h.pid")"
wait_st "$job"; check_eq "a long PATH, --json without CMD: 0" 0 "$ST"

# ---- -n, -w, -E against a holder ----
hold_until 1 /l
holder=$BG_PID
wait_for 10 test -e "$D/held.1"; check_eq "holder holds" 0 "$?"
start=$SECONDS
tb lock -n /l -- echo ran > "$D/n.out"; check_eq "-n while held: 1" 1 "$?"
check_eq "-n: CMD did not run" "" "$(cat "$D/n.out")"
tb lock -n -E 42 /l -- true; check_eq "-n -E 42: 42" 42 "$?"
tb lock -w 0 /l -- true; check_eq "-w 0 is -n" 1 "$?"
t0=$(date +%s%N)
tb lock -w 1 /l -- true; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check_eq "-w 1 while held: 1" 1 "$rc"
if [ "$ms" -ge 900 ] && [ "$ms" -lt 5000 ]; then ok "-w 1 waited ${ms} ms"
else fail "-w 1 waited ${ms} ms"; fi
tb lock -w 0.5 -E 0 /l -- true; check_eq "-w with -E 0" 0 "$?"
check_match "the waiters left no node" "1 holding, 0 waiting" "$(tb locks /l)"
# -w long enough: acquired when the holder lets go.
bg 30 bash -c '"$0" lock -w 20 /l -- echo got > "$1"' "$TUMBLER" "$D/w.out"
waiter=$BG_PID
wait_for 10 sh -c '"$0" locks /l | grep -q "1 waiting"' "$TUMBLER"
touch "$D/release.1"
wait_st "$waiter"; check_eq "-w 20: acquired after the release" 0 "$ST"
check_eq "-w 20: CMD ran" "got" "$(cat "$D/w.out")"
wait_st "$holder"; check_eq "holder's status" 0 "$ST"
check_match "released when CMD exited" "0 holding, 0 waiting" "$(tb locks /l)"
tb lock -n /l -- true; check_eq "free again: -n acquires" 0 "$?"

# ---- ten processes increment one number ----
# Each reads the file, pauses, writes it back plus one: without mutual
# exclusion updates get lost.  A directory made inside the critical
# section catches any overlap.
incr()
{
    local mode=$1 path=$2 i pids=()
    echo 0 > "$D/counter"
    rm -f "$D/overlap"
    for i in $(seq 1 10); do
        timeout -k 5 90 "$TUMBLER" lock $mode "$path" -- sh -c '
            mkdir "$0/inside" 2>/dev/null || touch "$0/overlap"
            n=$(cat "$0/counter"); sleep 0.05; echo $((n + 1)) > "$0/counter"
            echo "$TUMBLER_LOCK_TOKEN" >> "$0/tokens"
            rmdir "$0/inside"' "$D" &
        pids+=($!)
    done
    local bad=0
    for i in "${pids[@]}"; do wait "$i" || bad=$((bad + 1)); done
    check_eq "ten lock $mode: all exit 0" 0 "$bad"
    check_eq "ten lock $mode: no lost update" 10 "$(cat "$D/counter")"
    if [ -e "$D/overlap" ]; then fail "ten lock $mode: two inside at once"
    else ok "ten lock $mode: never two inside"; fi
}
rm -f "$D/tokens"
incr "" /counter
check_eq "ten tokens, all different" 10 "$(sort -u "$D/tokens" | wc -l)"
check_eq "tokens in the order the holders ran" "$(cat "$D/tokens")" "$(sort -n "$D/tokens")"
# The non-fair lock is the node PATH itself: a path of its own (the fair
# lock's container may still be there).
incr --non-fair /counter-nf

# ---- read-write and semaphore kinds ----
tb lock -n --shared /rw -- true; check_eq "--shared alone" 0 "$?"
# Two shared holders hold at the same time: each waits for the other
# (proof that they overlap), then for the release.
for i in a b; do
    bg 30 "$TUMBLER" lock --shared /rw -- sh -c '
        touch "$0/r.$1"
        for k in $(seq 100); do [ -e "$0/r.$2" ] && break; sleep 0.1; done
        [ -e "$0/r.$2" ] || exit 9
        while [ ! -e "$0/release.rw" ]; do sleep 0.05; done' \
        "$D" "$i" "$([ $i = a ] && echo b || echo a)"
    eval "pid_$i=\$BG_PID"
done
wait_for 10 test -e "$D/r.a" -a -e "$D/r.b"
tb lock -n --exclusive /rw -- true; check_eq "--exclusive while shared: 1" 1 "$?"
touch "$D/release.rw"
wait_st "$pid_a"; check_eq "shared a held with b" 0 "$ST"
wait_st "$pid_b"; check_eq "shared b held with a" 0 "$ST"
hold_until 2 --exclusive /rw
ex=$BG_PID
wait_for 10 test -e "$D/held.2"
tb lock -n --shared /rw -- true; check_eq "--shared while exclusive: 1" 1 "$?"
touch "$D/release.2"; wait_st "$ex"
tb lock -n --semaphore 2 /sem -- true; check_eq "--semaphore alone" 0 "$?"
hold_until 3 --semaphore 2 /sem; s1=$BG_PID
hold_until 4 --semaphore 2 /sem; s2=$BG_PID
wait_for 10 test -e "$D/held.3" -a -e "$D/held.4"; check_eq "two leases of 2" 0 "$?"
tb lock -n --semaphore 2 /sem -- true; check_eq "third lease of 2: 1" 1 "$?"
touch "$D/release.3"; wait_st "$s1"
tb lock -n --semaphore 2 /sem -- true; check_eq "a lease again after a release" 0 "$?"
touch "$D/release.4"; wait_st "$s2"

# ---- no CMD: held until SIGINT or SIGTERM, saying so with the token ----
for sig in INT TERM; do
    bgp 60 "$D/h.pid" "$TUMBLER" lock /bare > "$D/bare.out"
    job=$BG_PID
    wait_for 10 grep -q holding "$D/bare.out"
    check_match "no CMD: says it holds, with the token" '^holding /bare \(token [0-9]+\)$' \
        "$(cat "$D/bare.out")"
    token=$(sed -n 's/.*(token \([0-9]*\))$/\1/p' "$D/bare.out")
    check_eq "no CMD: the token is the holder's node's" "$token" \
        "$(tb --json locks /bare | json_get 'd["holders"][0]["token"]')"
    tb lock -n /bare -- true; check_eq "no CMD: held meanwhile" 1 "$?"
    kill -"$sig" "$(pid_in "$D/h.pid")"
    wait_st "$job"; check_eq "no CMD: SIG$sig ends it, 0" 0 "$ST"
    tb lock -n /bare -- true; check_eq "no CMD: released after SIG$sig" 0 "$?"
done
bgp 60 "$D/h.pid" "$TUMBLER" --json lock /bare > "$D/bare.out"
job=$BG_PID
wait_for 10 grep -q token "$D/bare.out"
check_match "no CMD, --json: path, token and node" '^/bare [0-9]+ /bare/_c_.*-lock-[0-9]{10}$' \
    "$(json_get '"%s %d %s" % (d["path"], d["token"], d["node"])' < "$D/bare.out")"
kill -TERM "$(pid_in "$D/h.pid")"
wait_st "$job"; check_eq "no CMD, --json: 0" 0 "$ST"

t_end
