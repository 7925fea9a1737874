#!/usr/bin/env bash
# tumbler top -b, the text for scripts:  top_batch.sh KIND TUMBLER
#
# KIND is "tumblerd" (needs TUMBLERD in the environment) or "zk" (Apache
# ZooKeeper 3.8), started by tests/integration/lib.sh.  Checks the frames
# line by line (header, the server's srvr figures and its request rate
# from the second frame on, which clock the ages are on, each lock with
# its holder and waiter, a kazoo Lock's holder), that there is not one
# escape byte, that a lock's plain parent and an idle path are no locks,
# that stdout on a pipe means batch without -b, and that bad command lines are refused with
# status 64 and a message naming what is wrong.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../integration/lib.sh
source "$here/../integration/lib.sh"

kind=${1:?usage: $0 KIND TUMBLER}
TUMBLER=${2:?usage: $0 KIND TUMBLER}
it_init
launch "$kind" server
export TUMBLER_SERVERS=127.0.0.1:$LAUNCH_PORT
D=$(it_tmpdir top)
FAILS=0

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
check_eq() { [ "$2" = "$3" ] || fail "$1: expected [$2], got [$3]"; }
check_match() { printf '%s\n' "$3" | grep -Eq -- "$2" || fail "$1: [$3] does not match /$2/"; }
tb() { timeout -k 5 30 "$TUMBLER" "$@"; }

until_ok()
{
    local end=$((SECONDS + $1))
    shift
    until "$@" 2> /dev/null; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.1
    done
}
queued() { [ "$("$TUMBLER" locks "$1" | head -n 1)" = "$1: mutex, $2 holding, $3 waiting" ]; }

# ---- bad command lines: 64, a message, nothing run ----
for bad in "-d 0" "-d x" "-n 0" "-n -1" "rel" "/a /b"; do
    # shellcheck disable=SC2086
    err=$(tb top -b $bad 2>&1 > "$D/out")
    check_eq "top $bad: status" 64 "$?"
    check_eq "top $bad: nothing on stdout" "" "$(cat "$D/out")"
    case "$bad" in
    -d*) check_match "top $bad: names the delay" "^tumbler top: bad delay '${bad#-d }'" "$err" ;;
    -n*) check_match "top $bad: names the count" "^tumbler top: bad iteration count '${bad#-n }'" "$err" ;;
    rel) check_match "top rel: names the path" "'rel' is not an absolute path" "$err" ;;
    *) check_match "top /a /b: one PATH" "expected at most one PATH" "$err" ;;
    esac
done

# ---- nothing there yet ----
out=$(tb top -b -n 1 /nothing)
check_eq "a path that does not exist: status" 0 "$?"
check_eq "a path that does not exist: no locks" "0 locks under /nothing: 0 holding, 0 waiting" \
    "$(sed -n 4p <<< "$out")"

# ---- one mutex with a holder and a waiter, under a plain parent ----
tb create /app > /dev/null
tb create /app/locks > /dev/null  # a plain node named like a semaphore's gate
# shellcheck disable=SC2016  # expanded by the inner bash
run_bg 60 bash -c 'echo $$ > "$0/h.pid"; exec "$1" lock --data "the holder" /app/locks/job -- \
    sh -c "while [ ! -e $0/release ]; do sleep 0.05; done"' "$D" "$TUMBLER"
until_ok 10 queued /app/locks/job 1 0 || it_die "no holder"
run_bg 60 "$TUMBLER" lock /app/locks/job -- true
until_ok 10 queued /app/locks/job 1 1 || it_die "no waiter"
# A lock of another client on the same server: kazoo's Lock, its
# identifier as the node's data (Debian's python3-kazoo: the system's
# python3).
KAZOO_PY=/usr/bin/python3
"$KAZOO_PY" -c 'import kazoo' 2> /dev/null ||
    it_die "python3-kazoo is needed (scripts/deps.sh --test installs it)"
run_bg 60 "$KAZOO_PY" -c '
import os, sys, time
from kazoo.client import KazooClient
d = sys.argv[1]
zk = KazooClient(hosts=os.environ["TUMBLER_SERVERS"], timeout=4.0)
zk.start(timeout=20)
lk = zk.Lock("/app/zk", "kazoo holder")
lk.acquire(timeout=20)
open(os.path.join(d, "held.kz"), "w").close()
while not os.path.exists(os.path.join(d, "release")):
    time.sleep(0.05)
