#!/usr/bin/env bash
# The lock lost while CMD runs: the server is stopped for longer than the
# session timeout, so the session can only be gone.  CMD must get SIGTERM
# (SIGKILL after the grace period if it ignores it) and tumbler must exit
# with 75.  Both signals go to CMD's whole process group, so nothing CMD
# started runs on.  Also: --lost-on-disconnect acts as soon as the
# connection drops, and a server back within the timeout keeps the lock,
# saying so on stderr.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
D=$T_DIR
# tickTime 2000 makes 4 s the shortest session timeout the server grants.
TO=4

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# A child that records SIGTERM and then exits 0 (or, with "ignore",
# ignores it), running at most 60 s.
child()
{
    if [ "$1" = ignore ]; then
        echo 'echo "$TUMBLER_LOCK_TOKEN" > "$0/token"; echo $$ > "$0/child.pid"
              trap "echo TERM >> \"\$0/got\"" TERM
              i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done'
    else
        echo 'echo "$TUMBLER_LOCK_TOKEN" > "$0/token"; echo $$ > "$0/child.pid"
              trap "echo TERM >> \"\$0/got\"; exit 0" TERM
              i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done'
    fi
}

# run_lost NAME EXTRA-ARGS... : starts a holder, stops the server once it
# holds, sets ST (status) and MS (ms from the stop to tumbler's exit).
run_lost()
{
    local mode=$1
    shift
    rm -f "$D/got" "$D/child.pid"
    srv_start
    bg 90 "$TUMBLER" --session-timeout "$TO" lock "$@" /lost -- sh -c "$(child "$mode")" "$D"
    local job=$BG_PID
    wait_for 10 test -s "$D/child.pid" || fail "holder never ran its child"
    local t0
    t0=$(now_ms)
    srv_stop
    wait_st "$job"
    MS=$(($(now_ms) - t0))
    CHILD_PID=$(cat "$D/child.pid")
}

# ---- SIGTERM, exit 75 ----
run_lost term -k 5
check_eq "lock lost: 75" 75 "$ST"
check_eq "the child got SIGTERM" "TERM" "$(cat "$D/got" 2>/dev/null)"
if [ "$MS" -ge $((TO * 1000 * 2 / 3)) ] && [ "$MS" -lt $((TO * 1000 + 6000)) ]; then
    ok "acted ${MS} ms after the server stopped (session timeout ${TO} s)"
else
    fail "acted ${MS} ms after the server stopped (session timeout ${TO} s)"
fi
if kill -0 "$CHILD_PID" 2>/dev/null; then fail "child still running"; else ok "child gone"; fi

# ---- a child that ignores SIGTERM gets SIGKILL after -k ----
run_lost ignore -k 1
check_eq "lock lost, child killed: 75" 75 "$ST"
check_eq "the child saw SIGTERM first" "TERM" "$(cat "$D/got" 2>/dev/null)"
sleep 0.2
if kill -0 "$CHILD_PID" 2>/dev/null; then fail "child survived SIGKILL"
else ok "child killed after the grace period"; fi

# ---- --lost-on-disconnect: at the first sign of trouble ----
run_lost term --lost-on-disconnect
check_eq "--lost-on-disconnect: 75" 75 "$ST"
check_eq "--lost-on-disconnect: the child got SIGTERM" "TERM" "$(cat "$D/got" 2>/dev/null)"
if [ "$MS" -lt $((TO * 1000 * 2 / 3)) ]; then
    ok "--lost-on-disconnect acted after ${MS} ms"
else
    fail "--lost-on-disconnect acted after ${MS} ms, not before the session timeout"
fi

# ---- the whole group is stopped: a script that traps SIGTERM, and its
# background child ----
rm -f "$D/got" "$D/got.gc" "$D/gc.ready" "$D/child.pid" "$D/gc.pid"
srv_start
bg 60 "$TUMBLER" lock --lost-on-disconnect -k 1 /lostg -- sh -c \
    'trap "echo TERM >> \"\$0/got\"" TERM; sleep 62 & echo $! > "$0/gc.pid"
     sh -c "trap \"echo TERM >> \\\"$0/got.gc\\\"; exit 0\" TERM; : > \"$0/gc.ready\"
            while :; do sleep 0.1; done" &
     echo $$ > "$0/child.pid"; while :; do sleep 0.1; done' "$D"
