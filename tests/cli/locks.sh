#!/usr/bin/env bash
# tumbler locks: the holder and the queue, in order, with session, fencing
# token, since-time and owner, for the mutex, read-write, semaphore,
# election and non-fair layouts; --json too, with the session ids the
# text shows.  Then one path, one lock: a plain tumbler lock waits for
# --shared holders and is listed in sequence order among them, a kazoo
# Lock holds it like ours (listed), and a path of another layout (a kazoo
# Semaphore, a non-fair lock's node, a plain node) is refused with status
# 65 and a message, and named by locks.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
srv_start
D=$T_DIR

# holder ID LOCK-ARGS...: tumbler lock that keeps the lock until
# $D/release.ID exists; its pid (the owner in the node data) in $D/ID.pid.
holder()
{
    bgp 90 "$D/$1.pid" "$TUMBLER" lock "${@:2}" -- sh -c \
        'touch "$0/held.$1"; while [ ! -e "$0/release.$1" ]; do sleep 0.05; done' "$D" "$1"
    eval "job_$1=\$BG_PID"
}

check_eq "a lock nobody used" "/none: none, 0 holding, 0 waiting" "$(tb locks /none)"
tb locks rel 2>/dev/null; check_eq "relative path: 64" 64 "$?"

# ---- fair mutex: a holds, b then c queue ----
holder a /m
wait_for 10 test -e "$D/held.a"
holder b /m
wait_for 10 queue_at_least /m 2
holder c --data "job c" /m
wait_for 10 queue_at_least /m 3
out=$(tb locks /m)
check_eq "summary line" "/m: mutex, 1 holding, 2 waiting" "$(sed -n 1p <<< "$out")"
check_match "column header" "^POS +ROLE +KIND +SESSION +TOKEN +SINCE +OWNER +NODE$" "$(sed -n 2p <<< "$out")"
host=$(hostname)
pa=$(cat "$D/a.pid"); pb=$(cat "$D/b.pid")
check_match "1: a holds" "^1 +holder +lock +0x[0-9a-f]{1,16} +[0-9]+ +[0-9-]+ [0-9:]+ +$host:$pa +_c_[0-9a-f-]{36}-lock-[0-9]{10}$" \
    "$(sed -n 3p <<< "$out")"
check_match "2: b waits first" "^2 +waiting +lock .* $host:$pb +_c_" "$(sed -n 4p <<< "$out")"
check_match "3: c waits next, its --data as owner" "^3 +waiting +lock .* job c +_c_" "$(sed -n 5p <<< "$out")"
tokens=$(sed -n '3,5p' <<< "$out" | awk '{ print $5 }')
check_eq "tokens in queue order" "$(sort -n <<< "$tokens")" "$tokens"
check_eq "three sessions" 3 "$(sed -n '3,5p' <<< "$out" | awk '{ print $4 }' | sort -u | wc -l)"
j=$(tb --json locks /m)
check_eq "json: the sessions the text shows, in queue order" \
    "$(sed -n '3,5p' <<< "$out" | awk '{ print $4 }')" \
    "$(json_get '"\n".join(e["session"] for e in d["holders"] + d["waiting"])' <<< "$j")"
check_eq "the holder's session as stat writes its ephemeralOwner" \
    "$(tb stat "$(json_get 'd["holders"][0]["path"]' <<< "$j")" | sed -n 's/^ephemeralOwner = //p')" \
    "$(sed -n 3p <<< "$out" | awk '{ print $4 }')"
check_eq "json: layout" "mutex" "$(json_get 'd["layout"]' <<< "$j")"
check_eq "json: holder" "$host:$pa" "$(json_get 'd["holders"][0]["owner"]' <<< "$j")"
check_eq "json: queue" "$host:$pb job c" \
    "$(json_get '" ".join(w["owner"] for w in d["waiting"])' <<< "$j")"
check_eq "json: token is the czxid" \
    "$(tb --json stat "$(json_get 'd["holders"][0]["path"]' <<< "$j")" | json_get 'd["stat"]["czxid"]')" \
    "$(json_get 'd["holders"][0]["token"]' <<< "$j")"
