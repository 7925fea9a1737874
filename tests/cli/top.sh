#!/usr/bin/env bash
# tumbler top on a terminal, under tmux:  top.sh KIND TUMBLER
#
# KIND is "tumblerd" (needs TUMBLERD in the environment) or "zk" (Apache
# ZooKeeper 3.8), started by tests/integration/lib.sh.  Two mutexes under
# /locks are held, with waiters (tumbler lock -- CMD, in the background);
# `tumbler top /locks` runs in a detached tmux session, and the pane must
# show both holders with their owners and tokens, the waiters with
# theirs, and the counts.  Then one holder lets go: the screen must show
# the next in line holding since that refresh (held 0s or 1s, though it
# had waited longer).  `q` must end top with status 0, out of the
# alternate screen; SIGTERM too.  Under an interactive shell, ^Z must give
# the shell's screen back (its prompt shown, out of the alternate screen)
# and `fg` bring top's back.  Every wait is bounded.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../integration/lib.sh
source "$here/../integration/lib.sh"

kind=${1:?usage: $0 KIND TUMBLER}
TUMBLER=${2:?usage: $0 KIND TUMBLER}
command -v tmux > /dev/null || it_die "tmux is needed (scripts/deps.sh --test)"
it_init
launch "$kind" server
export TUMBLER_SERVERS=127.0.0.1:$LAUNCH_PORT
D=$(it_tmpdir top)
SOCK=$D/tmux.sock
FAILS=0
# The tmux server goes with the test, before lib.sh's cleanup.
end_test()
{
    local rc=$?
    tmux -S "$SOCK" kill-server 2> /dev/null
    it_cleanup "$rc"
}
trap end_test EXIT

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# holder ID PATH: tumbler lock PATH that holds until $D/release.ID exists;
# its pid (the owner HOST:PID in the node data) in $D/ID.pid.
holder()
{
    # shellcheck disable=SC2016  # expanded by the inner bash
    run_bg 60 bash -c 'echo $$ > "$0/$1.pid"; exec "$2" lock "$3" -- sh -c \
        "while [ ! -e $0/release.$1 ]; do sleep 0.05; done"' "$D" "$1" "$TUMBLER" "$2"
}

# until_ok LIMIT_S COMMAND...: polls COMMAND every 0.1 s; false after LIMIT_S.
until_ok()
{
    local end=$((SECONDS + $1))
    shift
    until "$@" 2> /dev/null; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.1
    done
}

queued() # PATH HOLDING WAITING: tumbler locks' summary says so
{
    [ "$("$TUMBLER" locks "$1" | head -n 1)" = "$1: mutex, $2 holding, $3 waiting" ]
}

pane() { tmux -S "$SOCK" capture-pane -p -t top; }
pane_shows() { pane | grep -Eq -- "$1"; }
alt_on() { tmux -S "$SOCK" display -p -t top '#{alternate_on}'; }

# expect_screen WHAT REGEX: the pane shows a line matching REGEX within 10 s.
expect_screen()
{
    if until_ok 10 pane_shows "$2"; then return 0; fi
    fail "$1: no line matches /$2/ on the screen:"
    pane >&2
    return 1
}

# token PATH N: the fencing token of the N-th node in PATH's queue.
token()
{
    "$TUMBLER" --json locks "$1" |
        python3 -c 'import json, sys
d = json.load(sys.stdin)
print((d["holders"] + d["waiting"])[int(sys.argv[1])]["token"])' "$2"
}

# tmux_new COMMAND: a detached 200x40 session named top running COMMAND.
# tmux's server now and then exits as it starts ("server exited
# unexpectedly", before it runs anything), so up to three tries.
tmux_new()
{
    local try
    for try in 1 2 3; do
        tmux -S "$SOCK" -f /dev/null new-session -d -s top -x 200 -y 40 "$1" && return 0
        tmux -S "$SOCK" kill-server 2> /dev/null
        sleep 0.2
    done
    it_die "tmux did not start ($try tries)"
}

