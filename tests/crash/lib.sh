# Shared by the crash tests, sourced after they set `tumblerd` (an array:
# the command that runs tumblerd) and `dir` (their temporary directory).

# shellcheck source=../../scripts/port.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/port.sh"

# crash_start DATADIR [FLAG...]: tumblerd on $port with its data in DATADIR,
# its stderr appended to $dir/server.log; returns once it answers ruok (10 s
# at most) and sets pid.
crash_start() {
    local data=$1
    shift
    "${tumblerd[@]}" --clientPort="$port" --dataDir="$data" \
        --4lw.commands.whitelist='*' "$@" 2>>"$dir/server.log" &
    pid=$!
    crash_start_wait
}

# crash_start_wait: until the server started as $pid answers on $port
# (10 s at most); the test fails if it ends first.
crash_start_wait() {
    local status=""
    for _ in $(seq 100); do
        [ "$(printf ruok | nc -q1 127.0.0.1 "$port" 2>/dev/null)" = imok ] && return 0
        kill -0 "$pid" 2>/dev/null || { wait "$pid" || status=$?; break; }
        sleep 0.1
    done
    echo "tumblerd did not start${status:+ (status $status)}"; cat "$dir/server.log"; pid=""; exit 1
}

# crash_kill PID...: each killed (SIGKILL) and reaped; empty ones skipped.
crash_kill() {
    local p
    for p in "$@"; do
        kill -9 "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
}

# An ensemble of three on loopback for the crash tests, each member's data
# in $dir/dI and its stderr in $dir/sI.log; pids[I] is member I's process
# ("" while it is down).
# crash_ens_init: ports, $dir/zoo.cfg and hosts (the client addresses).
crash_ens_init() {
    local i
    cport=() qport=() eport=() pids=("" "" "" "")
    for i in 1 2 3; do
        cport[$i]=$(free_port) qport[$i]=$(free_port) eport[$i]=$(free_port)
    done
    {
        echo "tickTime=1000"
        echo "4lw.commands.whitelist=*"
        for i in 1 2 3; do
            echo "server.$i=127.0.0.1:${qport[$i]}:${eport[$i]};127.0.0.1:${cport[$i]}"
        done
    } >"$dir/zoo.cfg"
    hosts="127.0.0.1:${cport[1]},127.0.0.1:${cport[2]},127.0.0.1:${cport[3]}"
}
# member_start I [FLAG...]: member I, in the background.
member_start() {
    "${tumblerd[@]}" "$dir/zoo.cfg" --serverId="$1" --dataDir="$dir/d$1" "${@:2}" \
        2>>"$dir/s$1.log" &
    pids[$1]=$!
}
# member_srvr I, member_mode I, member_zxid I: member I's srvr (3 s at most),
# its mode and its zxid.
member_srvr() { printf srvr | timeout 3 nc -q1 127.0.0.1 "${cport[$1]}" 2>/dev/null || true; }
member_mode() { member_srvr "$1" | sed -n 's/^Mode: //p'; }
member_zxid() { member_srvr "$1" | sed -n 's/^Zxid: //p'; }
# ens_leader: the member that says it leads, within 20 s.
ens_leader() {
    local i
    for _ in $(seq 200); do
        for i in 1 2 3; do
            [ -n "${pids[$i]}" ] && [ "$(member_mode "$i")" = leader ] && { echo "$i"; return 0; }
        done
        sleep 0.1
    done
    echo "no leader" >&2
    return 1
}
# member_caught_up I [SECONDS]: member I has the leader's zxid within
# SECONDS (10); else it says so, and fails.
member_caught_up() {
    local lead end=$((SECONDS + ${2:-10}))
    while [ "$SECONDS" -lt "$end" ]; do
        lead=$(ens_leader)
        [ "$(member_zxid "$1")" = "$(member_zxid "$lead")" ] && return 0
        sleep 0.1
    done
    echo "member $1 is not caught up after ${2:-10} s: zxid $(member_zxid "$1"), the leader's $(member_zxid "$lead")"
    return 1
}
# all_have ACKED: every member, caught up with the leader, has the
# acknowledged writes listed in ACKED ($writer's verify).
all_have() {
    local i
    for i in 1 2 3; do
        member_caught_up "$i"
        "$writer" verify "127.0.0.1:${cport[$i]}" <"$1"
    done
}
