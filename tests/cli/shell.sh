#!/usr/bin/env bash
# tumbler with no command: commands from a pipe (one per line, sh-like
# quoting, status of the last failure, -e), and the interactive shell on a
# pseudo-terminal (readline line editing, history file, completion, watch
# events printed while at the prompt, ^C clearing the line).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
srv_start

# ---- script on stdin ----
out=$(printf '%s\n' 'create /s "two words"' '# a comment' '' 'get /s' \
    "set /s 'single quoted'" 'get /s' 'get /missing' 'ls /s' | tb 2>"$T_DIR/err"); rc=$?
check_eq "script: output" "$(printf 'Created /s\ntwo words\nsingle quoted')" "$out"
check_eq "script: a command that failed makes the status not 0" 101 "$rc"
check_match "script: an error does not stop it" "get /missing: node does not exist" \
    "$(cat "$T_DIR/err")"
printf 'ls /\nget /missing\n' | tb > /dev/null 2>&1
check_eq "script: the last command's status" 101 "$?"
printf 'get /missing\ncreate /s x\nls /\n' | tb > /dev/null 2>&1
check_eq "script: the status of the last command that failed" 110 "$?"
printf 'create /e1\nget /missing\ncreate /e2\n' | tb > /dev/null 2>&1
check_eq "script: without -e, status of the failure" 101 "$?"
check_eq "script: without -e, on after a failure" "Created /e3" \
    "$(printf 'get /missing\ncreate /e3\n' | tb 2>/dev/null)"
out=$(printf 'create /e4\nget /missing\ncreate /e5\n' | tb -e 2>/dev/null); rc=$?
check_eq "script -e: the failed command's status" 101 "$rc"
check_eq "script -e: stops at the failed command" "Created /e4" "$out"
printf 'create /e6\n' > "$T_DIR/script"
tb --errexit < "$T_DIR/script" > /dev/null 2>&1
check_eq "script -e from a file, nothing failed: 0" 0 "$?"
out=$(printf 'get /s\nquit\nget /missing\n' | tb 2>&1)
check_eq "script: quit ends it" "single quoted" "$out"
# exit N ends a script with status N, whatever failed before.
out=$(printf 'get /missing\nget /s\nexit 3\nget /s\n' | tb 2>/dev/null); rc=$?
check_eq "script: exit 3: its status" 3 "$rc"
check_eq "script: exit 3 ends it" "single quoted" "$out"
printf 'get /missing\nexit 0\n' | tb > /dev/null 2>&1
check_eq "script: exit 0 after a failure: 0" 0 "$?"
printf 'get /missing\nexit\n' | tb > /dev/null 2>&1
check_eq "script: exit without N: the status of the last failure" 101 "$?"
for bad in 256 -1 x "1 2"; do
    out=$(printf 'exit %s\nget /s\n' "$bad" | tb 2>&1); rc=$?
    check_eq "script: exit $bad: a usage error" 64 "$rc"
    check_match "script: exit $bad: the script goes on" "^single quoted$" "$out"
done
# -f - would read the script's next lines as data: refused there.
out=$(printf 'create -f - /fstdin\nget /s\n' | tb 2>"$T_DIR/err"); rc=$?
check_eq "script: create -f -: a usage error" 64 "$rc"
check_match "script: create -f -: says why" "standard input is where the shell reads its commands" \
    "$(cat "$T_DIR/err")"