host=$(hostname)
holder a1 /locks/a
until_ok 10 queued /locks/a 1 0 || it_die "a1 did not get /locks/a"
holder a2 /locks/a
until_ok 10 queued /locks/a 1 1 || it_die "a2 did not queue"
holder a3 /locks/a
holder b1 /locks/b
until_ok 10 queued /locks/b 1 0 || it_die "b1 did not get /locks/b"
holder b2 /locks/b
until_ok 10 queued /locks/a 1 2 || it_die "a3 did not queue"
until_ok 10 queued /locks/b 1 1 || it_die "b2 did not queue"
pid_a1=$(cat "$D/a1.pid") pid_a2=$(cat "$D/a2.pid") pid_a3=$(cat "$D/a3.pid")
pid_b1=$(cat "$D/b1.pid") pid_b2=$(cat "$D/b2.pid")
ta1=$(token /locks/a 0) ta2=$(token /locks/a 1) ta3=$(token /locks/a 2)
tb1=$(token /locks/b 0) tb2=$(token /locks/b 1)

# A pane wide enough for whole lines; top's status lands in a file.
tmux_new "$TUMBLER top -d 0.2 /locks; echo \$? > $D/status; sleep 60"

expect_screen "counts of /locks/a" "^/locks/a  mutex, 1 holding, 2 waiting$"
expect_screen "counts of /locks/b" "^/locks/b  mutex, 1 holding, 1 waiting$"
expect_screen "total" "^2 locks under /locks: 2 holding, 3 waiting$"
expect_screen "a1 holds, its token" "^  holder +$host:$pid_a1 +held +[0-9]+s +token $ta1 +_c_.*-lock-[0-9]{10}$"
expect_screen "a2 waits, its token" "^  waiting +$host:$pid_a2 +waited +[0-9]+s +token $ta2 "
expect_screen "a3 waits, its token" "^  waiting +$host:$pid_a3 +waited +[0-9]+s +token $ta3 "
expect_screen "b1 holds, its token" "^  holder +$host:$pid_b1 +held +[0-9]+s +token $tb1 "
expect_screen "b2 waits, its token" "^  waiting +$host:$pid_b2 +waited +[0-9]+s +token $tb2 "
expect_screen "the server's figures" "^server 127\.0\.0\.1:$LAUNCH_PORT standalone: [0-9.]+ requests/s besides top's, latency min/avg/max [0-9.]+/[0-9.]+/[0-9.]+ ms"
[ "$(alt_on)" = 1 ] || fail "top is not on the alternate screen"
# The order on screen is the queue's: a1, a2, a3.
order=$(pane | grep -E "^  (holder|waiting) " | head -n 3 | awk '{ print $2 }')
[ "$order" = "$(printf '%s\n' "$host:$pid_a1" "$host:$pid_a2" "$host:$pid_a3")" ] ||
    fail "queue order on screen: $order"

# A smaller terminal: each line cut to its width (not wrapped), the rows
# that do not fit counted on the last one.
tmux -S "$SOCK" resize-window -t top -x 50 -y 8
expect_screen "cut to the new size" '^\([0-9]+ more lines\)$'
rows=$(pane)
row1=$(sed -n 1p <<< "$rows")
[[ "${#row1}" = 50 && "$row1" == "tumbler top /locks - "* ]] ||
    fail "first row not the header cut at 50 columns: $row1"
# (wrapped, the header would go on in the second row)
check_row2() { [ "$(pane | sed -n 2p | cut -c1-7)" = "server " ]; }
until_ok 5 check_row2 || fail "second row is not the server's: $(pane | sed -n 2p)"
[ "$(awk 'length > 50' <<< "$rows" | wc -l)" = 0 ] || fail "a row wider than 50 columns"
[ "$(sed -n 8p <<< "$rows")" != "" ] || fail "the last row is empty: $rows"
tmux -S "$SOCK" resize-window -t top -x 200 -y 40
expect_screen "whole lines again" "^/locks/b  mutex, 1 holding, 1 waiting$"

# a2 has waited 4 s or more when a1 lets go; then its time held counts
# from the change, not from when it joined: less than it had waited.
expect_screen "a2 has waited" "^  waiting +$host:$pid_a2 +waited +([4-9]|[1-9][0-9]+)s "
waited=$(pane | sed -nE "s/^  waiting +$host:$pid_a2 +waited +([0-9]+)s .*/\1/p" | head -n 1)
touch "$D/release.a1"
expect_screen "after a1: counts" "^/locks/a  mutex, 1 holding, 1 waiting$"
expect_screen "after a1: a2 holds" "^  holder +$host:$pid_a2 +held +[0-9]+s +token $ta2 "
held=$(pane | sed -nE "s/^  holder +$host:$pid_a2 +held +([0-9]+)s .*/\1/p" | head -n 1)
[[ -n "$waited" && -n "$held" && "$held" -lt "$waited" ]] ||
    fail "after a1: a2 held ${held}s, not less than the ${waited}s it had waited"