job=$BG_PID
wait_for 10 test -s "$D/child.pid" -a -e "$D/gc.ready" || fail "holder never ran its child"
t0=$(now_ms)
srv_stop
wait_st "$job"
MS=$(($(now_ms) - t0))
check_eq "group: lost, 75" 75 "$ST"
check_eq "group: the script trapped the SIGTERM" "TERM" "$(cat "$D/got" 2>/dev/null)"
check_eq "group: its child got the SIGTERM too" "TERM" "$(cat "$D/got.gc" 2>/dev/null)"
for f in child gc; do
    if kill -0 "$(cat "$D/$f.pid")" 2>/dev/null; then fail "group: the $f still runs"
    else ok "group: the $f is gone"; fi
done
if [ "$MS" -lt 5000 ]; then ok "group: SIGKILLed ${MS} ms after the stop (-k 1)"
else fail "group: SIGKILLed ${MS} ms after the stop (-k 1)"; fi

# ---- a stopped CMD: the SIGTERM comes with SIGCONT ----
# As timeout(1) sends it: stopped, CMD would run no trap and only die of
# the SIGKILL after -k.  The lock is lost by another client deleting its
# node.
rm -f "$D/got" "$D/child.pid"
srv_start
# shellcheck disable=SC2016 # expanded by CMD's shell
bg 60 "$TUMBLER" lock -k 20 /stopped -- sh -c 'echo $$ > "$0/child.pid"
    trap "echo T >> \"\$0/got\"; exit 0" TERM; kill -STOP $$; exit 9' "$D"
job=$BG_PID
stopped() { [ "$(cut -d' ' -f3 "/proc/$(cat "$D/child.pid")/stat")" = T ]; }
wait_for 10 stopped || fail "stopped CMD: it never stopped"
t0=$(now_ms)
tb delete "$(tb ls /stopped | sed 's|^|/stopped/|')"
wait_st "$job"
MS=$(($(now_ms) - t0))
check_eq "stopped CMD, lock lost: 75" 75 "$ST"
check_eq "stopped CMD: continued, it ran its SIGTERM trap" T "$(cat "$D/got" 2>/dev/null)"
if [ "$MS" -lt 10000 ]; then ok "stopped CMD: ended ${MS} ms after the loss (-k 20)"
else fail "stopped CMD: ended ${MS} ms after the loss (-k 20)"; fi
srv_stop

# ---- stderr that takes nothing: the loss acted on all the same ----
# tumbler's stderr is a pipe nobody reads, full (a hung logger); with -v
# the library's thread says things there too.  What tumbler would say is
# dropped, never waited for: CMD (its stderr its own) is stopped, and the
# status tells.
# fill_fifo: opens the fifo $D/full as fd $full, filled: a write to it
# blocks, as to a pipe whose reader hangs.
fill_fifo()
{
    [ -p "$D/full" ] || mkfifo "$D/full"
    exec {full}<>"$D/full"
    python3 - "$full" <<'EOF'
import fcntl, os, sys
fd = int(sys.argv[1])
fl = fcntl.fcntl(fd, fcntl.F_GETFL)
fcntl.fcntl(fd, fcntl.F_SETFL, fl | os.O_NONBLOCK)
try:
    while True:
        os.write(fd, b"x" * 4096)
except BlockingIOError:
    pass
fcntl.fcntl(fd, fcntl.F_SETFL, fl)  # tumbler's stderr blocks, as a pipe does
EOF
}

rm -f "$D/got" "$D/child.pid"
srv_start
fill_fifo
bg 60 "$TUMBLER" -v lock -k 20 /full -- sh -c "exec 2>/dev/null; $(child term)" "$D" 2>&"$full"
job=$BG_PID
wait_for 10 test -s "$D/child.pid" || fail "full stderr: CMD never ran"
tb delete "$(tb ls /full | sed 's|^|/full/|')"
wait_st "$job"
check_eq "full stderr, lock lost: 75" 75 "$ST"
check_eq "full stderr: CMD got SIGTERM" TERM "$(cat "$D/got" 2>/dev/null)"
exec {full}>&-
srv_stop

# srv_again: the server stopped by srv_stop started again on the same
# port and data.
srv_again()
{
    "$TUMBLERD" --clientPort="$SRV_PORT" --clientPortAddress=127.0.0.1 \
        --dataDir="$T_DIR/data" --tickTime=2000 >> "$T_DIR/server.log" 2>&1 < /dev/null &
    SRV_PID=$!
    wait_for 10 sh -c '[ "$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$0 && printf ruok >&3 && cat <&3")" = imok ]' "$SRV_PORT"
}

# srv_restart: the server stopped and started again on the same port and
# data, as an operator's restart (the client sees its connection drop).
srv_restart()
{
    srv_stop
    srv_again
}