check_eq "script: create -f -: the next line runs as a command" "single quoted" "$out"
tb stat /fstdin > /dev/null 2>&1; check_eq "script: create -f -: nothing made" 101 "$?"
printf 'set -f - /s\nget /s\n' | tb > /dev/null 2>&1
check_eq "script: set -f -: a usage error" 64 "$?"
check_eq "script: set -f -: the data as it was" "single quoted" "$(tb get /s)"
printf 'get "/s\n' | tb > /dev/null 2>&1
check_eq "script: unterminated quote is a usage error" 64 "$?"
printf 'lock /l -- true\n' | tb > /dev/null 2>&1
check_eq "script: lock is not offered in the shell" 64 "$?"
# A script from a pipe whose writer stays open (tail -f cmds | tumbler):
# SIGTERM ends it at once with 143, not once the writer has gone.
mkfifo "$T_DIR/fifo"
exec 7<> "$T_DIR/fifo" # the writer, open first: the reader's open then returns
# (bgp's stdin would be /dev/null: a background command's, unless its own
# redirection says otherwise)
# shellcheck disable=SC2016 # expanded by the inner bash
timeout -k 5 20 bash -c 'echo $$ > "$0"; exec "$1" < "$2"' "$T_DIR/fifo.pid" \
    "$TUMBLER" "$T_DIR/fifo" > "$T_DIR/fifo.out" 2>&1 &
BG_PID=$!
T_BG+=("$BG_PID")
echo 'create /fifo-mark' >&7
wait_for 10 tb stat /fifo-mark # read and run: its handlers are in place
kill -TERM "$(pid_in "$T_DIR/fifo.pid")"
wait_st "$BG_PID"
exec 7>&-
check_eq "script from a pipe kept open: SIGTERM ends it, 143" 143 "$ST"
# ... and so does one that a command took (a watch waiting): the lines
# after it do not run.
printf 'watch -c 1 /never\ncreate /after-term\n' |
    timeout -k 5 --preserve-status 2 "$TUMBLER" > /dev/null 2>&1
check_eq "script: SIGTERM taken by a watch ends it, 143" 143 "$?"
tb stat /after-term > /dev/null 2>&1
check_eq "script: SIGTERM taken by a watch: the next line not run" 101 "$?"
# -f with another name for standard input is refused as -f - is
out=$(printf 'create -f /dev/stdin /fdev\nget /s\n' | tb 2>"$T_DIR/err"); rc=$?
check_eq "script: create -f /dev/stdin: a usage error" 64 "$rc"
check_match "script: create -f /dev/stdin: says why" "that is standard input" "$(cat "$T_DIR/err")"
check_eq "script: create -f /dev/stdin: the next line runs as a command" "single quoted" "$out"
# help lists exactly what the shell runs: each name it gives runs, lock
# and elect (refused in the shell) are not there, connect and quit are.
help=$(printf 'help\n' | tb 2>&1)
check_match "script: help lists connect" "^  connect " "$help"
check_match "script: help lists quit" "^  quit " "$help"
if printf '%s\n' "$help" | grep -Eq '^  (lock|elect) '; then
    fail "script: help lists lock or elect, which the shell refuses"
else ok "script: help leaves lock and elect out"; fi
for c in $(printf '%s\n' "$help" | sed -n 's/^  \([a-zA-Z]*\) .*/\1/p'); do
    printf '%s --help\n' "$c" | tb > /dev/null 2>&1
    check_eq "script: '$c', listed by help, runs in the shell" 0 "$?"
done
printf 'help lock\n' | tb > /dev/null 2>&1
check_eq "script: help of a command the shell refuses: 64" 64 "$?"
tb connect > /dev/null 2>&1
check_eq "connect outside the shell: 64" 64 "$?"
out=$(printf 'create -e /eph\nstat /eph\n' | tb 2>&1)
check_match "script: one session for all the lines" "^ephemeralOwner = 0x[0-9a-f]+$" "$out"
# A session id reads the same in text and in JSON, whichever command.
out=$(printf 'create -e /sid\nstat /sid\nstat --json /sid\nwhoami --json\n' | tb 2>&1)
sid=$(printf '%s\n' "$out" | sed -n 's/^ephemeralOwner = //p')
check_eq "session id: stat --json as stat" "$sid" \
    "$(printf '%s\n' "$out" | grep '"stat"' | json_get 'd["stat"]["ephemeralOwner"]')"
check_eq "session id: whoami --json as stat" "$sid" \
    "$(printf '%s\n' "$out" | grep '"ids"' | json_get 'd["session"]')"