lk.release()
zk.stop()' "$D"
until_ok 30 test -e "$D/held.kz" || it_die "kazoo did not get /app/zk"
tkz=$(tb --json locks /app/zk | python3 -c 'import json, sys; print(json.load(sys.stdin)["holders"][0]["token"])')
j=$(tb --json locks /app/locks/job)
tok() { python3 -c 'import json, sys; d = json.load(sys.stdin); print((d["holders"] + d["waiting"])[int(sys.argv[1])]["token"])' "$1" <<< "$j"; }
owner1=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["waiting"][0]["owner"])' <<< "$j")
t0=$(tok 0) t1=$(tok 1)

tb top -b -n 2 -d 0.3 /app > "$D/frames"
check_eq "two frames: status" 0 "$?"
if LC_ALL=C grep -q $'\033' "$D/frames"; then fail "an escape byte in batch output"; fi
check_eq "two frames, each ended by a blank line" 2 "$(grep -c '^tumbler top /app - ' "$D/frames")"
check_eq "last line blank" "" "$(tail -n 1 "$D/frames")"
first=$(awk '/^tumbler top/ { n++ } n == 1' "$D/frames")
second=$(awk '/^tumbler top/ { n++ } n == 2' "$D/frames")
check_match "header" "^tumbler top /app - [0-9]{2}:[0-9]{2}:[0-9]{2}, every 0.3s$" "$(sed -n 1p <<< "$first")"
check_match "first frame: no rate yet" \
    "^server 127\.0\.0\.1:$LAUNCH_PORT standalone: - requests/s, latency min/avg/max [0-9.]+/[0-9.]+/[0-9.]+ ms, [0-9]+ outstanding, [0-9]+ connections, [0-9]+ nodes$" \
    "$(sed -n 2p <<< "$first")"
check_match "second frame: the rate" \
    "^server 127\.0\.0\.1:$LAUNCH_PORT standalone: [0-9]+\.[0-9] requests/s, latency " \
    "$(sed -n 2p <<< "$second")"
clock=$(sed -n 3p <<< "$first")
# Both servers' cons stamp the connection with their wall clock: the
# offset is measured, and on one host it is within its own bound.
check_match "ages on the server's clock" \
    "^ages on the server's clock \(ours [+-][0-9]+ ms, \+-[0-9]+ ms\)$" "$clock"
off=$(sed -n 's/.*ours \([+-][0-9]*\) ms, +-\([0-9]*\) ms.*/\1 \2/p' <<< "$clock")
read -r o e <<< "$off"
[ "${o#[+-]}" -le $((e + 2)) ] || fail "offset $o ms beyond its bound of $e ms"
check_eq "the count" "2 locks under /app: 2 holding, 1 waiting" "$(sed -n 4p <<< "$first")"
check_eq "a blank line" "" "$(sed -n 5p <<< "$first")"
check_eq "the lock" "/app/locks/job  mutex, 1 holding, 1 waiting" "$(sed -n 6p <<< "$first")"
check_match "the holder: its data, age, token, node" \
    "^  holder   the holder +held +[0-9]+s  token $t0 +_c_[0-9a-f-]{36}-lock-0000000000$" \
    "$(sed -n 7p <<< "$first")"
check_match "the waiter: its HOST:PID, token" \
    "^  waiting  $owner1 +waited +[0-9]+s  token $t1 +_c_[0-9a-f-]{36}-lock-0000000001$" \
    "$(sed -n 8p <<< "$first")"
check_eq "kazoo's lock, after in path order" "/app/zk  kazoo, 1 holding, 0 waiting" "$(sed -n 9p <<< "$first")"
check_match "kazoo's holder: its identifier, token" \
    "^  holder   kazoo holder +held +[0-9]+s  token $tkz +[0-9a-f]{32}__lock__0000000000$" \
    "$(sed -n 10p <<< "$first")"
check_eq "the frame ends there" 10 "$(wc -l <<< "$first" | tr -d ' ')"

# stdout a pipe: batch without -b.
piped=$(tb top -n 1 /app | cat)
if LC_ALL=C grep -q $'\033' <<< "$piped"; then fail "escape bytes on a pipe"; fi
check_eq "on a pipe: the same lock line" "/app/locks/job  mutex, 1 holding, 1 waiting" "$(sed -n 6p <<< "$piped")"

touch "$D/release"
gone() { "$TUMBLER" locks /app/locks/job | grep -Eq '^/app/locks/job: [a-z]+, 0 holding, 0 waiting$'; }
until_ok 10 gone || fail "the holders did not end"
echo "$kind: $FAILS failed"
[ "$FAILS" = 0 ]