touch "$D/release.a"; wait_st "$job_a"
wait_for 10 test -e "$D/held.b"
out=$(tb locks /m)
check_match "after a: b holds" "^1 +holder .* $host:$pb " "$(sed -n 3p <<< "$out")"
check_match "after a: c waits" "^2 +waiting .* job c " "$(sed -n 4p <<< "$out")"
touch "$D/release.b" "$D/release.c"; wait_st "$job_b"; wait_st "$job_c"

# ---- owners anyone can write: never an escape for the terminal, always
# valid UTF-8 in --json ----
holder o1 --data $'a\e[31mb\xc2\x9bc\xffd\xe2\x82' /ctl
o1=$BG_PID
wait_for 10 test -e "$D/held.o1"
holder o2 --data '' /ctl
o2=$BG_PID
wait_for 10 queue_at_least /ctl 2
out=$(tb locks /ctl)
check_eq "owner: no ESC or C1 byte" 0 "$(printf '%s' "$out" | grep -c $'\e\|\xc2\x9b')"
check_eq "owner: control characters and bytes of no character as ?" \
    "a?[31mb?c?d??" "$(sed -n 3p <<< "$out" | awk '{ print $8 }')"
check_match "owner: none shown as -" "^2 +waiting +lock .* - +_c_" "$(sed -n 4p <<< "$out")"
check_eq "json: valid UTF-8, each stray byte U+FFFD" \
    "'a\\x1b[31mb\\x9bc\\ufffdd\\ufffd\\ufffd' ''" \
    "$(tb --json locks /ctl | python3 -c 'import json, sys
d = json.loads(sys.stdin.buffer.read().decode("utf-8"))
print(ascii(d["holders"][0]["owner"]), ascii(d["waiting"][0]["owner"]))')"
touch "$D/release.o1" "$D/release.o2"; wait_st "$o1"; wait_st "$o2"
bg 60 "$TUMBLER" elect --data $'x\ey\xff' /elctl -- sh -c 'while [ ! -e "$0/release.elctl" ]; do sleep 0.05; done' "$D"
e1=$BG_PID
wait_for 10 queue_at_least /elctl 1
bg 30 "$TUMBLER" elect -l /elctl > "$D/obsctl.out"
obs=$BG_PID
wait_for 10 test -s "$D/obsctl.out"
kill -TERM "$obs"; wait_st "$obs"
check_match "elect -l: the leader's owner with no ESC byte" '^leader x\?y\? \(token [0-9]+\)$' \
    "$(cat "$D/obsctl.out")"
touch "$D/release.elctl"; wait_st "$e1"

# ---- non-fair ----
holder n --non-fair /nf
wait_for 10 test -e "$D/held.n"
out=$(tb locks /nf)
check_eq "non-fair summary" "/nf: non-fair, 1 holding, 0 waiting" "$(sed -n 1p <<< "$out")"
check_match "non-fair holder and owner" "^1 +holder +lock .* $host:$(cat "$D/n.pid") +\.$" "$(sed -n 4p <<< "$out")"
touch "$D/release.n"; wait_st "$job_n"

# ---- read-write: r1 r2 hold, w waits, r3 waits behind w ----
holder r1 --shared /rw; wait_for 10 test -e "$D/held.r1"
holder r2 --shared /rw; wait_for 10 test -e "$D/held.r2"
holder w --exclusive /rw; wait_for 10 queue_at_least /rw 3
holder r3 --shared /rw; wait_for 10 queue_at_least /rw 4
out=$(tb locks /rw)
check_eq "rw summary" "/rw: read-write, 2 holding, 2 waiting" "$(sed -n 1p <<< "$out")"
check_eq "rw roles and kinds in order" \
    "$(printf 'holder read\nholder read\nwaiting write\nwaiting read')" \
    "$(sed -n '3,6p' <<< "$out" | awk '{ print $2, $3 }')"