# ---- what only a session that lasts shows: getEphemerals, removewatches ----
out=$(printf '%s\n' 'create /eq' 'create -e /eq/e2' 'create -e /eq/e1' 'create -e /eph2' \
    'getEphemerals /eq' 'getEphemerals --json /eq' 'getEphemerals' | tb 2>&1)
check_eq "getEphemerals: the session's, sorted, under PATH" \
    "$(printf 'Created /eq\nCreated /eq/e2\nCreated /eq/e1\nCreated /eph2\n/eq/e1\n/eq/e2')" \
    "$(printf '%s\n' "$out" | sed -n 1,6p)"
check_eq "getEphemerals --json" "['/eq/e1', '/eq/e2']" \
    "$(printf '%s\n' "$out" | sed -n 7p | json_get 'd["ephemerals"]')"
check_eq "getEphemerals without PATH: all of them" "$(printf '/eph2\n/eq/e1\n/eq/e2')" \
    "$(printf '%s\n' "$out" | sed -n '8,$p')"
out=$(printf '%s\n' 'create /rw 1' 'get -w /rw' 'removewatches /rw' 'set /rw 2' \
    'ls -w /rw' 'removewatches -d /rw' 'create /rw/c' | tb 2>"$T_DIR/err"); rc=$?
check_eq "removewatches: a removed watch does not fire, another does" \
    "$(printf 'Created /rw\n1\nCreated /rw/c\nNodeChildrenChanged /rw')" "$out"
check_eq "removewatches: none of that type left: 121" 121 "$rc"
check_match "removewatches: says so" "removewatches /rw: no such watch" "$(cat "$T_DIR/err")"
tb removewatches /rw 2>/dev/null
check_eq "removewatches outside the shell: no watch, 121" 121 "$?"
# watch -c counts its own events only: the event of a get -w set before it
# is printed and does not end the watch.
tb create /wx x > /dev/null && tb create /wy y > /dev/null
rm -f "$T_DIR/go"
# shellcheck disable=SC2016  # the inner shell's $0, $1
bg 30 bash -c '{ printf "get -w /wx\nwatch -c 1 /wy\n"; while [ ! -e "$1/go" ]; do sleep 0.1; done
    echo "get /wy"; } | "$0" > "$1/wc.out" 2> "$1/wc.err"' "$TUMBLER" "$T_DIR"
job=$BG_PID
wait_for 10 grep -q "watching /wy" "$T_DIR/wc.err"
tb set /wx x2 > /dev/null
wait_for 10 grep -q "NodeDataChanged /wx" "$T_DIR/wc.out"
sleep 0.3
tb set /wy y2 > /dev/null
wait_for 10 grep -q "NodeDataChanged /wy" "$T_DIR/wc.out"
touch "$T_DIR/go"
wait_st "$job"
check_eq "watch -c 1 after get -w: the other watch's event printed, not counted" \
    "$(printf 'x\nNodeDataChanged /wx\nNodeDataChanged /wy\ny2')" "$(cat "$T_DIR/wc.out")"
check_eq "watch -c 1 after get -w: status 0" 0 "$ST"
tb removewatches /rw -c -d 2>/dev/null
check_eq "removewatches with two types: 64" 64 "$?"

# ---- interactive, on a pseudo-terminal ----
tb create /w 1 > /dev/null
# A PATH of 1212 bytes (ZooKeeper sets paths no short limit) completes.
long=$(printf '/%0100d' $(seq 1 12))
tb create -p "$long/completed" done-data > /dev/null
export TUMBLER_HISTFILE=$T_DIR/history
# Steps: text to type (\r ends a line, \x03 is ^C, \t completes), or
# "!cmd" to run a shell command meanwhile, or "?text" to wait until the
# terminal has shown text ("~text": the same, but a check below judges
# what it showed).
timeout -k 5 60 python3 - "$TUMBLER" "$T_DIR/pty.out" "$long" <<'EOF'
import os, pty, select, sys, time
tumbler, log, long = sys.argv[1], sys.argv[2], sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    os.execv(tumbler, [tumbler])
buf = b""
def pump(until=None, limit=10.0):
    global buf
    end = time.time() + limit
    while time.time() < end:
        if until is not None and until.encode() in buf:
            return True
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                buf += os.read(fd, 4096)
            except OSError:
                break
    return until is None
