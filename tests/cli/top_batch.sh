#!/usr/bin/env bash
# tumbler top -b, the text for scripts:  top_batch.sh KIND TUMBLER
#
# KIND is "tumblerd" (needs TUMBLERD in the environment) or "zk" (Apache
# ZooKeeper 3.8), started by tests/integration/lib.sh.  Checks the frames
# line by line (header, the server's srvr figures and its request rate
# from the second frame on, which clock the ages are on, each lock with
# its holder and waiter, a kazoo Lock's holder), that there is not one
# escape byte, that a lock's plain parent and an idle path are no locks,
# that stdout on a pipe means batch without -b (its reader gone, top ends:
# 71), and that bad command lines are refused with
# status 64 and a message naming what is wrong.  On a server no other
# client uses, the rate is 0: neither top's four-letter words nor its own
# walk count.  For tumblerd, top --tls at a TLS port sends no four-letter
# word (it would go in clear: the server would count a failed handshake)
# and says there are no server figures.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=kind.sh
source "$here/kind.sh"
launch "$kind" server
export TUMBLER_SERVERS=127.0.0.1:$LAUNCH_PORT
D=$(it_tmpdir top)

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
for bad in "-d 0" "-d x" "-n 0" "-n -1" "rel" "/a /b" "--json"; do
    # shellcheck disable=SC2086
    err=$(tb top -b $bad 2>&1 > "$D/out")
    check_eq "top $bad: status" 64 "$?"
    check_eq "top $bad: nothing on stdout" "" "$(cat "$D/out")"
    case "$bad" in
    -d*) check_match "top $bad: names the delay" "^tumbler top: bad delay '${bad#-d }'" "$err" ;;
    -n*) check_match "top $bad: names the count" "^tumbler top: bad iteration count '${bad#-n }'" "$err" ;;
    rel) check_match "top rel: names the path" "'rel' is not an absolute path" "$err" ;;
    --json) check_match "top --json: an unknown option" "unknown option '--json'" "$err" ;;
    *) check_match "top /a /b: one PATH" "expected at most one PATH" "$err" ;;
    esac
done
# top prints no JSON: --json before it is refused too, not ignored.
err=$(tb --json top -b -n 1 2>&1 > "$D/out")
check_eq "--json top: status" 64 "$?"
check_eq "--json top: nothing on stdout" "" "$(cat "$D/out")"
check_match "--json top: says so" "^tumbler top: no --json output" "$err"

# ---- nothing there yet ----
out=$(tb top -b -n 1 /nothing)
check_eq "a path that does not exist: status" 0 "$?"
check_eq "a path that does not exist: no locks" "0 locks under /nothing: 0 holding, 0 waiting" \
    "$(sed -n 4p <<< "$out")"

# ---- top's own requests are not counted in the rate ----
# A few plain nodes and no other client: what the server receives while top
# walks them every 0.3 s is top's own walk (its session is there, as cons
# says) and its four-letter words (which no server counts): 0 a second.
for n in /idle /idle/a /idle/a/b /idle/c; do tb create "$n" > /dev/null; done
tb top -b -n 4 -d 0.3 /idle > "$D/idle" || fail "top /idle: status $?"
rates=$(awk '/^server / { print $4, $5, $6 }' "$D/idle" | tail -n 3)
check_eq "an idle server: 0 requests/s besides top's, three times" \
    "$(printf '0.0 requests/s besides\n%.0s' 1 2 3)" "$rates"

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
    "^server 127\.0\.0\.1:$LAUNCH_PORT standalone: [0-9]+\.[0-9] requests/s besides top's, latency " \
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
# Its reader gone (top -b | head -n1), top ends at its next frame with 71,
# saying nothing (EPIPE), rather than refreshing into the void for ever.
# shellcheck disable=SC2016  # expanded by the inner bash
st=$(timeout -k 5 30 bash -c '"$0" top -b -d 0.2 /app 2> "$1" | head -n1 > /dev/null
    echo "${PIPESTATUS[0]}"' "$TUMBLER" "$D/head.err")
check_eq "top -b | head -n1: the pipeline ends, top with 71" 71 "$st"
check_eq "top -b | head -n1: nothing said (EPIPE)" "" "$(cat "$D/head.err")"

# ---- --tls: no four-letter word in clear ----
if [ "$kind" = tumblerd ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$D/key.pem" -out "$D/cert.pem" \
        -days 2 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 > /dev/null 2>&1 ||
        it_die "openssl"
    cat "$D/key.pem" "$D/cert.pem" > "$D/server.pem"
    tdir=$(it_tmpdir tls) pport=$(free_port) tport=$(free_port)
    start_tumblerd "$tdir" "$pport" --secureClientPort="$tport" --ssl.clientAuth=none \
        --ssl.keyStore.location="$D/server.pem" --ssl.keyStore.type=PEM
    IT_PIDS+=("$SERVER_PID")
    wait_serving "$pport" 30 "$SERVER_PID" || it_die "tumblerd with a TLS port did not start"
    # connects LOG PORT: how many connections the traced process made to PORT
    connects() { grep -c "connect(.*sin_port=htons($2)" "$1"; }
    # (LeakSanitizer cannot run under ptrace: leaks are checked elsewhere)
    traced_asan=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
    ASAN_OPTIONS=$traced_asan TUMBLER_SERVERS=127.0.0.1:$tport timeout -k 5 30 strace -f -e trace=connect -o "$D/tls.trace" \
        "$TUMBLER" --tls --tls-ca "$D/cert.pem" top -b -n 2 -d 0.3 / > "$D/tls.out"
    check_eq "--tls: status" 0 "$?"
    out=$(cat "$D/tls.out")
    check_eq "--tls: no server figures, said" \
        "no server figures over TLS: the four-letter words would go in clear" "$(sed -n 2p <<< "$out")"
    check_eq "--tls: no cons" \
        "ages on this host's clock (the server's is not known: no cons over TLS)" "$(sed -n 3p <<< "$out")"
    check_eq "--tls: the walk ran" "0 locks under /: 0 holding, 0 waiting" "$(sed -n 4p <<< "$out")"
    # one connection, the session's over TLS: no four-letter word's
    check_eq "--tls: connections to the TLS port" 1 "$(connects "$D/tls.trace" "$tport")"
    # and the count can tell: without TLS, the words' connections are there
    ASAN_OPTIONS=$traced_asan TUMBLER_SERVERS=127.0.0.1:$pport timeout -k 5 30 strace -f -e trace=connect -o "$D/plain.trace" \
        "$TUMBLER" top -b -n 2 -d 0.3 / > /dev/null
    n=$(connects "$D/plain.trace" "$pport")
    [ "$n" -ge 4 ] || fail "without TLS: $n connections (the session, cons, srvr twice expected)"
fi

# ---- a node below PATH this session may not list: left out, not the walk ----
for n in /tree /tree/open /tree/secret /tree/secret/x; do tb create "$n" > /dev/null; done
tb setacl /tree/secret world:anyone:c
out=$(tb top -b -n 1 /tree)
check_eq "an unreadable node below PATH: status" 0 "$?"
check_eq "an unreadable node below PATH: the walk goes on" \
    "0 locks under /tree: 0 holding, 0 waiting" "$(sed -n 4p <<< "$out")"

touch "$D/release"
gone() { "$TUMBLER" locks /app/locks/job | grep -Eq '^/app/locks/job: [a-z]+, 0 holding, 0 waiting$'; }
until_ok 10 gone || fail "the holders did not end"
echo "$kind: $FAILS failed"
[ "$FAILS" = 0 ]
