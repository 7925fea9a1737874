#!/usr/bin/env bash
# A damaged log is refused, never silently shortened.  A log of three
# segments (1 MiB, 8 MiB and a third, with a snapshot) is made with 64 KiB
# creates and stopped cleanly; then, each on a fresh copy, one kind of
# damage: truncation at several points of every segment, a byte flipped in
# the header and in the payload of the first, a middle and the last record,
# a segment deleted, renamed or copied in, a record of another log, the
# term older than the log, the newest snapshot emptied (said, as passed
# over), wal-meta removed, every
# segment gone from under the snapshot, the snapshot gone from before the
# log.  Each start must end with status 1, say what is wrong (the
# file, and for a record its offset) and leave every file as it was.  What
# a crash leaves (the closing record and the last write gone) opens
# without that write, and says so.  Last, tumblerd --repair-log on a damaged
# copy: it says what it drops, keeps a copy of it, and the log then opens
# with the writes before the damage, and zxids above every earlier one;
# a member of an ensemble is refused a repair, nothing changed, and its
# log, recovered with --recover-ensemble --repair-log, is cut the same way
# and serves the writes before the damage, zxids in a new epoch; damaged
# again before the recovery's entries and repaired, then before the
# repair's and recovered, zxids go on above every one given (each epoch
# reached is recorded in wal-meta, and the next one begun above it).  Also: a
# SIGHUP while the log is read at start does not end it; a member whose
# quorum or election port is taken is refused before its data directory
# is made.
#   damage.sh TUMBLERD ACKED_WRITER
set -euo pipefail
tumblerd=("$1") writer=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-damage.XXXXXX")
source "$(dirname "$0")/lib.sh"
pid=""
cleanup() {
    local rc=$?
    crash_kill $pid
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT
seg() { printf '%s/wal-%016x' "$1" "$2"; }

# records DIR SEQ: "offset kind length" of each whole record of segment
# SEQ (length: of its payload).
records() {
    python3 - "$(seg "$1" "$2")" "$2" <<'EOF'
import sys, zlib
data = open(sys.argv[1], "rb").read()
seq = int(sys.argv[2])
for off in range(0, len(data) - 64, 4096):
    h = data[off:off + 64]
    if h[:4] != b"3WBT":
        continue
    n = int.from_bytes(h[40:48], "big")
    if zlib.crc32(data[off + 8:off + 64 + n]) != int.from_bytes(h[4:8], "big"):
        continue
    if int.from_bytes(h[36:40], "big") == seq:
        print(off, int.from_bytes(h[12:16], "big"), n)
EOF
}

# flip_after_cut DIR LOG: a byte of the first record written after the cut
# that LOG ("repair: the log now ends at wal-X, offset O") says a repair
# made, inverted: in segment X from O on, or else the next segment's first.
flip_after_cut() {
    local seq off first
    read -r seq off < <(sed -n 's/.*repair: the log now ends at wal-\([0-9a-f]*\), offset \([0-9]*\);.*/\1 \2/p' "$2")
    seq=$((16#$seq))
    first=$(records "$1" "$seq" | awk -v o="$off" '$1 >= o { print $1; exit }')
    if [ -z "$first" ]; then
        seq=$((seq + 1))
        first=$(records "$1" "$seq" | awk 'NR == 1 { print $1 }')
    fi
    flip "$1" "$seq" $((first + 20))
}
# rises DIR PATH PREV LOG WHAT: started on DIR, the writes acknowledged
# before the damage are served, and a write to PATH is given a zxid above
# PREV (else LOG is shown); that zxid in $got, the server stopped again.
rises() {
    crash_start "$1"
    "$writer" verify "127.0.0.1:$port" <"$dir/acked-small"
    "$writer" write "127.0.0.1:$port" "$2" 1 >/dev/null 2>&1
    got=$(zxid)
    [ $((got)) -gt $(($3)) ] || { echo "$5: zxid $got, not above $3:"; cat "$4"; exit 1; }
    echo "$5: zxid $got, above $3"
    kill "$pid"; wait "$pid" || true; pid=""
}
# flip DIR SEQ OFFSET: one byte of a segment inverted.
flip() {
    python3 - "$(seg "$1" "$2")" "$3" <<'EOF'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0xff]))
EOF
}

sums() { (cd "$1" && find . -type f ! -name LOCK -print0 | sort -z | xargs -0 md5sum); }