steps = [
    "?] ", "ls /\r", "?zookeeper",
    "get -w /w\r", "?\r1\r\n",
    "!set", "?NodeDataChanged /w",
    "half a line\x03", "?] ",
    "get /zoo", "\t", "?get /zookeeper", "\r",
    "lock /l -- true\r", "?not available in the shell",
    "get " + long + "/comp", "\t", "\r", "~done-data",
    "\x04",
]
ok = True
for s in steps:
    if s.startswith("~"):
        pump(s[1:])
    elif s.startswith("?"):
        if not pump(s[1:]):
            print("terminal never showed %r" % s[1:], file=sys.stderr)
            ok = False
            break
    elif s == "!set":
        os.system(tumbler + " set /w 2")
    else:
        pump(None, 0.2)
        os.write(fd, s.encode())
pump(None, 1.0)
if not ok:
    os.kill(pid, 9)
_, st = os.waitpid(pid, 0)
open(log, "wb").write(buf)
sys.exit(0 if ok and os.WEXITSTATUS(st) == 0 else 1)
EOF
check_eq "terminal session ran to ^D" 0 "$?"
# What a terminal would show: "\r ESC[K" clears the line, then codes go.
screen=$(sed 's/\x0d\x1b\[K/\n/g' "$T_DIR/pty.out" | tr -d '\r' |
         sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g')
check_match "terminal: prompt names the servers and the state" \
    "^\[tumbler 127.0.0.1:$SRV_PORT connected\] " "$screen"
check_match "terminal: event printed at the prompt" "^NodeDataChanged /w$" "$screen"
check_match "terminal: completion of a path" "get /zookeeper$" "$screen"
check_match "terminal: completion under a long path" "^done-data$" "$screen"
if printf '%s\n' "$screen" | grep -q "unknown command 'half'"; then
    fail "terminal: ^C must drop the line being typed"
else
    ok "terminal: ^C dropped the line"
fi
check_match "terminal: history written" "^ls /$" "$(cat "$T_DIR/history" 2>/dev/null)"

# ---- scripts/run.sh starts without configuring again ----
# (Here for want of a better home: it is the one script a new user runs.)
# A configure stamps a new build time into tumblerd, which then relinks on
# every start.  run.sh runs on a copy of itself, with cmake, ninja and the
# package check replaced by stubs that log their calls.
repo=$T_DIR/repo
mkdir -p "$repo/scripts" "$T_DIR/bin"
cp "$here/../../scripts/run.sh" "$repo/scripts/run.sh"
printf '#!/bin/sh\nexit 0\n' > "$repo/scripts/deps.sh"
cat > "$T_DIR/bin/cmake" <<'STUB'
#!/bin/sh
echo cmake >> "$RUN_LOG"
mkdir -p build && : > build/build.ninja
STUB
cat > "$T_DIR/bin/ninja" <<'STUB'
#!/bin/sh
echo ninja >> "$RUN_LOG"
mkdir -p build/src/server
printf '#!/bin/sh\necho started "$@"\n' > build/src/server/tumblerd
chmod +x build/src/server/tumblerd
STUB
chmod +x "$repo/scripts/run.sh" "$repo/scripts/deps.sh" "$T_DIR/bin/cmake" "$T_DIR/bin/ninja"
for _ in 1 2; do
    out=$(RUN_LOG=$T_DIR/run.log PATH="$T_DIR/bin:$PATH" "$repo/scripts/run.sh" --x=1 2>&1)
done
check_eq "run.sh runs tumblerd with its arguments" "started --x=1" "$out"
check_eq "run.sh configures once, then only builds" "cmake ninja ninja" \
    "$(tr '\n' ' ' < "$T_DIR/run.log" | sed 's/ $//')"

t_end