touch "$D/release.r1" "$D/release.r2"; wait_st "$job_r1"; wait_st "$job_r2"
wait_for 10 test -e "$D/held.w"
check_eq "rw: the writer holds, the reader waits" \
    "$(printf 'holder write\nwaiting read')" \
    "$(tb locks /rw | sed -n '3,4p' | awk '{ print $2, $3 }')"
touch "$D/release.w" "$D/release.r3"; wait_st "$job_w"; wait_st "$job_r3"

# ---- semaphore of 2: s1 s2 hold, s3 waits ----
holder s1 --semaphore 2 /sem; wait_for 10 test -e "$D/held.s1"
holder s2 --semaphore 2 /sem; wait_for 10 test -e "$D/held.s2"
holder s3 --semaphore 2 /sem; wait_for 10 queue_at_least /sem 3
out=$(tb locks --semaphore 2 /sem)
check_match "semaphore summary" "^/sem: semaphore, 2 holding, [12] waiting$" "$(sed -n 1p <<< "$out")"
check_eq "semaphore: two leases hold" 2 "$(grep -Ec '^[0-9]+ +holder +lease' <<< "$out")"
check_match "semaphore: the third waits" "^[0-9]+ +waiting +(lease|lock) " "$out"
touch "$D/release.s1"; wait_st "$job_s1"
wait_for 10 test -e "$D/held.s3"; check_eq "semaphore: s3 gets the freed lease" 0 "$?"
touch "$D/release.s2" "$D/release.s3"; wait_st "$job_s2"; wait_st "$job_s3"

# ---- election ----
bg 60 "$TUMBLER" elect --data one /el -- sh -c 'while [ ! -e "$0/release.el" ]; do sleep 0.05; done' "$D"
e1=$BG_PID
wait_for 10 queue_at_least /el 1
bg 60 "$TUMBLER" elect --data two /el -- true
e2=$BG_PID
wait_for 10 queue_at_least /el 2
out=$(tb locks /el)
check_eq "election summary" "/el: election, 1 holding, 1 waiting" "$(sed -n 1p <<< "$out")"
check_match "election: the leader" "^1 +leader +latch .* one +_c_" "$(sed -n 3p <<< "$out")"
check_match "election: the candidate" "^2 +waiting +latch .* two +_c_" "$(sed -n 4p <<< "$out")"
bg 30 "$TUMBLER" --json elect -l /el > "$D/obs.out"
obs=$BG_PID
wait_for 10 test -s "$D/obs.out"
kill -TERM "$obs"; wait_st "$obs"
sid=$(sed -n 3p <<< "$out" | awk '{ print $4 }')
check_eq "the leader's session: in locks --json and elect -l --json as in the text" \
    "$sid $sid" \
    "$(tb --json locks /el | json_get 'd["holders"][0]["session"]') $(head -n 1 "$D/obs.out" | json_get 'd["leader"]["session"]')"
touch "$D/release.el"; wait_st "$e1"; wait_st "$e2"

# ---- one path, one lock: the default lock against --shared holders ----
holder x1 --shared /mix; wait_for 10 test -e "$D/held.x1"
holder x2 --shared /mix; wait_for 10 test -e "$D/held.x2"
tb lock -n /mix -- touch "$D/ran.mix"
check_eq "plain lock -n while two --shared hold: not acquired" "1 no" \
    "$? $([ -e "$D/ran.mix" ] && echo yes || echo no)"
holder x3 /mix; wait_for 10 queue_at_least /mix 3
out=$(tb locks /mix)
check_eq "mixed summary" "/mix: mutex+read-write, 2 holding, 1 waiting" "$(sed -n 1p <<< "$out")"
check_eq "readers hold, the lock waits" \
    "$(printf 'holder read\nholder read\nwaiting lock')" \
    "$(sed -n '3,5p' <<< "$out" | awk '{ print $2, $3 }')"
