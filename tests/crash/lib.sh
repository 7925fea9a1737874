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
    for _ in $(seq 100); do
        [ "$(printf ruok | nc -q1 127.0.0.1 "$port" 2>/dev/null)" = imok ] && return 0
        sleep 0.1
    done
    echo "tumblerd did not start"; cat "$dir/server.log"; exit 1
}

# crash_kill PID...: each killed (SIGKILL) and reaped; empty ones skipped.
crash_kill() {
    local p
    for p in "$@"; do
        kill -9 "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
}