# refused NAME PATTERN: the copy in $dir/NAME does not open: status 1, a
# line matching PATTERN, and no file changed.
refused() {
    local d=$dir/$1 status=0
    sums "$d" >"$dir/before"
    timeout -s KILL 30 "${tumblerd[@]}" --clientPort="$port" --dataDir="$d" \
        2>"$dir/start.log" || status=$?
    [ "$status" = 1 ] || { echo "$1: tumblerd ended with $status, not 1:"; cat "$dir/start.log"; exit 1; }
    grep -q -- "$2" "$dir/start.log" ||
        { echo "$1: no line saying '$2':"; cat "$dir/start.log"; exit 1; }
    sums "$d" | diff "$dir/before" - >/dev/null ||
        { echo "$1: a refused start changed the data directory:"; sums "$d" | diff "$dir/before" -; exit 1; }
    printf '%-28s %s\n' "$1" "$(grep -m1 -o 'io: .*\|(metadata1.*\|holds files.*' "$dir/start.log" | cut -c1-150)"
}

# copy NAME: a fresh copy of the log.
copy() { rm -rf "${dir:?}/$1"; cp -a "$dir/base" "$dir/$1"; echo "$dir/$1"; }

port=$(free_port)
zxid() { printf srvr | nc -q1 127.0.0.1 "$port" | sed -n 's/^Zxid: //p'; }