# The same without CMD: the hold's notices (the connection lost, then
# back) and --verbose's are dropped, and SIGTERM releases at once.
srv_start
fill_fifo
bgp 60 "$D/tb.pid" "$TUMBLER" -v --session-timeout 20 lock /fullhold \
    > "$D/held" 2>&"$full"
job=$BG_PID
wait_for 10 grep -q '^holding /fullhold' "$D/held" || fail "full stderr: never held"
srv_restart
wait_for 10 sh -c '"$0" locks /fullhold | grep -q "1 holding"' "$TUMBLER" ||
    fail "full stderr: the hold did not survive the restart"
kill -TERM "$(cat "$D/tb.pid")"
wait_for 10 sh -c '! kill -0 "$0"' "$(cat "$D/tb.pid")" ||
    fail "full stderr, no CMD: SIGTERM did not end tumbler"
wait_st "$job"
check_eq "full stderr, no CMD, SIGTERM: 0" 0 "$ST"
check_eq "full stderr, no CMD: released" "" "$(tb ls /fullhold)"
exec {full}>&-
srv_stop

# ---- the connection lost and back while CMD runs: said on stderr ----
rm -f "$D/child.pid" "$D/done"
srv_start
bg 60 "$TUMBLER" --session-timeout 8 lock /said -- sh -c \
    'echo $$ > "$0/child.pid"; while [ ! -e "$0/done" ]; do sleep 0.05; done; exit 4' \
    "$D" 2> "$D/said.err"
job=$BG_PID
wait_for 10 test -s "$D/child.pid"
srv_restart
wait_for 15 grep -q "connection back" "$D/said.err"
check_eq "notice: connection back" \
    "tumbler: connection back: lock of /said kept" "$(grep "connection back" "$D/said.err")"
check_eq "notice: connection lost" \
    "tumbler: connection lost: lock of /said is kept only if the session is back within its timeout" \
    "$(grep "connection lost" "$D/said.err")"
touch "$D/done"
wait_st "$job"; check_eq "server restarted within the session: CMD's status" 4 "$ST"
srv_stop

# ---- watch: the connection lost and back is said, without -v ----
# The watch is set again on the new connection, but what changed while it
# was lost is not reported (as ZooKeeper's persistent watches): said.
srv_start
tb create /wl x > /dev/null
bg 60 "$TUMBLER" --session-timeout 8 watch -c 1 /wl > "$D/wl.out" 2> "$D/wl.err"
job=$BG_PID
wait_for 10 grep -q "watching /wl" "$D/wl.err"
srv_restart
wait_for 15 grep -q "connection back" "$D/wl.err"
check_eq "watch: connection lost, said" \
    "tumbler: connection lost: watch on /wl goes on if the session is back within its timeout" \
    "$(grep "connection lost" "$D/wl.err")"
check_match "watch: connection back, said: events may have been missed" \
    "^tumbler: connection back: watch on /wl goes on; .*may have been missed$" \
    "$(grep "connection back" "$D/wl.err")"
tb set /wl y > /dev/null
wait_st "$job"; check_eq "watch: still watching after the connection came back" 0 "$ST"
check_eq "watch: the event after it" "NodeDataChanged /wl" "$(cat "$D/wl.out")"

# ---- the shell: a session expired during watch is dropped ----
# The watch ends with 112, and the next command opens a new session, as
# the shell does for an expiry between two commands.  A get -w's watch
# ended with it is said on stderr, not among the output (where --json's
# would not be JSON).
rm -f "$D/go"
# shellcheck disable=SC2016  # the inner shell's $0, $1, $2
bg 60 bash -c '{ echo "get -w /wl"; echo "watch /wl"; while [ ! -e "$1/go" ]; do sleep 0.1; done; echo "get /wl"; } |
    "$0" --session-timeout "$2" > "$1/sh.out" 2> "$1/sh.err"' "$TUMBLER" "$D" "$TO"
job=$BG_PID
wait_for 10 grep -q "watching /wl" "$D/sh.err"
srv_stop
wait_for $((TO + 10)) grep -q "ended: session expired" "$D/sh.err"
srv_again
touch "$D/go"
wait_st "$job"
check_eq "shell: watch ended by an expiry: its status" 112 "$ST"
check_match "shell: watch ended by an expiry: the next command opens a new session" \
    "session expired; the next command opens a new one" "$(cat "$D/sh.err")"
check_eq "shell: the command after the expiry ran on a new session; nothing else out" \
    "$(printf 'y\ny')" "$(cat "$D/sh.out")"
