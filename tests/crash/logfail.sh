#!/usr/bin/env bash
# A log that cannot be written: tumblerd stops with exit status 74 and a
# line saying why, rather than going on with a log that refuses every
# write (no session could expire) or crashing inside libraft; a restart
# recovers every acknowledged write.  The fault: the data directory made
# immutable (chattr +i; the file system must support it, as ext4 and xfs
# do), so that the log's next segment cannot be made while 64 KiB creates
# fill the current ones.  Then a log write that fails (EIO, injected by
# strace): the same stop, from the write's end, and the same recovery.  A
# follower whose new term cannot be written (ENOSPC), or out of memory: the
# same stop.  A
# file-size limit below a segment, which a new log's first segment cannot
# be made under; a data directory that is a file; or a port in use: an
# error at start-up, the last before the data directory is made.
#   logfail.sh TUMBLERD ACKED_WRITER
set -euo pipefail
tumblerd=("$1") writer=$2
plain=("$1")
dir=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-logfail.XXXXXX")
source "$(dirname "$0")/lib.sh"
pid="" holder="" wp="" pids=("" "" "" "")
cleanup() {
    local rc=$?
    crash_kill $pid $holder $wp "${pids[@]:1}"
    pkill -9 -f -- "--dataDir=$dir/" 2>/dev/null || true # one strace left
    chattr -i "$dir/data" 2>/dev/null || true
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT

# expect_exit STATUS [LOG]: the server started last stops by itself within
# 30 s, with STATUS (else LOG, $dir/server.log by default, is shown).
expect_exit() {
    local status=0
    for _ in $(seq 300); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && { echo "tumblerd is still running:"; cat "$dir/server.log"; exit 1; }
    wait "$pid" || status=$?
    pid=""
    [ "$status" = "$1" ] || { echo "tumblerd ended with $status, not $1:"; cat "${2:-$dir/server.log}"; exit 1; }
}

port=$(free_port)
start() { crash_start "$dir/data"; }
start
export ACKED_WRITER_DATA=65536
"$writer" write "127.0.0.1:$port" /before 20 >"$dir/acked1" 2>"$dir/writer1.err"
[ "$(grep -c . "$dir/acked1")" = 20 ] || { echo "the first writes failed"; cat "$dir/writer1.err"; exit 1; }

chattr +i "$dir/data" ||
    { echo "chattr +i is not supported under $dir: set TMPDIR to an ext4 or xfs directory"; exit 1; }
# 40 MiB of creates need new segments; the writer stops when the server does.
"$writer" write "127.0.0.1:$port" /during 640 >"$dir/acked2" 2>"$dir/writer2.err" || true
expect_exit 74
grep -q "Operation not permitted; stopping (exit 74)" "$dir/server.log" ||
    { echo "no line saying why tumblerd stopped:"; cat "$dir/server.log"; exit 1; }
echo "stopped after $(grep -c . "$dir/acked2" || true) more acknowledged creates:"
grep "stopping" "$dir/server.log"

chattr -i "$dir/data"
start
cat "$dir/acked1" "$dir/acked2" | "$writer" verify "127.0.0.1:$port"
# And the log takes writes again.
"$writer" write "127.0.0.1:$port" /after 20 >"$dir/acked3" 2>"$dir/writer3.err"
[ "$(grep -c . "$dir/acked3")" = 20 ] || { echo "no writes after the restart"; cat "$dir/writer3.err"; exit 1; }
kill "$pid"; wait "$pid" || true; pid=""

# A write of the log that fails: from the 8th kernel AIO submission on, and
# from the 3rd pwrite of each thread on (the write's fallback; the first two
# are raft_uv's at start-up), every one returns EIO.  A snapshot's writes
# may fail first; the server only tries those again later.  The writer goes
# on until the server stops: a slow server batches more entries into each
# submission (under ASan, 200 creates once took fewer than 8).
eio=(strace -f --seccomp-bpf -qq -o /dev/null -e trace=io_submit,pwrite64
     -e inject=io_submit:error=EIO:when=8+ -e inject=pwrite64:error=EIO:when=3+)
tumblerd=("${eio[@]}" "${plain[@]}")
crash_start "$dir/eio"
tumblerd=("${plain[@]}")
"$writer" write "127.0.0.1:$port" /eio 2000 >"$dir/acked4" 2>"$dir/writer4.err" || true
expect_exit 74
grep -q "log write: Input/output error; stopping (exit 74)" "$dir/server.log" ||
    { echo "no line saying the log write failed:"; cat "$dir/server.log"; exit 1; }
echo "stopped after $(grep -c . "$dir/acked4" || true) acknowledged creates"
crash_start "$dir/eio"
"$writer" verify "127.0.0.1:$port" <"$dir/acked4"
kill "$pid"; wait "$pid" || true; pid=""

# strace_member I STRACE_ARG...: strace attached to member I with those
# arguments (in the background, its pid in holder), once it traces every
# thread of it.
strace_member() {
    local m=$1 _
    shift
    strace -f -qq -o /dev/null -p "${pids[$m]}" "$@" &
    holder=$!
    for _ in $(seq 100); do
        grep -qs "TracerPid:[[:space:]]*0$" /proc/"${pids[$m]}"/task/*/status || return 0
        kill -0 "$holder" 2>/dev/null || break
        sleep 0.1
    done
    echo "strace could not attach to member $m (ptrace refused?)"
    exit 1
}

# member_stops I LINE: member I stops by itself with 74, saying LINE.
member_stops() {
    pid=${pids[$1]} pids[$1]=""
    expect_exit 74 "$dir/s$1.log"
    wait "$holder" 2>/dev/null || true
    holder=""
    grep -q "$2" "$dir/s$1.log" || { echo "member $1 did not say '$2':"; cat "$dir/s$1.log"; exit 1; }
    grep "stopping" "$dir/s$1.log"
}

# A member whose term cannot be written: strace, attached to a follower,
# fails its writes of wal-meta with ENOSPC, and the leader is killed.  The
# follower's next term (its own election, or a vote asked of it) cannot be
# kept: it stops with 74 and says why (libraft, left to handle the failure,
# crashed), and the ensemble, restarted, has every acknowledged write.
crash_ens_init
for i in 1 2 3; do member_start "$i"; done
lead=$(ens_leader)
f=$((lead % 3 + 1))
"$writer" write "$hosts" /term 20 >"$dir/acked5" 2>"$dir/writer5.err"
[ "$(grep -c . "$dir/acked5")" = 20 ] || { echo "the ensemble's writes failed"; cat "$dir/writer5.err"; exit 1; }
# -P names the file as the kernel resolves its descriptors' paths.
strace_member "$f" -P "$(realpath "$dir/d$f")/wal-meta.tmp" \
    -e trace=write -e inject=write:error=ENOSPC
crash_kill "${pids[$lead]}"
pids[$lead]=""
member_stops "$f" "wal-meta: No space left on device; stopping (exit 74)"
member_start "$lead"
member_start "$f"
all_have "$dir/acked5"
crash_kill "${pids[@]:1}"
pids=("" "" "" "")

# A member out of memory: strace fails every anonymous mapping a follower
# makes (ENOMEM) while creates of 64 KiB come through the ensemble.  It
# stops with 74 and says so (libraft, handed the failed allocation, crashed
# on it decoding the next message), and the ensemble, restarted, has every
# acknowledged write.  Not under AddressSanitizer, whose own allocator
# maps memory: it stops the process at the first failed mapping, before
# tumblerd can.
if ! ldd "${plain[0]}" 2>/dev/null | grep -q libasan; then
    rm -rf "$dir"/d[123] "$dir"/s[123].log
    crash_ens_init
    for i in 1 2 3; do member_start "$i"; done
    lead=$(ens_leader)
    f=$((lead % 3 + 1))
    "$writer" write "$hosts" /oom 100000 >"$dir/acked6" 2>/dev/null &
    wp=$!
    for _ in $(seq 100); do [ "$(grep -c . "$dir/acked6")" -ge 20 ] && break; sleep 0.1; done
    strace_member "$f" -e trace=mmap -e inject=mmap:error=ENOMEM:when=5+
    member_stops "$f" "out of memory.*; stopping (exit 74)"
    kill "$wp" 2>/dev/null || true # it may have stopped at its server's end
    wait "$wp" 2>/dev/null || true
    wp=""
    member_start "$f"
    all_have "$dir/acked6"
    echo "$(grep -c . "$dir/acked6") acknowledged creates there after the restart"
    crash_kill "${pids[@]:1}"
    pids=("" "" "" "")
fi

# expect_end STATUS LINE CMD...: CMD (tumblerd, ending by itself within
# 20 s) ends with STATUS and says LINE on stderr.
expect_end() {
    local want=$1 line=$2 status=0
    shift 2
    timeout -s KILL 20 "$@" 2>"$dir/end.log" || status=$?
    [ "$status" = "$want" ] || { echo "$* ended with $status, not $want:"; cat "$dir/end.log"; exit 1; }
    grep -q "$line" "$dir/end.log" || { echo "$* did not say '$line':"; cat "$dir/end.log"; exit 1; }
    grep ERROR "$dir/end.log"
}

# A file-size limit below a segment (1 MB): a new log's first segment,
# made by its bootstrap, cannot be written, and the start fails (status 1)
# with EFBIG's message, not a death by SIGXFSZ (status 153).
expect_end 1 "wal-0000000000000001 and wal-meta: File too large" \
    prlimit --fsize=1000000 "${tumblerd[@]}" --clientPort="$port" --dataDir="$dir/small"

# A data directory that is a file: a log that does not open is an error at
# start-up (status 1, saying so), not the stop above: nothing of it may be
# left working after it is freed.
touch "$dir/file"
expect_end 1 "is not a directory" "${tumblerd[@]}" --clientPort="$port" --dataDir="$dir/file"
# So is a port in use.
# The holder takes a port of the kernel's choosing: $port, free when it
# was chosen, may since be the local end of another test's connection.
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1]); time.sleep(60)' "$dir/held" &
holder=$!
for _ in $(seq 100); do [ -s "$dir/held" ] && break; sleep 0.1; done
port=$(cat "$dir/held")
expect_end 1 "address already in use" "${tumblerd[@]}" --clientPort="$port" --dataDir="$dir/data"
# ... and the ports are taken before the log is opened: a start that
# cannot serve leaves no data directory behind.
expect_end 1 "address already in use" "${tumblerd[@]}" --clientPort="$port" --dataDir="$dir/unborn"
[ ! -e "$dir/unborn" ] || { echo "a start on a port in use made its data directory"; exit 1; }
echo "1 passed, 0 failed"