touch "$D/release.x1" "$D/release.x2"; wait_st "$job_x1"; wait_st "$job_x2"
wait_for 10 test -e "$D/held.x3"; check_eq "the lock holds once the readers left" 0 "$?"
tb lock -n -s /mix -- true
check_eq "--shared -n while the plain lock holds: not acquired" 1 "$?"
holder x4 --exclusive /mix; wait_for 10 queue_at_least /mix 2
holder x5 --shared /mix; wait_for 10 queue_at_least /mix 3
check_eq "in sequence order: the lock holds, the writer then the reader wait" \
    "$(printf 'holder lock\nwaiting write\nwaiting read')" \
    "$(tb locks /mix | sed -n '3,5p' | awk '{ print $2, $3 }')"
check_eq "json: the same order" "lock write read" \
    "$(tb --json locks /mix | json_get '" ".join(e["kind"] for e in d["holders"] + d["waiting"])')"
touch "$D/release.x3" "$D/release.x4" "$D/release.x5"
wait_st "$job_x3"; wait_st "$job_x4"; wait_st "$job_x5"

# ---- a non-fair lock's node is no queue's parent ----
holder nf --non-fair /nfmix; wait_for 10 test -e "$D/held.nf"
err=$(tb lock -n /nfmix -- true 2>&1)
check_eq "fair lock on a non-fair lock's node: refused (65)" 65 "$?"
check_match "the refusal says so" "EFOREIGNLOCK" "$err"
check_match "and what it found" "^tumbler: lock /nfmix refused: /nfmix is an ephemeral node" "$err"
touch "$D/release.nf"; wait_st "$job_nf"

# ---- a node of no lock layout under the path ----
tb create /plain "" > /dev/null && tb create /plain/job-1 x > /dev/null
err=$(tb lock -n /plain -- touch "$D/ran.plain" 2>&1)
check_eq "lock on a path holding a plain node: refused (65), not run" "65 no" \
    "$? $([ -e "$D/ran.plain" ] && echo yes || echo no)"
check_match "what it found" "^tumbler: lock /plain refused: /plain/job-1: a node of no lock layout$" "$err"
check_match "then the error" "^tumbler: lock /plain: .*\(EFOREIGNLOCK\)$" "$err"
# Under a PATH of 1212 bytes (ZooKeeper sets paths no short limit): the
# node it found, named whole.
long=$(printf '/%0100d' $(seq 1 12))
tb create -p "$long/job-1" x > /dev/null
err=$(tb lock -n "$long" -- true 2>&1)
check_eq "a long PATH holding a plain node: refused (65)" 65 "$?"
check_match "a long PATH: what it found, whole" \
    "^tumbler: lock $long refused: $long/job-1: a node of no lock layout$" "$err"
err=$(tb lock -w 2 -x /plain -- true 2>&1)
check_eq "-x, waiting: refused (65) at once, not timed out" 65 "$?"
out=$(tb locks /plain)
check_eq "locks: foreign summary" "/plain: foreign, 0 holding, 0 waiting" "$(sed -n 1p <<< "$out")"
check_eq "locks: the node named, and the refusal" \
    "$(printf 'other node: job-1 (a node of no lock layout)\n(tumbler lock refuses /plain while other nodes are there)')" \
    "$(sed -n 2,3p <<< "$out")"
check_eq "locks --json: foreign" "job-1: a node of no lock layout" \
    "$(tb --json locks /plain | json_get '" ".join(f["node"] + ": " + f["what"] for f in d["foreign"])')"
holder p1 /plainq; wait_for 10 test -e "$D/held.p1"
tb create /plainq/job-2 x > /dev/null
out=$(tb locks /plainq)
check_eq "locks: a queue with a foreign node: both shown" \
    "$(printf '/plainq: mutex, 1 holding, 0 waiting\nother node: job-2 (a node of no lock layout)')" \
    "$(sed -n 1,2p <<< "$out")"
check_match "and the holder" "^1 +holder +lock " "$(sed -n 5p <<< "$out")"
tb lock -n /plainq -- true 2> /dev/null
check_eq "a lock on it: refused (65)" 65 "$?"
touch "$D/release.p1"; wait_st "$job_p1"

