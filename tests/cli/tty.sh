#!/usr/bin/env bash
# tumbler lock on a terminal.  CMD runs in a process group of its own, so
# tumbler must hand it the terminal as a shell hands it to a job: CMD
# reads from it, ^C reaches it, and ^Z stops the whole job (tumbler too)
# so that the shell's fg and bg continue it.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
srv_start
D=$T_DIR

# on_pty LOG STEP... -- COMMAND...: runs COMMAND on a pseudo-terminal.
# A step is text to type (\r ends a line, \x03 is ^C, \x1a is ^Z),
# "?text" to wait until the terminal has shown text ("?2*text": shown
# twice), or "!shell command" to wait until that command succeeds.  Text
# is typed 0.1 s after the step before, "=text" at once.  Exits with
# COMMAND's status (128+N if signal N killed it, as a shell says), 100 if
# a wait failed; LOG gets what was shown.
# What a shell echoes of a typed line counts as shown: a CMD typed in
# says it runs with text its line does not hold ("ready 42" from
# `echo "ready $((6*7))"`).
on_pty()
{
    timeout -k 5 30 python3 - "$@" <<'EOF'
import os, pty, select, subprocess, sys, time
log, args = sys.argv[1], sys.argv[2:]
cut = args.index("--")
steps, cmd = args[:cut], args[cut + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
buf = b""
def pump(until=None, limit=10.0, times=1):
    global buf
    end = time.time() + limit
    while time.time() < end:
        if until is not None and buf.count(until.encode()) >= times:
            return True
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                buf += os.read(fd, 4096)
            except OSError:
                break
    return until is None
def until_true(cmd, limit=10.0):
    end = time.time() + limit
    while time.time() < end:
        if subprocess.run(cmd, shell=True).returncode == 0:
            return True
        pump(None, 0.1)
    return False
ok = True
for s in steps:
    if s.startswith("!"):
        if not until_true(s[1:]):
            print("never true: %s" % s[1:], file=sys.stderr)
            ok = False
            break
        continue
    s = s.encode().decode("unicode_escape")
    if s.startswith("?2*"):
        if not pump(s[3:], times=2):
            print("terminal never showed %r twice" % s[3:], file=sys.stderr)
            ok = False
            break
    elif s.startswith("?"):
        if not pump(s[1:]):
            print("terminal never showed %r" % s[1:], file=sys.stderr)
            ok = False
            break
    elif s.startswith("="):
        os.write(fd, s[1:].encode())
    else:
        pump(None, 0.1)
        os.write(fd, s.encode())
if not ok:
    # Every process of the terminal's session, not only the shell: a job
    # left stopped or stuck would outlive the test.
    for p in os.listdir("/proc"):
        try:
            stat = open("/proc/%s/stat" % p).read()
            if int(stat.rsplit(")", 1)[1].split()[3]) == pid:
                os.kill(int(p), 9)
        except (ValueError, IndexError, OSError):
            pass
_, st = os.waitpid(pid, 0)
pump(None, 0.2)
open(log, "wb").write(buf)
code = os.waitstatus_to_exitcode(st)
sys.exit(100 if not ok else 128 - code if code < 0 else code)
EOF
}

# CMD reads a line the user types: it has the terminal.
on_pty "$D/read.log" '?ready' 'hello\r' '?got hello' -- \
    "$TUMBLER" lock /t -- sh -c 'echo ready; read x; echo "got $x"'
check_eq "CMD reads from the terminal" 0 "$?"

# ^C: the whole foreground job gets SIGINT, CMD's children too.
on_pty "$D/int.log" '?ready' '\x03' -- \
    "$TUMBLER" lock /t -- sh -c 'sleep 30 & echo $! > "$0/gc.pid"; echo ready; wait' "$D"
check_eq "^C ends CMD: 130" 130 "$?"
# A script's background child ignores the terminal's SIGINT (POSIX): it
# is stopped as CMD exits.
if kill -0 "$(cat "$D/gc.pid")" 2>/dev/null; then fail "^C: CMD's child still runs"
else ok "^C: CMD's child is gone"; fi
tb lock -n /t -- true; check_eq "^C: released" 0 "$?"

# CMD's shell below says it is ready before it forks its sleep.  A
# signal that reaches it in between is put off until the sleep ends, and
# the sleep never gets one: the cases wait until the sleep runs.
slept() { echo "!pgrep -x sleep -P \$(cat $D/$1)"; }

# ^C in a script's loop of tumbler lock stops the script, as it stops a
# loop of any command: CMD had the terminal, so tumbler passes the SIGINT
# on to its own group (the script's), which a shell needs to get itself.
# shellcheck disable=SC2016
on_pty "$D/loop.log" '?ready1' "$(slept loop.pid)" '\x03' -- bash -c \
    'for i in 1 2; do "$0" lock /t -- sh -c "echo \$\$ > $1/loop.pid; echo ready\$0; sleep 30" "$i"; done; echo after' \
    "$TUMBLER" "$D"
check_eq "^C in a script's loop: the script ends (SIGINT)" 130 "$?"
if grep -q "ready2\|after" "$D/loop.log"; then fail "^C in a loop: the loop went on"
else ok "^C in a loop: the loop stopped"; fi
tb lock -n /t -- true; check_eq "^C in a loop: released" 0 "$?"
# A SIGINT sent to tumbler itself (kill), passed on to CMD: not the
# terminal's, so the script running tumbler goes on.
# shellcheck disable=SC2016
on_pty "$D/kill.log" '?ready' "$(slept k.pid)" "!kill -INT \$(cat $D/t.pid)" \
    '?after' -- sh -c \
    '"$0" lock /t -- sh -c "echo \$PPID > $1/t.pid; echo \$\$ > $1/k.pid; echo ready; sleep 30"; echo after' \
    "$TUMBLER" "$D"
check_eq "kill -INT of tumbler: the script goes on" 0 "$?"

# A stop of CMD from no terminal (kill -STOP): no shell will continue
# tumbler, so tumbler does not stop with it (stopped, it would keep no
# session while CMD, continued, ran on); continued, CMD goes on, and ^C
# ends it.
# shellcheck disable=SC2016 # expanded by CMD's shell
on_pty "$D/sigstop.log" '?ready' "!kill -STOP \$(cat $D/cmd.pid)" \
    "!sleep 0.5; [ \"\$(cut -d' ' -f3 /proc/\$(cat $D/tb.pid)/stat)\" != T ]" \
    "!kill -CONT \$(cat $D/cmd.pid)" "$(slept cmd.pid)" '\x03' -- \
    "$TUMBLER" lock /t -- sh -c 'echo $$ > "$0/cmd.pid"; echo $PPID > "$0/tb.pid"
        echo ready; sleep 30' "$D"
check_eq "kill -STOP of CMD: tumbler runs on; ^C after kill -CONT: 130" 130 "$?"
tb lock -n /t -- true; check_eq "kill -STOP of CMD: released at the end" 0 "$?"

# A script run from an interactive shell starts tumbler in the background
# (`&`, no job control: SIGINT ignored, the script's group) and reads a
# line: the terminal stays the script's, CMD does not take it (the script
# would stop on its read, tumbler with it).
# shellcheck disable=SC2016 # expanded by the script's shell
printf '%q lock /amp -- sleep 2 &\nsleep 0.5\necho asking\nread -r x\necho "got $x"\nwait\n' \
    "$TUMBLER" > "$D/amp.sh"
on_pty "$D/amp.log" '?$ ' "bash $D/amp.sh\r" '?asking' 'line\r' '?got line' \
    'echo "rc=$?"\r' '?rc=0' 'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "tumbler lock & in a script: the script reads the terminal" 0 "$?"
tb lock -n /amp -- true; check_eq "tumbler lock & in a script: released at the end" 0 "$?"

# The line typed in the interactive shells below: CMD says "ready 42"
# once it runs, then reads a line.
typed="\"$TUMBLER\" lock /t -- sh -c 'echo \"ready \$((6*7))\"; read x; echo \"got \$x\"'\r"

# ^Z in an interactive shell: the job stops, fg continues it, and CMD
# still has the terminal.
on_pty "$D/tstp.log" '?$ ' "$typed" '?ready 42' '\x1a' '?Stopped' 'fg\r' \
    '?lock /t' 'later\r' '?got later' 'echo "rc=$?"\r' '?rc=0' 'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "^Z, fg: the job stopped and went on" 0 "$?"
tb lock -n /t -- true; check_eq "^Z, fg: released at the end" 0 "$?"

# In a pipeline the terminal stays the pipeline's: a command after
# tumbler that reads it (a pager; here a read from /dev/tty while CMD
# runs) is not stopped for it (SIGTTIN to tumbler's group, tumbler too).
piped="\"$TUMBLER\" lock /t -- sh -c 'echo \"ready \$((6*7))\"; sleep 2' | (read -r l; echo \"piped \$l\"; read -r x < /dev/tty; echo \"typed \$x\")\r"
on_pty "$D/pipe.log" '?$ ' "$piped" '?piped ready 42' 'hello\r' '?typed hello' \
    'echo "rc=$?"\r' '?rc=0' 'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "in a pipeline: a reader of the terminal after tumbler reads it" 0 "$?"
tb lock -n /t -- true; check_eq "in a pipeline: released at the end" 0 "$?"

# ^Z stops all of CMD, a process of it that ignores SIGTSTP too: tumbler
# stopped keeps no session alive, so nothing of CMD may run meanwhile.
# fg continues it; ^C then ends it (130).
beat=$(printf %q "$D/beat")
beating="\"$TUMBLER\" lock /t -- sh -c '(trap \"\" TSTP; while :; do echo x >> $beat; sleep 0.05; done) & echo \"ready \$((6*7))\"; wait'\r"
still="n=\$(wc -c < $beat); sleep 0.5; [ \"\$(wc -c < $beat)\" = \"\$n\" ]"
on_pty "$D/tstp2.log" '?$ ' "$beating" '?ready 42' "!test -s $beat" '\x1a' '?Stopped' \
    "!$still" 'fg\r' '?lock /t' "!${still/ = / != }" '\x03' 'echo "rc=$?"\r' '?rc=130' \
    'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "^Z: a process of CMD that ignores SIGTSTP stops too; fg continues it" 0 "$?"
tb lock -n /t -- true; check_eq "^Z, a process ignoring SIGTSTP: released at the end" 0 "$?"

# ^Z where a script runs tumbler: the whole job stops, the script too, as
# the terminal stops a job (tumbler stopped alone, the script waited, and
# its shell with it: no prompt, ^C reaching nothing).  fg goes on.
printf '%s\n' "\"$TUMBLER\" lock /t -- sh -c 'echo \"ready \$((6*7))\"; read x; echo \"got \$x\"'" \
    'echo "script goes on"' > "$D/job.sh"
on_pty "$D/tstp4.log" '?$ ' "sh $D/job.sh\r" '?ready 42' '\x1a' '?Stopped' 'fg\r' \
    'later\r' '?got later' '?script goes on' 'echo "rc=$?"\r' '?rc=0' 'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "^Z in a script: the job stopped and went on" 0 "$?"
tb lock -n /t -- true; check_eq "^Z in a script: released at the end" 0 "$?"

# The same for a process of CMD's that left its group (setsid), orphaned:
# ^Z stops it too, fg continues it; ^C ends CMD, and it is stopped before
# the release.  (It ran on while tumbler was stopped.)
beat2=$(printf %q "$D/beat2")
detached="\"$TUMBLER\" lock /t -- sh -c 'setsid -f sh -c \"while :; do echo x >> $beat2; sleep 0.05; done\"; echo \"ready \$((6*7))\"; sleep 30'\r"
still2=${still//$beat/$beat2}
on_pty "$D/tstp3.log" '?$ ' "$detached" '?ready 42' "!test -s $beat2" '\x1a' '?Stopped' \
    "!$still2" 'fg\r' '?lock /t' "!${still2/ = / != }" '\x03' 'echo "rc=$?"\r' '?rc=130' \
    'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "^Z: a process that left CMD's group stops too; fg continues it" 0 "$?"
tb lock -n /t -- true; check_eq "^Z, a process that left the group: released at the end" 0 "$?"
check_eq "the process that left CMD's group ended before the release" 0 "$(sh -c "$still2"; echo $?)"

# ^Z as tumbler starts CMD (it says so just before the fork): whichever
# group it stops, tumbler before or CMD before or after its exec, the
# shell says the job stopped, and fg continues it with the terminal.
on_pty "$D/start.log" '?$ ' "${typed/ lock / lock --verbose }" '?running sh' \
    '=\x1a' '?Stopped' 'fg\r' '?ready 42' 'now\r' '?got now' \
    'echo "rc=$?"\r' '?rc=0' 'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "^Z as CMD starts, fg: the job stopped and went on" 0 "$?"
tb lock -n /t -- true; check_eq "^Z as CMD starts: released at the end" 0 "$?"

# ^Z then bg: the job goes on in the background, the terminal stays the
# shell's; CMD reading from it stops the job again (SIGTTIN; set -b has
# bash say so at once), and fg gives it the terminal.
on_pty "$D/bg.log" '?$ ' 'set -b\r' \
    "$typed" '?ready 42' '\x1a' '?Stopped' 'bg\r' '?2*Stopped' 'fg\r' '?lock /t' \
    'back\r' '?got back' 'echo "rc=$?"\r' '?rc=0' 'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "^Z, bg: stopped on reading the terminal, fg goes on" 0 "$?"
tb lock -n /t -- true; check_eq "^Z, bg: released at the end" 0 "$?"

# ^Z while tumbler still waits for the lock, then bg: CMD starts in the
# background once the lock is free; its read of the terminal stops it,
# tumbler with it (the shell says so), and fg gives CMD the terminal.
bg 60 "$TUMBLER" lock /t -- sh -c 'touch "$0/held"; while [ ! -e "$0/go" ]; do sleep 0.1; done' "$D"
wait_for 10 test -e "$D/held"
printf -v queued '[ "$(%q locks /t | sed -n 1p)" = "/t: mutex, 1 holding, 1 waiting" ]' "$TUMBLER"
on_pty "$D/early.log" '?$ ' 'set -b\r' "$typed" "!$queued" '\x1a' '?Stopped' \
    'bg\r' "!touch $(printf %q "$D/go")" '?ready 42' '?2*Stopped' 'fg\r' \
    '?lock /t' 'early\r' '?got early' 'echo "rc=$?"\r' '?rc=0' 'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "^Z before CMD starts, bg: stopped on reading the terminal, fg goes on" 0 "$?"
tb lock -n /t -- true; check_eq "^Z before CMD starts: released at the end" 0 "$?"

# Started in the background (&), then fg while CMD runs: the shell gives
# the terminal to tumbler's group, and CMD reads from it without the job
# stopping (set -b would have bash say so at once).  CMD reads once the
# terminal is tumbler's (its parent's group): the line typed shows
# "lock /t" before fg does, and a read before the shell's fg is done
# stops the job as any background read does.
bgtyped="\"$TUMBLER\" lock /t -- sh -c 'echo \$\$ > \"\$0/fg.pid\"; echo \"bgready \$((6*7))\"; while [ ! -e \"\$0/fg.go\" ]; do sleep 0.05; done; read x; echo \"got \$x\"' $(printf %q "$D") &\r"
fg_given="!ps -o tpgid=,ppid= -p \"\$(cat $(printf %q "$D/fg.pid"))\" | awk '{ exit \$1 != \$2 }'"
on_pty "$D/fg.log" '?$ ' 'set -b\r' "$bgtyped" '?bgready 42' 'fg\r' "$fg_given" \
    "!touch $(printf %q "$D/fg.go")" 'late\r' '?got late' \
    'echo "rc=$?"\r' '?rc=0' 'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "started with &, then fg: CMD has the terminal" 0 "$?"
if grep -q Stopped "$D/fg.log"; then fail "started with &, then fg: the job stopped"
else ok "started with &, then fg: the job never stopped"; fi
tb lock -n /t -- true; check_eq "started with &, then fg: released at the end" 0 "$?"

t_end
