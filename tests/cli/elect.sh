#!/usr/bin/env bash
# tumbler elect: of several candidates exactly one runs its command; when
# it exits, the next one takes over, in the order they joined; -w gives
# up with 1 (or -E's code), -w 0 after one try; the non-fair election
# elects one too; a refused candidacy exits with its error's status (65,
# 102).
# elect -l watches an election without taking part and prints each new
# leader (its reader gone, it ends: 71); elect without CMD leads until
# interrupted.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
srv_start
D=$T_DIR

# A leader: appends its name to $D/leaders, records its token, and runs
# until $D/stop.NAME exists (at most 60 s).
LEADER='echo "$1" >> "$0/leaders"; echo "$TUMBLER_LOCK_TOKEN" >> "$0/tokens"
i=0; while [ ! -e "$0/stop.$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done'

nleaders() { if [ -e "$D/leaders" ]; then wc -l < "$D/leaders"; else echo 0; fi; }
leaders_at_least() { [ "$(nleaders)" -ge "$1" ]; }

tb elect -w 5 /probe -- true; rc=$?
check_eq "a lone candidate leads at once" 0 "$rc"
# -w 0 tries once, as lock's does: alone, it leads.
check_eq "-w 0 alone: leads" "led 0" "$(tb elect -w 0 /w0 -- printf led; echo " $?")"
check_eq "-w 0 alone, non-fair: leads" "led 0" \
    "$(tb elect --non-fair -w 0 /w0nf -- printf led; echo " $?")"

# ---- three candidates, joining in order a, b, c ----
pids=()
for n in a b c; do
    bg 120 "$TUMBLER" elect /e -- sh -c "$LEADER" "$D" "$n"
    pids+=("$BG_PID")
    # Join one after the other, so the order is known.
    wait_for 10 queue_at_least /e "${#pids[@]}" || fail "candidate $n never queued"
done
wait_for 10 leaders_at_least 1
sleep 1  # time for a wrong second leader to show up
check_eq "exactly one leader" "a" "$(cat "$D/leaders")"
check_match "locks: the leader and two candidates in order" \
    "election, 1 holding, 2 waiting" "$(tb locks /e)"
tb elect -w 0.5 /e -- echo never > "$D/never"; check_eq "-w while another leads: 1" 1 "$?"
tb elect -w 0.5 -E 9 /e -- true; check_eq "-w -E 9: 9" 9 "$?"
tb elect -w 0 /e -- echo never >> "$D/never"; check_eq "-w 0 while another leads: 1" 1 "$?"
check_eq "the command of a candidate that gave up never ran" "" "$(cat "$D/never")"

touch "$D/stop.a"
wait_st "${pids[0]}"; check_eq "leader a exits with its command's status" 0 "$ST"
wait_for 10 leaders_at_least 2
sleep 1
check_eq "b takes over, alone" "$(printf 'a\nb')" "$(cat "$D/leaders")"
touch "$D/stop.b"
wait_st "${pids[1]}"; check_eq "leader b exits 0" 0 "$ST"
wait_for 10 leaders_at_least 3
check_eq "then c" "$(printf 'a\nb\nc')" "$(cat "$D/leaders")"
touch "$D/stop.c"
wait_st "${pids[2]}"; check_eq "leader c exits 0" 0 "$ST"
check_eq "leaders' tokens rise" "$(cat "$D/tokens")" "$(sort -n "$D/tokens")"
check_eq "three different tokens" 3 "$(sort -u "$D/tokens" | wc -l)"

# ---- a leader killed: the next one leads ----
rm -f "$D/leaders" "$D"/stop.*
bgp 60 "$D/x.pid" "$TUMBLER" elect /e2 -- sh -c "$LEADER" "$D" x
x=$BG_PID
wait_for 10 leaders_at_least 1
bg 60 "$TUMBLER" elect /e2 -- sh -c "$LEADER" "$D" y
y=$BG_PID
wait_for 10 queue_at_least /e2 2
kill -TERM "$(pid_in "$D/x.pid")"
wait_st "$x"; check_eq "SIGTERM forwarded to the leader's command: 143" 143 "$ST"
wait_for 10 leaders_at_least 2
check_eq "y leads once x is gone" "$(printf 'x\ny')" "$(cat "$D/leaders")"
touch "$D/stop.y"; wait_st "$y"

# ---- non-fair ----
rm -f "$D/leaders" "$D"/stop.*
pids=()
for n in p q; do
    bg 60 "$TUMBLER" elect --non-fair /nf -- sh -c "$LEADER" "$D" "$n"
    pids+=("$BG_PID")
done
wait_for 10 leaders_at_least 1
sleep 1
check_eq "non-fair: exactly one leader" 1 "$(nleaders)"
first=$(cat "$D/leaders")
touch "$D/stop.$first"
wait_for 10 leaders_at_least 2
check_eq "non-fair: the other one next" 2 "$(sort -u "$D/leaders" | wc -l)"
touch "$D/stop.p" "$D/stop.q"
for p in "${pids[@]}"; do wait "$p"; done

# ---- a candidacy refused: the error's status, the command never run ----
# (not a wait for ever: the election tells its candidate why it is out)
tb create /nfc > /dev/null && tb create /nfc/child > /dev/null
tb elect --non-fair /nfc -- echo never > "$D/never" 2> "$D/refused"
check_eq "non-fair on a path with children: 65" 65 "$?"
check_match "... named on stderr" "EFOREIGNLOCK" "$(cat "$D/refused")"
tb create /ro > /dev/null && tb setacl /ro world:anyone:r > /dev/null
tb elect /ro -- echo never >> "$D/never" 2> /dev/null
check_eq "a path whose ACL refuses the candidate's node: 102" 102 "$?"
check_eq "the refused candidates' commands never ran" "" "$(cat "$D/never")"

# ---- -l: each new leader printed, once, by an observer that does not
# take part ----
rm -f "$D/leaders" "$D/tokens" "$D"/stop.*
bgp 60 "$D/o.pid" "$TUMBLER" elect -l /obs > "$D/obs.out"
obs=$BG_PID
wait_for 10 grep -q "no leader" "$D/obs.out"
check_eq "-l: no leader yet" "no leader" "$(cat "$D/obs.out")"
pids=()
for n in A B; do
    bg 60 "$TUMBLER" elect --data "$n" /obs -- sh -c "$LEADER" "$D" "$n"
    pids+=("$BG_PID")
    wait_for 10 queue_at_least /obs "${#pids[@]}" || fail "candidate $n never queued"
done
wait_for 10 grep -q "leader A" "$D/obs.out"
check_match "-l: the observer is no candidate" "election, 1 holding, 1 waiting" "$(tb locks /obs)"
touch "$D/stop.A"; wait "${pids[0]}"
wait_for 10 grep -q "leader B" "$D/obs.out"
touch "$D/stop.B"; wait "${pids[1]}"
nleft() { [ "$(grep -c "no leader" "$D/obs.out")" -ge 2 ]; }
wait_for 10 nleft
kill -INT "$(pid_in "$D/o.pid")"
wait_st "$obs"; check_eq "-l: SIGINT ends it, 0" 0 "$ST"
check_eq "-l: each leader once, in order, with its token" \
    "$(printf 'no leader\nleader A (token %s)\nleader B (token %s)\nno leader' \
        "$(sed -n 1p "$D/tokens")" "$(sed -n 2p "$D/tokens")")" "$(cat "$D/obs.out")"
tb elect -l /obs -- true 2>/dev/null; check_eq "-l with a command: 64" 64 "$?"
# Its reader gone (elect -l | head -n1), -l ends at its next line with 71,
# saying nothing (EPIPE), rather than writing into the void for ever.
# shellcheck disable=SC2016  # expanded by the inner bash
bg 30 bash -c '"$0" elect -l /obshead 2> "$1.err" | head -n1 > "$1"; echo "${PIPESTATUS[0]}" > "$1.st"' \
    "$TUMBLER" "$D/obshead.out"
ohead=$BG_PID
wait_for 10 grep -q "no leader" "$D/obshead.out"
sleep 0.2  # head has its line: let it exit
bg 60 "$TUMBLER" elect --data H /obshead -- sh -c "$LEADER" "$D" H
h=$BG_PID
wait_for 10 test -s "$D/obshead.out.st"
check_eq "elect -l | head -n1: the pipeline ends, -l with 71" 71 "$(cat "$D/obshead.out.st" 2>/dev/null)"
check_eq "elect -l | head -n1: nothing said (EPIPE)" "" "$(cat "$D/obshead.out.err")"
kill -TERM "$ohead" 2>/dev/null; wait "$ohead" 2>/dev/null
touch "$D/stop.H"; wait "$h"

# The non-fair election, and --json.
rm -f "$D/leaders" "$D"/stop.*
bg 60 "$TUMBLER" elect --non-fair --data C /obsnf -- sh -c "$LEADER" "$D" C
c=$BG_PID
wait_for 10 leaders_at_least 1
bgp 60 "$D/o.pid" "$TUMBLER" --json elect -l /obsnf > "$D/obs.out"
obs=$BG_PID
wait_for 10 grep -q leader "$D/obs.out"
check_match "-l --json: the non-fair leader" '^C 0x[0-9a-f]+ /obsnf [0-9]+$' \
    "$(json_get '"%s %s %s %d" % (d["leader"]["owner"], d["leader"]["session"], d["leader"]["node"], d["leader"]["token"])' < "$D/obs.out")"
touch "$D/stop.C"; wait "$c"
wait_for 10 grep -q '"leader": *null' "$D/obs.out"
check_eq "-l --json: then none" 0 "$?"
kill -TERM "$(pid_in "$D/o.pid")"; wait "$obs"

# A PATH of 1212 bytes (ZooKeeper sets paths no short limit): -l reads
# the leader's node whole, not a cut path that names no node.
long=$(printf '/%0100d' $(seq 1 12))
bgp 60 "$D/e.pid" "$TUMBLER" elect --data L "$long" > "$D/long.out"
job=$BG_PID
wait_for 10 grep -q leading "$D/long.out"
bgp 60 "$D/o.pid" "$TUMBLER" elect -l "$long" > "$D/obs.out"
obs=$BG_PID
wait_for 10 grep -q leader "$D/obs.out"
check_match "-l, a long PATH: the leader" '^leader L \(token [0-9]+\)$' "$(cat "$D/obs.out")"
kill -TERM "$(pid_in "$D/o.pid")"; wait "$obs"
bgp 60 "$D/o.pid" "$TUMBLER" --json elect -l "$long" > "$D/obs.out"
obs=$BG_PID
wait_for 10 grep -q leader "$D/obs.out"
check_match "-l --json, a long PATH: the leader's node, whole" \
    "^L $long/_c_[0-9a-f-]{36}-latch-[0-9]{10}\$" \
    "$(json_get '"%s %s" % (d["leader"]["owner"], d["leader"]["node"])' < "$D/obs.out" 2>&1)"
kill -TERM "$(pid_in "$D/o.pid")"; wait "$obs"
kill -TERM "$(pid_in "$D/e.pid")"
wait_st "$job"; check_eq "a long PATH: the leader ends on SIGTERM, 0" 0 "$ST"

# ---- no CMD: leads until interrupted ----
bgp 60 "$D/e.pid" "$TUMBLER" elect /bare > "$D/bare.out"
job=$BG_PID
wait_for 10 grep -q leading "$D/bare.out"
check_match "no CMD: says it leads, with the token" '^leading /bare \(token [0-9]+\)$' \
    "$(cat "$D/bare.out")"
tb elect -w 0.3 /bare -- true; check_eq "no CMD: leads meanwhile" 1 "$?"
kill -TERM "$(pid_in "$D/e.pid")"
wait_st "$job"; check_eq "no CMD: SIGTERM ends it, 0" 0 "$ST"

# ---- the leader's node deleted by someone else while CMD runs ----
# Leadership is lost: CMD gets SIGTERM and tumbler exits 75.  The
# candidate runs again by itself and wins again while CMD takes its time
# to end; that is no leadership kept, and stderr must not say so.
for nf in --non-fair ""; do
    rm -f "$D/leaders" "$D/term"
    # shellcheck disable=SC2016  # CMD's own $0
    bg 60 "$TUMBLER" elect $nf /del$nf -- sh -c \
        'trap "touch $0/term; sleep 1; exit 3" TERM; echo x >> "$0/leaders"; sleep 30 & wait' \
        "$D" 2> "$D/del.err"
    job=$BG_PID
    wait_for 10 leaders_at_least 1
    if [ -n "$nf" ]; then node=/del$nf; else node=/del/$(tb ls /del); fi
    tb delete "$node"
    wait_st "$job"
    check_eq "elect $nf, node deleted: 75" 75 "$ST"
    check_eq "elect $nf, node deleted: CMD got SIGTERM" yes "$([ -e "$D/term" ] && echo yes)"
    check_match "elect $nf, node deleted: lost, said" \
        "^tumbler: leadership of /del$nf lost; sending SIGTERM to sh and its process group \([0-9]+\)$" \
        "$(cat "$D/del.err")"
    check_eq "elect $nf, node deleted: only that said" 1 "$(wc -l < "$D/del.err")"
done

t_end