# A log that snapshots have shortened: segments 2 and 3 (1 is covered and
# removed), and the snapshot.
crash_start "$dir/base"
ACKED_WRITER_DATA=65536 "$writer" write "127.0.0.1:$port" /d 150 >"$dir/acked" 2>"$dir/writer.err"
[ "$(grep -c . "$dir/acked")" = 150 ] || { echo "the writes failed"; cat "$dir/writer.err"; exit 1; }
kill "$pid"; wait "$pid" || true; pid=""
# A SIGHUP (a reload: systemctl's, logrotate's) while the snapshot and the
# log are read at start does not end the server: it then serves every
# write.  SIGHUPs go from its first steps on (once it ignores SIGXFSZ,
# which it does after SIGHUP) until it serves.
ignores() { # ignores PID SIGNO: /proc's SigIgn mask has SIGNO
    local m
    m=$(sed -n 's/^SigIgn:\t*//p' "/proc/$1/status" 2>/dev/null)
    [ -n "$m" ] && (( (16#$m >> ($2 - 1)) & 1 ))
}
d=$(copy hup)
"${tumblerd[@]}" --clientPort="$port" --dataDir="$d" --4lw.commands.whitelist='*' \
    2>>"$dir/server.log" &
pid=$!
for _ in $(seq 2000); do ignores "$pid" 25 && break; sleep 0.001; done
( while kill -HUP "$pid" 2>/dev/null; do sleep 0.005; done ) &
hups=$!
crash_start_wait
kill "$hups"; wait "$hups" 2>/dev/null || true
"$writer" verify "127.0.0.1:$port" <"$dir/acked"
kill "$pid"; wait "$pid" || true; pid=""
mapfile -t segs < <(cd "$dir/base" && ls wal-0* | sed 's/wal-0*//')
[ "${#segs[@]}" -ge 2 ] || { echo "fewer than two segments:"; ls -l "$dir/base"; exit 1; }
ls "$dir/base" | grep -q '^state-' || { echo "no snapshot:"; ls -l "$dir/base"; exit 1; }
oldest=${segs[0]} newest=${segs[-1]}
name() { printf 'wal-%016x' "$1"; }

# Truncation of every segment at several points.
for s in "${segs[@]}"; do
    size=$(stat -c %s "$(seg "$dir/base" "$s")")
    for cut in 0 4096 100000 $((size / 2)) $((size - 1)); do
        d=$(copy trunc$s-$cut); truncate -s "$cut" "$(seg "$d" "$s")"
        refused trunc$s-$cut "$(name "$s") is $cut bytes"
    done
done

# A byte flipped in the header (the index) and in the payload of the
# first, a middle and the last record of every segment.
for s in "${segs[@]}"; do
    mapfile -t recs < <(records "$dir/base" "$s" | awk '$2 == 1 { print $1, $3 }')
    # The newest may have been made ahead of need, and have none yet.
    if [ "${#recs[@]}" -eq 0 ]; then
        [ "$s" = "$newest" ] || { echo "segment $s has no records"; exit 1; }
        continue
    fi
    filled=$s
    for which in first middle last; do
        case $which in
        first) rec=${recs[0]} ;;
        middle) rec=${recs[$(( ${#recs[@]} / 2 ))]} ;;
        last) rec=${recs[-1]} ;;
        esac
        # The index in the header; the middle of the payload.
        for part in 20 $(( 64 + ${rec#* } / 2 )); do
            d=$(copy flip$s-$which-$part)
            flip "$d" "$s" $(( ${rec% *} + part ))
            refused flip$s-$which-$part "wal-[0-9a-f]* offset [0-9]*: a whole record"
        done
    done
done

# Segments deleted, renamed, copied in; a record of another log.
d=$(copy deleted-oldest); rm "$(seg "$d" "$oldest")"; refused deleted-oldest "$(name "$oldest") is missing"
d=$(copy deleted-newest); rm "$(seg "$d" "$newest")"; refused deleted-newest "$(name "$newest") is missing"
d=$(copy renamed); mv "$(seg "$d" "$newest")" "$(seg "$d" $((newest + 2)))"; refused renamed "$(name "$newest") is missing"
d=$(copy extra); cp "$(seg "$d" "$filled")" "$(seg "$d" $((newest + 1)))"; refused extra "$(name $((newest + 1))) offset 0: a record of $(name "$filled")"
crash_start "$dir/other"
"$writer" write "127.0.0.1:$port" /o 3 >/dev/null 2>&1
kill "$pid"; wait "$pid" || true; pid=""
d=$(copy foreign); cp "$(seg "$dir/other" 1)" "$(seg "$d" "$oldest")"; refused foreign "a record of another log"
# The newest snapshot's header damaged (its term).
state=$(cd "$dir/base" && ls state-0* | tail -1)
d=$(copy flip-state)
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(20); b = f.read(1); f.seek(20); f.write(bytes([b[0] ^ 0xff]))' "$d/$state"
refused flip-state "snapshot $state: its header is damaged (checksum mismatch)"
# ... emptied: passed over (an older release's state has no header
# either), and said, so that the refusal for the entries it held is
# understood.
d=$(copy empty-state)
find "$d" -maxdepth 1 -name 'state-*' ! -name "$state" -delete # no older one to fall back on
: >"$d/$state"
refused empty-state "snapshot $state passed over: not of this format"
# wal-meta; a snapshot without its log, a
# log without its snapshot.
d=$(copy no-wal-meta); rm "$d/wal-meta"; refused no-wal-meta "holds files of a log but no wal-meta"
d=$(copy no-segments); rm "$d"/wal-0*; refused no-segments "is missing"
d=$(copy no-snapshot); rm "$d"/state-*; refused no-snapshot "the log starts at entry [0-9]*, but the newest snapshot holds entries up to 0"

# The newest segment with records added to: refused; repaired, it is made
# as long as its records say again (it was left as long, and every repair
# was refused the same way), and every acknowledged write is served.
d=$(copy added-to)
head -c 4096 /dev/urandom >>"$(seg "$d" "$filled")"
refused added-to "$(name "$filled") is [0-9]* bytes, but its records say it was made [0-9]* bytes long"
if [ "$filled" = "$newest" ]; then
    "${tumblerd[@]}" --repair-log --dataDir="$d" 2>"$dir/repair-added.log" ||
        { echo "--repair-log of a segment added to failed:"; cat "$dir/repair-added.log"; exit 1; }
    crash_start "$d"
    "$writer" verify "127.0.0.1:$port" <"$dir/acked"
    kill "$pid"; wait "$pid" || true; pid=""
    echo "the newest segment added to: repaired, every acknowledged write served"
fi

# The repair of a log of several segments, its newest cut short: the log
# it leaves opens, and goes on opening after more writes.
d=$(copy repaired-segments)
truncate -s 100000 "$(seg "$d" "$newest")"
"${tumblerd[@]}" --repair-log --dataDir="$d" 2>"$dir/repair-segs.log" ||
    { echo "--repair-log failed:"; cat "$dir/repair-segs.log"; exit 1; }
for round in 1 2; do
    crash_start "$d"
    ACKED_WRITER_DATA=65536 "$writer" write "127.0.0.1:$port" /r$round 40 >"$dir/acked-r$round" 2>/dev/null
    [ "$(grep -c . "$dir/acked-r$round")" = 40 ] || { echo "no writes after the repair"; cat "$dir/server.log"; exit 1; }
    kill "$pid"; wait "$pid" || true; pid=""
done
crash_start "$d"
cat "$dir/acked-r1" "$dir/acked-r2" | "$writer" verify "127.0.0.1:$port"
kill "$pid"; wait "$pid" || true; pid=""

# A log no snapshot shortened, one segment: what a crash leaves (the
# closing record and the last write but one gone) opens without the last
# write; the repair of the last create's record damaged.
crash_start "$dir/small"
"$writer" write "127.0.0.1:$port" /s 40 >"$dir/acked-small" 2>/dev/null
[ "$(grep -c . "$dir/acked-small")" = 40 ] || { echo "the small log's writes failed"; exit 1; }
# One more, alone: its record is the last but one (its session's close).
"$writer" write "127.0.0.1:$port" /t 1 >"$dir/acked-last" 2>/dev/null
zxid=$(zxid)
kill "$pid"; wait "$pid" || true; pid=""
! ls "$dir/small" | grep -q '^state-' || { echo "the small log has a snapshot"; exit 1; }
rm -rf "$dir/base"; mv "$dir/small" "$dir/base"
d=$(copy crashed)
mapfile -t last < <(records "$d" 1 | tail -3 | cut -d' ' -f1,2)
[ "${last[2]#* }" = 4 ] || { echo "the last record is not the closing one: ${last[*]}"; exit 1; }
# The write before the last lost (the last create's), the last whole (its
# session's close): the last is dropped too.
flip "$d" 1 "${last[2]% *}"
flip "$d" 1 "$(( ${last[0]% *} + 20 ))"
crash_start "$d"
grep -q "what a crash left of writes never acknowledged: dropped" "$dir/server.log" ||
    { echo "the write dropped is not said:"; cat "$dir/server.log"; exit 1; }
grep "dropped" "$dir/server.log" | tail -1
"$writer" verify "127.0.0.1:$port" <"$dir/acked-small"
if "$writer" verify "127.0.0.1:$port" <"$dir/acked-last" >/dev/null 2>&1; then
    echo "the write the simulated crash lost is there"; exit 1
fi
kill "$pid"; wait "$pid" || true; pid=""

d=$(copy repaired)
mapfile -t recs < <(records "$d" 1 | awk '$2 == 1 { print $1 }')
flip "$d" 1 $(( ${recs[-2]} + 20 ))
cp "$(seg "$d" 1)" "$dir/damaged"
refused repaired "offset [0-9]*: a whole record"
status=0
timeout -s KILL 60 "${tumblerd[@]}" --repair-log --dataDir="$d" 2>"$dir/repair.log" || status=$?
[ "$status" = 0 ] || { echo "--repair-log ended with $status:"; cat "$dir/repair.log"; exit 1; }
grep WARN "$dir/repair.log"
grep -q "repair: kept the log up to entry [0-9]* (zxid 0x[0-9a-f]*); dropped [0-9]* bytes of segments beyond it, in which [0-9]* whole record(s) of [0-9]* entries were found; the files changed or removed are copied in" "$dir/repair.log" ||
    { echo "no line saying what was kept and dropped:"; cat "$dir/repair.log"; exit 1; }
grep -q "zxids go on from 0x100000000," "$dir/repair.log" ||
    { echo "no new epoch:"; cat "$dir/repair.log"; exit 1; }
backup=$(ls -d "$d"/repair-*)
cmp "$backup/wal-0000000000000001" "$dir/damaged"
crash_start "$d"
# The writes acknowledged before the damaged record are there, its own
# is not; zxids went on above every one given before.
"$writer" verify "127.0.0.1:$port" <"$dir/acked-small"
if "$writer" verify "127.0.0.1:$port" <"$dir/acked-last" >/dev/null 2>&1; then
    echo "the write of the damaged record is there"; exit 1
fi
"$writer" write "127.0.0.1:$port" /after 1 >/dev/null 2>&1
now=$(zxid)
[ $(( now )) -gt $(( zxid )) ] && [ $(( now )) -gt $(( 0x100000000 )) ] ||
    { echo "zxid $now after the repair, $zxid before the damage"; exit 1; }
kill "$pid"; wait "$pid" || true; pid=""
# A member of an ensemble is refused a repair (it would need a leader to
# log the new epoch), changing nothing: it is started empty instead.
m=$(copy member)
flip "$m" 1 $(( ${recs[-2]} + 20 ))
printf 'dataDir=%s\nserver.1=127.0.0.1:1:2\nserver.2=127.0.0.1:3:4\nserver.3=127.0.0.1:5:6\n' \
    "$m" >"$dir/member.cfg"
sums "$m" >"$dir/before-member"
status=0
"${tumblerd[@]}" --repair-log -c "$dir/member.cfg" --serverId=1 \
    2>"$dir/repair-member.log" || status=$?
[ "$status" = 2 ] && grep -q "a member's log is not repaired in place; nothing changed" "$dir/repair-member.log" ||
    { echo "a member's repair ended with $status:"; cat "$dir/repair-member.log"; exit 1; }
sums "$m" | cmp - "$dir/before-member"
[ -z "$(ls -d "$m"/repair-* 2>/dev/null)" ] || { echo "a member's repair left a copy"; exit 1; }
# Its majority lost for good, the damaged log is recovered (here into a
# server alone) with --repair-log: cut as a repair cuts it, copied first,
# and zxids above every one given before the cut.
printf 'dataDir=%s\n' "$m" >"$dir/alone.cfg"
"${tumblerd[@]}" --recover-ensemble --repair-log -c "$dir/alone.cfg" --serverId=1 \
    >"$dir/recover-member.log" 2>&1 ||
    { echo "the damaged log's recovery failed:"; cat "$dir/recover-member.log"; exit 1; }
grep -q "repair: the log now ends at" "$dir/recover-member.log" &&
    grep -q "begins a new zxid epoch" "$dir/recover-member.log" ||
    { echo "no cut, or no new epoch, said:"; cat "$dir/recover-member.log"; exit 1; }
cmp "$(ls -d "$m"/repair-*)/wal-0000000000000001" "$dir/damaged"
crash_start "$m"
"$writer" verify "127.0.0.1:$port" <"$dir/acked-small"
"$writer" write "127.0.0.1:$port" /recovered 1 >/dev/null 2>&1
now=$(zxid)
[ $(( now )) -gt $(( zxid )) ] && [ $(( now )) -ge $(( 0x100000000 )) ] ||
    { echo "zxid $now after the damaged log's recovery, $zxid before the damage"; exit 1; }
echo "a damaged log recovered with --repair-log: cut, its writes before the damage served, zxid $now"
kill "$pid"; wait "$pid" || true; pid=""
# That log damaged again, at the first record its recovery appended (the
# new epoch among its entries), and repaired: the repair's epoch is above
# the recovery's, which wal-meta records once it was reached, and zxids go
# on above every one given before.  (It began the recovery's epoch again,
# and gave its zxids a second time.)
flip_after_cut "$m" "$dir/recover-member.log"
status=0
"${tumblerd[@]}" --repair-log --dataDir="$m" 2>"$dir/repair-recovered.log" || status=$?
[ "$status" = 0 ] || { echo "the recovered log's repair ended with $status:"; cat "$dir/repair-recovered.log"; exit 1; }
rises "$m" /repaired-again "$now" "$dir/repair-recovered.log" \
    "the recovered log cut before its recovery's entries, repaired"
again=$got
# Damaged once more, at the repair's new epoch, and recovered (alone) with
# --repair-log: the recovery's epoch is above the repair's, which wal-meta
# records (its own, the epoch after the cut log's, was below it).
flip_after_cut "$m" "$dir/repair-recovered.log"
"${tumblerd[@]}" --recover-ensemble --repair-log -c "$dir/alone.cfg" --serverId=1 \
    >"$dir/recover-again.log" 2>&1 ||
    { echo "the second recovery failed:"; cat "$dir/recover-again.log"; exit 1; }
rises "$m" /recovered-again "$again" "$dir/recover-again.log" \
    "cut before the repair's epoch, recovered"
# A second repair leaves a whole log as it is.
sums "$d" >"$dir/before"
"${tumblerd[@]}" --repair-log --dataDir="$d" 2>"$dir/repair2.log"
grep -q "is whole; nothing changed" "$dir/repair2.log" || { cat "$dir/repair2.log"; exit 1; }
# The term and vote older than the log (wal-meta's term at offset 64, its
# vote at 72; a lone voter's term is 1): refused; a repair raises the term.
d=$(copy old-term)
python3 - "$d/wal-meta" <<'PY'
import sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
b[64:80] = bytes(16)
b[8:12] = zlib.crc32(bytes(b[12:])).to_bytes(4, "big")
open(sys.argv[1], "wb").write(bytes(b))
PY
refused old-term "wal-meta gives term 0, but the log holds entries of term 1"
"${tumblerd[@]}" --repair-log --dataDir="$d" 2>"$dir/repair3.log"
grep -q "the term is raised to the log's, 1" "$dir/repair3.log" || { cat "$dir/repair3.log"; exit 1; }
crash_start "$d"
"$writer" verify "127.0.0.1:$port" <"$dir/acked-small"
kill "$pid"; wait "$pid" || true; pid=""
# A repair cut short after its cut, before zxids moved (wal-meta's repair
# bound set, as the cut leaves it): no start serves; a repair run again
# moves them.
d=$(copy interrupted)
python3 - "$d/wal-meta" <<'PY'
import sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
b[48:56] = (1000).to_bytes(8, "big")
b[8:12] = zlib.crc32(bytes(b[12:])).to_bytes(4, "big")
open(sys.argv[1], "wb").write(bytes(b))
PY
refused interrupted "a repair cut the log but stopped before zxids moved"
"${tumblerd[@]}" --repair-log --dataDir="$d" 2>"$dir/repair4.log"
grep -q "zxids go on from 0x100000000," "$dir/repair4.log" || { cat "$dir/repair4.log"; exit 1; }
# ... and says no cut of its own (the earlier run's was what dropped data)
if grep -q "dropped 0 bytes\|copied in $d/\$" "$dir/repair4.log"; then
    echo "a repair that cut nothing said it did:"; cat "$dir/repair4.log"; exit 1
fi
crash_start "$d"
"$writer" verify "127.0.0.1:$port" <"$dir/acked-small"
kill "$pid"; wait "$pid" || true; pid=""
# A member whose quorum port, then its election port, is taken: refused,
# naming the port, before its (new) data directory is made.
for taken in quorum election; do
    qp=$(free_port) ep=$(free_port) cp=$(free_port)
    busy=$qp; [ "$taken" = election ] && busy=$ep
    printf 'dataDir=%s\nserver.1=127.0.0.1:%s:%s;127.0.0.1:%s\nserver.2=127.0.0.1:1:2\nserver.3=127.0.0.1:3:4\n' \
        "$dir/member-$taken" "$qp" "$ep" "$cp" >"$dir/$taken.cfg"
    exec {held}< <(python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
print("held", flush=True); time.sleep(60)' "$busy" 2>/dev/null)
    holder=$!
    read -r _ <&"$held"
    status=0
    timeout -s KILL 30 "${tumblerd[@]}" -c "$dir/$taken.cfg" --serverId=1 \
        2>"$dir/$taken.log" || status=$?
    kill "$holder"; exec {held}<&-
    [ "$status" = 1 ] && grep -q "cannot listen on 127.0.0.1:$busy (server.1's $taken port)" "$dir/$taken.log" ||
        { echo "a taken $taken port: status $status"; cat "$dir/$taken.log"; exit 1; }
    [ ! -e "$dir/member-$taken" ] || { echo "a taken $taken port: the data directory was made"; exit 1; }
done
# A member at an IPv6 address: raft between the members speaks IPv4 only.
# Refused before its data directory is made (it was made, then raft
# failed to listen).
printf 'dataDir=%s\nserver.1=[::1]:%s:%s\nserver.2=[::1]:1:2\nserver.3=[::1]:3:4\n' \
    "$dir/member-v6" "$(free_port)" "$(free_port)" >"$dir/v6.cfg"
status=0
timeout -s KILL 30 "${tumblerd[@]}" -c "$dir/v6.cfg" --serverId=1 2>"$dir/v6.log" || status=$?
[ "$status" = 1 ] && grep -q "server.1's host ::1 has no IPv4 address" "$dir/v6.log" ||
    { echo "an IPv6 member: status $status"; cat "$dir/v6.log"; exit 1; }
[ ! -e "$dir/member-v6" ] || { echo "an IPv6 member: the data directory was made"; exit 1; }
echo "zxid $zxid before the damage, $now after the repair"
echo "1 passed, 0 failed"