check_match "shell: the get -w's watch ended, said on stderr" \
    "tumbler: watch on /wl ended: session expired" "$(cat "$D/sh.err")"
srv_stop

# ---- holding without CMD: lost the same way ----
srv_start
bg 60 "$TUMBLER" lock --lost-on-disconnect /bare > "$D/bare.out" 2> "$D/bare.err"
job=$BG_PID
wait_for 10 grep -q holding "$D/bare.out"
srv_stop
wait_st "$job"; check_eq "held without CMD, lost: 75" 75 "$ST"
check_match "held without CMD, lost: said" "connection lost: lock of /bare may be lost" \
    "$(cat "$D/bare.err")"

# ---- the server back within the timeout: the lock is kept ----
rm -f "$D/got" "$D/child.pid" "$D/done"
srv_start
bg 90 "$TUMBLER" --session-timeout 8 lock /kept -- sh -c \
    'echo $$ > "$0/child.pid"; while [ ! -e "$0/done" ]; do sleep 0.1; done; exit 4' "$D"
job=$BG_PID
wait_for 10 test -s "$D/child.pid"
kill -STOP "$SRV_PID"
sleep 2
kill -CONT "$SRV_PID"
sleep 1
touch "$D/done"
wait_st "$job"
check_eq "server paused 2 s of an 8 s session: CMD's own status" 4 "$ST"
srv_stop

# ---- tumbler itself paused past the timeout (a stalled holder) ----
# While it is stopped its session expires and a waiter takes the lock
# with a larger token; on resume it must stop its child at once.
rm -f "$D/got" "$D/child.pid" "$D/tb.pid" "$D/next"
srv_start
bgp 90 "$D/tb.pid" "$TUMBLER" --session-timeout "$TO" lock -k 5 /paused -- \
    sh -c "$(child term)" "$D"
job=$BG_PID
wait_for 10 test -s "$D/child.pid"
tbpid=$(pid_in "$D/tb.pid")
bg 60 "$TUMBLER" lock /paused -- sh -c 'echo "$TUMBLER_LOCK_TOKEN" > "$0/next"' "$D"
next=$BG_PID
kill -STOP "$tbpid"
wait_for $((TO + 10)) test -s "$D/next"
check_eq "a waiter got the lock while the holder was stopped" 0 "$?"
if [ "$(cat "$D/next")" -gt "$(cat "$D/token")" ]; then ok "the next holder's token is larger"
else fail "tokens: stalled $(cat "$D/token"), next $(cat "$D/next")"; fi
wait_st "$next"
t0=$(now_ms)
kill -CONT "$tbpid"
wait_st "$job"
MS=$(($(now_ms) - t0))
check_eq "stalled holder resumed: 75" 75 "$ST"
check_eq "stalled holder's child got SIGTERM" "TERM" "$(cat "$D/got" 2>/dev/null)"
if [ "$MS" -lt 3000 ]; then ok "acted ${MS} ms after resuming"
else fail "acted ${MS} ms after resuming"; fi
srv_stop

# ---- tumbler stopped by job control past the timeout (^Z, later fg) ----
# CMD's group stops with it.  Its session expires meanwhile and a waiter
# takes the lock.  Continued, tumbler must not let CMD go on before it
# knows whether it still holds the lock: CMD gets its SIGTERM with its
# SIGCONT, and does none of its own work (here: no more lines).
is_stopped() { [ "$(cut -d' ' -f3 "/proc/$1/stat")" = T ]; }
# tstp_holder PATH: a holder of PATH whose CMD writes its lock node to
# $D/node, then lines to $D/beat as fast as it can; once it has, tumbler
# gets SIGTSTP (its status: whether it stopped).  Sets job and tbpid.
tstp_holder()
{
    rm -f "$D/beat" "$D/tb.pid" "$D/node"
    # shellcheck disable=SC2016 # expanded by CMD's shell
    bgp 90 "$D/tb.pid" "$TUMBLER" --session-timeout "$TO" lock -k 5 "$1" -- sh -c \
        'echo "$TUMBLER_LOCK_NODE" > "$0/node"; while :; do echo x >> "$0/beat"; done' "$D"
    job=$BG_PID
    wait_for 10 test -s "$D/beat"
    tbpid=$(pid_in "$D/tb.pid")
    kill -TSTP "$tbpid"
    wait_for 5 is_stopped "$tbpid"
}
rm -f "$D/next"
srv_start
tstp_holder /tstp; check_eq "SIGTSTP: tumbler stopped" 0 "$?"
# shellcheck disable=SC2016 # expanded by CMD's shell
bg 60 "$TUMBLER" lock /tstp -- sh -c 'echo "$TUMBLER_LOCK_TOKEN" > "$0/next"' "$D"
next=$BG_PID
wait_for $((TO + 10)) test -s "$D/next"
check_eq "a waiter got the lock while the holder was stopped by SIGTSTP" 0 "$?"
wait_st "$next"
n=$(wc -c < "$D/beat")
kill -CONT "$tbpid"
wait_st "$job"
check_eq "continued after its lock passed on: 75" 75 "$ST"
check_eq "continued after its lock passed on: CMD did no more work" "$n" \
    "$(wc -c < "$D/beat")"