# ---- kazoo (python3-kazoo) on the same paths ----
KAZOO_PY=/usr/bin/python3
"$KAZOO_PY" -c 'import kazoo' 2> /dev/null ||
    { echo "python3-kazoo is needed (scripts/deps.sh --test installs it)" >&2; exit 1; }
# kazoo_hold ID KIND PATH: a kazoo Lock ("lock") or Semaphore ("sem") held
# until $D/release.ID exists; $D/held.ID once held.
kazoo_hold()
{
    bg 60 "$KAZOO_PY" -c '
import os, sys, time
from kazoo.client import KazooClient
d, who, kind, path = sys.argv[1:5]
zk = KazooClient(hosts=os.environ["TUMBLER_SERVERS"], timeout=4.0)
zk.start(timeout=20)
lk = zk.Lock(path, "kazoo " + who) if kind == "lock" else \
    zk.Semaphore(path, "kazoo " + who, max_leases=2)
lk.acquire(timeout=20)
open(os.path.join(d, "held." + who), "w").close()
while not os.path.exists(os.path.join(d, "release." + who)):
    time.sleep(0.05)
lk.release()
zk.stop()' "$D" "$1" "$2" "$3"
    eval "job_$1=\$BG_PID"
}

kazoo_hold k1 lock /kz; wait_for 20 test -e "$D/held.k1"
tb lock -n /kz -- touch "$D/ran.kz"
check_eq "lock -n while kazoo holds: not acquired" "1 no" \
    "$? $([ -e "$D/ran.kz" ] && echo yes || echo no)"
out=$(tb locks /kz)
check_eq "kazoo summary" "/kz: kazoo, 1 holding, 0 waiting" "$(sed -n 1p <<< "$out")"
check_match "the kazoo holder, its identifier as owner" \
    "^1 +holder +kz-lock .* kazoo k1 +[0-9a-f]{32}__lock__[0-9]{10}$" "$(sed -n 3p <<< "$out")"
bg 60 "$TUMBLER" lock -w 30 /kz -- touch "$D/ran.kz"
kw=$BG_PID
wait_for 10 queue_at_least /kz 2
check_eq "a waiting lock queues behind kazoo" \
    "$(printf 'holder kz-lock\nwaiting lock')" \
    "$(tb locks /kz | sed -n '3,4p' | awk '{ print $2, $3 }')"
[ ! -e "$D/ran.kz" ]; check_eq "not run while kazoo holds" 0 "$?"
touch "$D/release.k1"; wait_st "$job_k1"
wait_st "$kw"
check_eq "runs once kazoo released" "0 yes" "$ST $([ -e "$D/ran.kz" ] && echo yes || echo no)"

kazoo_hold k2 sem /kzsem; wait_for 20 test -e "$D/held.k2"
err=$(tb lock -w 5 /kzsem -- touch "$D/ran.kzsem" 2>&1)
check_eq "lock on a kazoo Semaphore's path: refused (65), not run" "65 no" \
    "$? $([ -e "$D/ran.kzsem" ] && echo yes || echo no)"
check_match "the refusal names the error" "lock /kzsem: .*EFOREIGNLOCK" "$err"
check_match "and the kazoo lease it found" \
    "^tumbler: lock /kzsem refused: /kzsem/[0-9a-f]{32}: a kazoo Semaphore's lease$" "$err"
err=$(tb lock -n --semaphore 2 /kzsem -- true 2>&1)
check_eq "--semaphore on a kazoo Semaphore's path: refused (65)" 65 "$?"
check_match "naming the kazoo lease" "refused: /kzsem/[0-9a-f]{32}: a kazoo Semaphore's lease$" "$err"
out=$(tb locks /kzsem)
check_eq "foreign summary" "/kzsem: foreign, 0 holding, 0 waiting" "$(sed -n 1p <<< "$out")"
check_match "the kazoo lease named" "^other node: [0-9a-f]{32} \(a kazoo Semaphore's lease\)$" "$out"
check_eq "json: the lease named" "a kazoo Semaphore's lease" \
    "$(tb --json locks /kzsem | json_get 'd["foreign"][0]["what"]')"
touch "$D/release.k2"; wait_st "$job_k2"

t_end
