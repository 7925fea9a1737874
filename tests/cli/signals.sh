#!/usr/bin/env bash
# tumbler lock and signals: SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1 sent to
# tumbler reach the child; the lock is released as the child exits,
# whether it exits by itself, is killed, or tumbler is interrupted while
# still waiting in the queue.  CMD runs in a process group of its own:
# forwarded signals reach the processes it started too, what it leaves
# running is stopped before the release, and all of them die with a
# SIGKILLed tumbler, also a script that traps SIGTERM.  barrier -e passes
# signals on the same way.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
srv_start
D=$T_DIR

# The child: records its pid, then each signal it gets (exiting 0 on the
# terminating ones), until 20 s pass.
CHILD='echo $$ > "$0/child.pid"
trap "echo USR1 >> \"\$0/got\"" USR1
for s in INT QUIT TERM HUP; do trap "echo $s >> \"\$0/got\"; exit 0" $s; done
i=0; while [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done; exit 5'

for sig in INT QUIT TERM HUP; do
    rm -f "$D/got" "$D/child.pid" "$D/tb.pid"
    bgp 60 "$D/tb.pid" "$TUMBLER" lock /sig -- sh -c "$CHILD" "$D"
    job=$BG_PID
    wait_for 10 test -s "$D/child.pid"
    tbpid=$(pid_in "$D/tb.pid")
    if [ "$sig" = INT ]; then
        kill -USR1 "$tbpid"
        wait_for 10 grep -q USR1 "$D/got"; check_eq "SIGUSR1 forwarded" 0 "$?"
    fi
    kill -"$sig" "$tbpid"
    wait_st "$job"
    check_eq "SIG$sig: tumbler exits with the child's status" 0 "$ST"
    check_eq "SIG$sig reached the child, once" "$sig" "$(grep -v USR1 "$D/got")"
    tb lock -n /sig -- true; check_eq "SIG$sig: lock free afterwards" 0 "$?"
done

# barrier -e passes signals on as lock does: SIGUSR1 and SIGUSR2 too.
rm -f "$D/got" "$D/child.pid" "$D/tb.pid"
bgp 60 "$D/tb.pid" "$TUMBLER" barrier -e 1 /sigbar -- sh -c "trap 'echo USR2 >> \"\$0/got\"' USR2
$CHILD" "$D"
job=$BG_PID
wait_for 10 test -s "$D/child.pid"
tbpid=$(pid_in "$D/tb.pid")
kill -USR1 "$tbpid"
wait_for 10 grep -q USR1 "$D/got"; check_eq "barrier -e: SIGUSR1 forwarded" 0 "$?"
kill -USR2 "$tbpid"
wait_for 10 grep -q USR2 "$D/got"; check_eq "barrier -e: SIGUSR2 forwarded" 0 "$?"
kill -TERM "$tbpid"
wait_st "$job"
check_eq "barrier -e: CMD's status after SIGTERM" 0 "$ST"
check_eq "barrier -e: each signal reached CMD once" "USR1 USR2 TERM" "$(xargs < "$D/got")"

# A child that does not catch the signal dies of it: 128 + N.
bgp 60 "$D/tb.pid" "$TUMBLER" lock /sig -- sleep 30
job=$BG_PID
wait_for 10 sh -c '"$0" locks /sig | grep -q "1 holding"' "$TUMBLER"
kill -TERM "$(pid_in "$D/tb.pid")"
wait_st "$job"; check_eq "child killed by the forwarded SIGTERM: 143" 143 "$ST"

# The child killed behind tumbler's back: the lock goes at once.
rm -f "$D/child.pid"
bg 60 "$TUMBLER" lock /sig -- sh -c 'echo $$ > "$0/child.pid"; exec sleep 30' "$D"
job=$BG_PID
wait_for 10 test -s "$D/child.pid"
tb lock -n /sig -- true; check_eq "held while the child runs" 1 "$?"
kill -KILL "$(cat "$D/child.pid")"
wait_st "$job"; check_eq "child killed by SIGKILL: 137" 137 "$ST"
check_match "no holder, no waiter left" "0 holding, 0 waiting" "$(tb locks /sig)"
tb lock -n /sig -- true; check_eq "lock free after the kill" 0 "$?"

gone() { ! kill -0 "$(cat "$1")" 2>/dev/null; }

# tumbler itself killed with SIGKILL: nobody keeps the lock, so no
# process of CMD may run on: the child, its own child, and a script that
# traps SIGTERM, all in CMD's process group.
rm -f "$D/child.pid" "$D/gc.pid" "$D/tb.pid"
bgp 60 "$D/tb.pid" "$TUMBLER" lock /sigk -- sh -c 'echo $$ > "$0/child.pid"
    sh -c "trap \"\" TERM; echo \$\$ > \"$0/gc.pid\"; sleep 30; :" & wait' "$D"
job=$BG_PID
wait_for 10 test -s "$D/gc.pid"
kill -KILL "$(pid_in "$D/tb.pid")"
wait_st "$job" 2>/dev/null
wait_for 5 gone "$D/child.pid"; check_eq "the child dies with tumbler" 0 "$?"
wait_for 5 gone "$D/gc.pid"
check_eq "its child, trapping SIGTERM, dies with tumbler too" 0 "$?"

# The same when a SIGKILL takes tumbler's whole process group (a
# supervisor killing the job): the watchdog is in a group of its own.
rm -f "$D/gc.pid" "$D/tb.pid"
bgp 60 "$D/tb.pid" "$TUMBLER" lock /sigk2 -- sh -c \
    'sleep 30 & echo $! > "$0/gc.pid"; wait' "$D"
job=$BG_PID
wait_for 10 test -s "$D/gc.pid"
kill -KILL -- "-$(ps -o pgid= -p "$(pid_in "$D/tb.pid")" | tr -d ' ')"
wait_st "$job" 2>/dev/null
wait_for 5 gone "$D/gc.pid"
check_eq "tumbler's group killed: CMD's child dies too" 0 "$?"

# A forwarded signal reaches the whole group: the child's own child gets
# it too (sent to the shell alone, it would not).
rm -f "$D/gc.pid" "$D/tb.pid" "$D/got.gc"
bgp 60 "$D/tb.pid" "$TUMBLER" lock /sigg -- sh -c \
    'sh -c "trap \"echo USR1 >> \\\"$0/got.gc\\\"; exit 0\" USR1; echo \$\$ > \"$0/gc.pid\"
            while :; do sleep 0.1; done" &
     trap "" USR1; wait' "$D"
job=$BG_PID
wait_for 10 test -s "$D/gc.pid"
kill -USR1 "$(pid_in "$D/tb.pid")"
wait_st "$job"; check_eq "group got SIGUSR1: the child's status" 0 "$ST"
check_eq "the SIGUSR1 reached the child's child" USR1 "$(cat "$D/got.gc" 2>/dev/null)"

# What CMD leaves running in its group is stopped as CMD exits: SIGTERM,
# SIGKILL after -k for a process that ignores it; the lock is released
# only then.
rm -f "$D/gc.pid"
bg 60 "$TUMBLER" lock -k 1 /sigg -- sh -c \
    'sh -c "trap \"\" TERM; echo \$\$ > \"$0/gc.pid\"; exec sleep 30" &
     while [ ! -s "$0/gc.pid" ]; do sleep 0.01; done; exit 3' "$D"
job=$BG_PID
start=$SECONDS
wait_for 10 test -s "$D/gc.pid"
tb lock -n /sigg -- true; check_eq "CMD's leftover running: still held" 1 "$?"
wait_st "$job"; check_eq "leftover stopped: CMD's status" 3 "$ST"
if [ $((SECONDS - start)) -lt 10 ]; then ok "leftover stopped after -k, not waited for"
else fail "leftover waited for: $((SECONDS - start)) s"; fi
check_eq "the leftover ignoring SIGTERM was killed" 0 "$(gone "$D/gc.pid"; echo $?)"
tb lock -n /sigg -- true; check_eq "then released" 0 "$?"

# A process of CMD's that left CMD's process group (GNU timeout makes a
# group of its own, as do job-control scripts) is stopped as well once
# orphaned (tumbler is a subreaper): as CMD exits, and when the lock is
# lost.  STRAY runs timeout, whose child writes its pid and sleeps.
STRAY='timeout 60 sh -c "echo \$\$ > \"\$0\"; exec sleep 60" "$0/stray.pid"'
stray_gone() { ! kill -0 "$(cat "$D/stray.pid")" 2>/dev/null; }
stray_kill() { stray_gone || kill -KILL "$(cat "$D/stray.pid")"; }
rm -f "$D/stray.pid"
bg 60 "$TUMBLER" lock /stray -- sh -c "$STRAY &
    while [ ! -s \"\$0/stray.pid\" ]; do sleep 0.01; done; exit 3" "$D"
job=$BG_PID
wait_for 10 test -s "$D/stray.pid"
wait_st "$job"; check_eq "a leftover outside the group stopped: CMD's status" 3 "$ST"
check_eq "... the leftover outside the group is gone" 0 "$(stray_gone; echo $?)"
stray_kill
rm -f "$D/stray.pid"
bg 60 "$TUMBLER" lock /stray2 -- sh -c "$STRAY; exit 4" "$D"
job=$BG_PID
wait_for 10 test -s "$D/stray.pid"
tb delete "$(tb ls /stray2 | sed 's|^|/stray2/|')"
wait_st "$job"; check_eq "lost with a process outside the group: 75" 75 "$ST"
check_eq "... that process is gone" 0 "$(stray_gone; echo $?)"
stray_kill

# A stopped process of CMD's gets SIGCONT after its SIGTERM, as timeout(1)
# sends it, so that it acts on it (its trap, here) rather than waiting,
# stopped, for the SIGKILL after -k: a forwarded SIGTERM to a stopped
# CMD, and the SIGTERM of a stopped process that left CMD's group (setsid)
# as CMD exits.
# stopped FILE: the process whose pid FILE holds is stopped.
stopped() { [ "$(cut -d' ' -f3 "/proc/$(cat "$1")/stat")" = T ]; }
rm -f "$D/got" "$D/child.pid" "$D/tb.pid"
# shellcheck disable=SC2016 # expanded by CMD's shell
bgp 30 "$D/tb.pid" "$TUMBLER" lock -k 20 /stopped -- sh -c 'echo $$ > "$0/child.pid"
    trap "echo TERM >> \"\$0/got\"; exit 0" TERM; kill -STOP $$; exit 9' "$D"
job=$BG_PID
wait_for 10 stopped "$D/child.pid"; check_eq "CMD stopped itself" 0 "$?"
kill -TERM "$(pid_in "$D/tb.pid")"
wait_st "$job"; check_eq "stopped CMD, SIGTERM forwarded: its trap's status" 0 "$ST"
check_eq "... the stopped CMD ran its SIGTERM trap" TERM "$(cat "$D/got" 2>/dev/null)"
cat > "$D/stray_stop.sh" << 'EOF2'
setsid sh -c 'echo $$ > "$0/stray.pid"
    trap "echo TERM >> \"$0/got\"; exit 0" TERM; kill -STOP $$; exit 9' "$1" &
while [ ! -s "$1/stray.pid" ]; do sleep 0.01; done
while [ "$(cut -d' ' -f3 "/proc/$(cat "$1/stray.pid")/stat")" != T ]; do sleep 0.01; done
exit 3
EOF2
rm -f "$D/got" "$D/stray.pid"
start=$SECONDS
bg 60 "$TUMBLER" lock -k 20 /stopped -- sh "$D/stray_stop.sh" "$D"
job=$BG_PID
wait_st "$job"; check_eq "a stopped process outside the group: CMD's status" 3 "$ST"
check_eq "... it ran its SIGTERM trap" TERM "$(cat "$D/got" 2>/dev/null)"
if [ $((SECONDS - start)) -lt 15 ]; then ok "... not SIGKILLed after -k 20"
else fail "... stopped process outside the group ended after $((SECONDS - start)) s"; fi
stray_kill

# Children tumbler had before CMD (a container's `crond & exec tumbler
# lock ...`) are none of CMD's: neither waited for nor stopped, as CMD
# exits or when the lock is lost.
pre_alive() { kill -0 "$(cat "$D/pre.pid")" 2>/dev/null; }
rm -f "$D/pre.pid"
start=$SECONDS
# shellcheck disable=SC2016 # expanded by CMD's shell
timeout -k 5 60 bash -c 'sleep 30 > /dev/null 2>&1 & echo $! > "$0/pre.pid"
    exec "$1" lock /pre -- true' "$D" "$TUMBLER"
check_eq "a child from before CMD: CMD's status" 0 "$?"
T_BG+=("$(cat "$D/pre.pid")")
if [ $((SECONDS - start)) -lt 20 ]; then ok "... not waited for"
else fail "... waited for: $((SECONDS - start)) s"; fi
check_eq "... still running" 0 "$(pre_alive; echo $?)"
tb lock -n /pre -- true; check_eq "... the lock released" 0 "$?"
kill "$(cat "$D/pre.pid")"
rm -f "$D/pre.pid" "$D/child.pid"
# shellcheck disable=SC2016 # expanded by CMD's shell
bg 60 bash -c 'sleep 30 > /dev/null 2>&1 & echo $! > "$0/pre.pid"
    exec "$1" lock /pre2 -- sh -c "echo \$\$ > \"\$0/child.pid\"; exec sleep 30" "$0"' \
    "$D" "$TUMBLER"
job=$BG_PID
wait_for 10 test -s "$D/child.pid"
T_BG+=("$(cat "$D/pre.pid")")
tb delete "$(tb ls /pre2 | sed 's|^|/pre2/|')"
wait_st "$job"; check_eq "a child from before CMD, lock lost: 75" 75 "$ST"
check_eq "... that child still runs" 0 "$(pre_alive; echo $?)"
kill "$(cat "$D/pre.pid")"

# A signal ignored when tumbler starts (nohup's SIGHUP) stays ignored, as
# flock(1) leaves it: tumbler neither dies of it nor passes it on, and
# CMD inherits it ignored.
cat > "$D/ign.sh" << 'EOF'
sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status > "$1/ign"
echo $$ > "$1/child.pid"
i=0; while [ ! -e "$1/done" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
exit 6
EOF
rm -f "$D/child.pid" "$D/tb.pid" "$D/done"
bgp 60 "$D/tb.pid" sh -c 'trap "" HUP; exec "$@"' sh "$TUMBLER" lock /ign -- sh "$D/ign.sh" "$D"
job=$BG_PID
wait_for 10 test -s "$D/child.pid"
check_eq "HUP ignored on entry: ignored in CMD" 1 "$(( 0x$(cat "$D/ign") & 1 ))"
kill -HUP "$(pid_in "$D/tb.pid")"
sleep 0.3  # time for tumbler to act on it, if it did
touch "$D/done"
wait_st "$job"; check_eq "HUP ignored on entry: tumbler and CMD went on, CMD's status" 6 "$ST"
rm -f "$D/child.pid" "$D/done"
bgp 60 "$D/tb.pid" "$TUMBLER" lock /ign -- sh "$D/ign.sh" "$D"
job=$BG_PID
wait_for 10 test -s "$D/child.pid"
check_eq "HUP not ignored on entry: not ignored in CMD" 0 "$(( 0x$(cat "$D/ign") & 1 ))"
touch "$D/done"; wait_st "$job"

# Interrupted while waiting: 128+2, and its queue node is gone.
rm -f "$D/child.pid"
bg 60 "$TUMBLER" lock /sig -- sh -c 'echo $$ > "$0/child.pid"; exec sleep 30' "$D"
holder=$BG_PID
wait_for 10 test -s "$D/child.pid"
bgp 60 "$D/w.pid" "$TUMBLER" lock /sig -- echo never
waiter=$BG_PID
wait_for 10 queue_at_least /sig 2
check_eq "the waiter is queued" 0 "$?"
kill -INT "$(pid_in "$D/w.pid")"
wait_st "$waiter"; check_eq "SIGINT while waiting: 130" 130 "$ST"
check_match "the waiter's node is gone" "1 holding, 0 waiting" "$(tb locks /sig)"
kill -TERM "$(cat "$D/child.pid")"
wait_st "$holder"; check_eq "holder's child ended by SIGTERM: 143" 143 "$ST"

# tumbler stopped by a job-control signal of its own group's (a shell's
# `kill -TSTP %1`): CMD's group stops too, since stopped tumbler keeps no
# session alive; continued, CMD goes on.
rm -f "$D/beat" "$D/t.pid"
# shellcheck disable=SC2016 # expanded by CMD's shell
bgp 60 "$D/t.pid" "$TUMBLER" lock /tstp -- sh -c '
    while :; do echo x >> "$0/beat"; sleep 0.05; done' "$D"
job=$BG_PID
wait_for 10 test -s "$D/beat"
tbpid=$(pid_in "$D/t.pid")
kill -TSTP "$tbpid"
is_stopped() { [ "$(cut -d' ' -f3 "/proc/$1/stat")" = T ]; }
wait_for 5 is_stopped "$tbpid"; check_eq "SIGTSTP to tumbler: tumbler stopped" 0 "$?"
n=$(wc -c < "$D/beat"); sleep 0.5
check_eq "SIGTSTP to tumbler: CMD stopped with it" "$n" "$(wc -c < "$D/beat")"
kill -CONT "$tbpid"
grows() { [ "$(wc -c < "$D/beat")" -gt "$n" ]; }
wait_for 5 grows; check_eq "continued: CMD goes on" 0 "$?"
kill -TERM "$tbpid"
wait_st "$job"; check_eq "then SIGTERM: 143" 143 "$ST"

# CMD ends, leaving a process that left its group and ignores SIGTERM:
# tumbler stops that one (SIGKILL after -k).  Meanwhile the number of
# CMD's emptied group goes to an unrelated group, which tumbler must not
# signal.  In a pid namespace of its own, where root chooses the next pid
# (ns_last_pid).
if [ "$(id -u)" = 0 ] && unshare -pf --mount-proc true 2>/dev/null; then
    rm -f "$D/cmd.pid" "$D/left" "$D/other.pid" "$D/other.alive"
    cat > "$D/cmd.sh" <<'EOF'
setsid sh -c 'trap "" TERM; : > "$0/left"; sleep 20' "$1" &
while [ ! -e "$1/left" ]; do sleep 0.05; done # out of the group
echo $$ > "$1/cmd.pid"
EOF
    cat > "$D/ns.sh" <<'EOF'
D=$1 TUMBLER=$2
"$TUMBLER" lock -k 3 /reuse -- sh "$D/cmd.sh" "$D" &
tb=$!
while [ ! -s "$D/cmd.pid" ]; do sleep 0.05; done
pg=$(cat "$D/cmd.pid")
while kill -0 "$pg" 2> /dev/null; do sleep 0.05; done # CMD reaped
echo $((pg - 1)) > /proc/sys/kernel/ns_last_pid
setsid sleep 20 &
echo $! > "$D/other.pid"
wait "$tb"
if kill -0 "$(cat "$D/other.pid")"; then echo yes > "$D/other.alive"; fi
EOF
    timeout -k 5 60 unshare -pf --mount-proc bash "$D/ns.sh" "$D" "$TUMBLER"
    check_eq "the other group has the number of CMD's" \
        "$(cat "$D/cmd.pid")" "$(cat "$D/other.pid" 2>/dev/null)"
    check_eq "CMD's group gone: its number's new group not signalled" \
        yes "$(cat "$D/other.alive" 2>/dev/null)"
fi

t_end