# The same with the lock's node deleted while tumbler is stopped for more
# than a third of the session timeout (long enough to have let the session
# expire: the check is made): the news waits in the socket, and CMD must
# not be continued before it is read (a race of microseconds without the
# check: three tries).
for i in 1 2 3; do
    tstp_holder "/tstp$i"
    tb delete "$(cat "$D/node")"
    sleep 1.5
    n=$(wc -c < "$D/beat")
    kill -CONT "$tbpid"
    wait_st "$job"
    check_eq "node deleted while stopped ($i): 75" 75 "$ST"
    check_eq "node deleted while stopped ($i): CMD did no more work" "$n" \
        "$(wc -c < "$D/beat")"
done
srv_stop

# ---- stopped while winding down after the loss ----
# The loss's SIGTERM came, and CMD's handler runs (here for 5 s, within
# -k).  A ^Z then stops it with tumbler; continued, it goes on winding
# down (the hold, lost already, is not asked again), ending on its own.
rm -f "$D/beat" "$D/tb.pid" "$D/node"
srv_start
# shellcheck disable=SC2016 # expanded by CMD's shell
bgp 90 "$D/tb.pid" "$TUMBLER" lock -k 20 /wind -- sh -c '
    echo "$TUMBLER_LOCK_NODE" > "$0/node"
    trap "i=0; while [ \$i -lt 100 ]; do echo x >> \"\$0/beat\"; sleep 0.05; i=\$((i + 1)); done; exit 0" TERM
    while :; do sleep 0.1; done' "$D"
job=$BG_PID
wait_for 10 test -s "$D/node"
tbpid=$(pid_in "$D/tb.pid")
tb delete "$(cat "$D/node")"
wait_for 10 test -s "$D/beat"; check_eq "winding down after the loss" 0 "$?"
kill -TSTP "$tbpid"
wait_for 5 is_stopped "$tbpid"; check_eq "winding down: stopped with tumbler" 0 "$?"
n=$(wc -c < "$D/beat")
kill -CONT "$tbpid"
grows() { [ "$(wc -c < "$D/beat")" -gt "$n" ]; }
wait_for 3 grows; check_eq "winding down: continued, it goes on" 0 "$?"
wait_st "$job"
check_eq "winding down: 75" 75 "$ST"
srv_stop

# ---- elect: leadership lost the same way ----
rm -f "$D/got" "$D/child.pid"
srv_start
bg 90 "$TUMBLER" --session-timeout "$TO" elect -k 5 /leader -- sh -c "$(child term)" "$D"
job=$BG_PID
if wait_for 10 test -s "$D/child.pid"; then
    srv_stop
    wait_st "$job"
    check_eq "leadership lost: 75" 75 "$ST"
    check_eq "the leader's child got SIGTERM" "TERM" "$(cat "$D/got" 2>/dev/null)"
else
    wait_st "$job"
    fail "elect never ran its child (status $ST)"
fi
srv_stop

# ---- elect: leadership lost while CMD ran, seen only once CMD ended ----
# CMD stops tumbler and ends; the session expires meanwhile and another
# candidate leads.  Resumed, tumbler finds CMD ended and the leadership
# gone: CMD may not have run alone, so 75, not CMD's 0.
rm -f "$D/led" "$D/next" "$D/tb.pid"
srv_start
bgp 90 "$D/tb.pid" "$TUMBLER" --session-timeout "$TO" elect /stalled -- \
    sh -c ': > "$0/led"; kill -STOP "$PPID"' "$D"
job=$BG_PID
tbpid=$(pid_in "$D/tb.pid")
wait_for 10 test -e "$D/led" || fail "the stalled leader never ran its command"
tb elect -w $((TO + 10)) /stalled -- sh -c ': > "$0/next"' "$D"
check_eq "another candidate led while the leader was stopped" 0 "$?"
kill -CONT "$tbpid"
wait_st "$job"
check_eq "leadership lost while CMD ran, found at the release: 75" 75 "$ST"
srv_stop

t_end
