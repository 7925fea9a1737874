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
# A step is text to type (\r ends a line, \x03 is ^C, \x1a is ^Z), or
# "?text" to wait until the terminal has shown text ("?2*text": shown
# twice).  Exits with COMMAND's status, 100 if a wait failed; LOG gets
# what was shown.
on_pty()
{
    timeout -k 5 30 python3 - "$@" <<'EOF'
import os, pty, select, sys, time
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
ok = True
for s in steps:
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
    else:
        pump(None, 0.1)
        os.write(fd, s.encode())
if not ok:
    os.kill(pid, 9)
_, st = os.waitpid(pid, 0)
pump(None, 0.2)
open(log, "wb").write(buf)
sys.exit(100 if not ok else os.waitstatus_to_exitcode(st) & 255)
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

# ^Z in an interactive shell: the job stops, fg continues it, and CMD
# still has the terminal.
on_pty "$D/tstp.log" '?$ ' \
    "\"$TUMBLER\" lock /t -- sh -c 'echo ready; read x; echo \"got \$x\"'\r" \
    '?ready' '\x1a' '?Stopped' 'fg\r' '?lock /t' 'later\r' '?got later' \
    'echo "rc=$?"\r' '?rc=0' 'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "^Z, fg: the job stopped and went on" 0 "$?"
tb lock -n /t -- true; check_eq "^Z, fg: released at the end" 0 "$?"

# ^Z then bg: the job goes on in the background, the terminal stays the
# shell's; CMD reading from it stops the job again (SIGTTIN; set -b has
# bash say so at once), and fg gives it the terminal.
on_pty "$D/bg.log" '?$ ' 'set -b\r' \
    "\"$TUMBLER\" lock /t -- sh -c 'echo ready; read x; echo \"got \$x\"'\r" \
    '?ready' '\x1a' '?Stopped' 'bg\r' '?2*Stopped' 'fg\r' '?lock /t' \
    'back\r' '?got back' 'echo "rc=$?"\r' '?rc=0' 'exit\r' -- \
    env PS1='$ ' bash --norc --noprofile -i
check_eq "^Z, bg: stopped on reading the terminal, fg goes on" 0 "$?"

t_end