expect_screen "after a1: total" "^2 locks under /locks: 2 holding, 2 waiting$"
if pane_shows "$host:$pid_a1 "; then fail "a1 still on the screen"; fi

tmux -S "$SOCK" send-keys -t top q
until_ok 10 test -s "$D/status" || fail "q did not end top"
[ "$(cat "$D/status" 2> /dev/null)" = 0 ] || fail "status after q: $(cat "$D/status" 2> /dev/null)"
[ "$(alt_on)" = 0 ] || fail "the alternate screen was not left"
if pane_shows "holding"; then fail "top's screen still shown after q"; pane >&2; fi
tmux -S "$SOCK" kill-session -t top

# SIGTERM: the same clean exit.
rm -f "$D/status"
tmux_new "$TUMBLER top -d 0.2 /locks; echo \$? > $D/status; stty -a > $D/stty; sleep 60"
expect_screen "top again" "^/locks/b  mutex"
shell=$(tmux -S "$SOCK" display -p -t top '#{pane_pid}')
toppid=$(ps -o pid= --ppid "$shell" | head -n 1 | tr -d ' ')
[ -n "$toppid" ] && kill -TERM "$toppid"
until_ok 10 test -s "$D/stty" || fail "SIGTERM did not end top"
[ "$(cat "$D/status" 2> /dev/null)" = 0 ] || fail "status after SIGTERM: $(cat "$D/status" 2> /dev/null)"
[ "$(alt_on)" = 0 ] || fail "the alternate screen was not left after SIGTERM"
[[ " $(tr '\n' ' ' < "$D/stty") " == *" icanon "*" echo "* ]] ||
    fail "the terminal's modes were not restored: $(cat "$D/stty")"

# ^\ (SIGQUIT): the same clean exit, not the terminal left raw.
tmux -S "$SOCK" kill-session -t top 2> /dev/null
rm -f "$D/status" "$D/stty"
tmux_new "$TUMBLER top -d 0.2 /locks; echo \$? > $D/status; stty -a > $D/stty; sleep 60"
expect_screen "top once more" "^/locks/b  mutex"
tmux -S "$SOCK" send-keys -t top "C-\\"
until_ok 10 test -s "$D/stty" || fail "^\\ did not end top"
[ "$(alt_on)" = 0 ] || fail "the alternate screen was not left after ^\\"
[[ " $(tr '\n' ' ' < "$D/stty") " == *" icanon "*" echo "* ]] ||
    fail "the terminal's modes were not restored after ^\\: $(cat "$D/stty")"

# ^Z under an interactive shell (job control): the shell's screen back,
# its prompt shown; fg: top's screen again, drawn; q still ends it.
tmux -S "$SOCK" kill-session -t top 2> /dev/null
tmux_new "env PS1='prompt\$ ' bash --norc --noprofile -i"
expect_screen "the shell's prompt" '^prompt\$ ?$'
tmux -S "$SOCK" send-keys -t top "$TUMBLER top -d 0.2 /locks" Enter
expect_screen "top under a shell" "^/locks/b  mutex"
[ "$(alt_on)" = 1 ] || fail "top under a shell is not on the alternate screen"
tmux -S "$SOCK" send-keys -t top C-z
expect_screen "^Z: the job stopped" "Stopped +$TUMBLER top"
expect_screen "^Z: the shell's prompt" '^prompt\$ ?$'
[ "$(alt_on)" = 0 ] || fail "^Z did not leave the alternate screen"
if pane_shows "^/locks/b  mutex"; then fail "top's screen still shown after ^Z"; pane >&2; fi
tmux -S "$SOCK" send-keys -t top fg Enter
expect_screen "fg: top's screen again" "^/locks/b  mutex, 1 holding, 1 waiting$"
[ "$(alt_on)" = 1 ] || fail "fg: not on the alternate screen"
if pane_shows '^prompt\$'; then fail "fg: the shell's screen still shown"; pane >&2; fi
tmux -S "$SOCK" send-keys -t top q
expect_screen "q after fg: the prompt" '^prompt\$ ?$'
[ "$(alt_on)" = 0 ] || fail "q after fg: the alternate screen was not left"

touch "$D/release.a2" "$D/release.a3" "$D/release.b1" "$D/release.b2"
echo "$kind: $FAILS failed"
[ "$FAILS" = 0 ]
