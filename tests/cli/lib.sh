# Helpers of the tumbler CLI end-to-end tests (sourced, not executed).
#
# Every script is called as  SCRIPT TUMBLER TUMBLERD  and starts its own
# tumblerd on a free 127.0.0.1 port, in a temporary directory removed at
# exit.  The EXIT trap stops the server and every background command the
# script started, so a failing or interrupted test leaves nothing behind.
# Every wait is bounded.  Checks count failures; t_end prints
# "N passed, N failed" and gives the exit status.
#
# Environment: CLI_KEEP=1 keeps the temporary directory, CLI_VERBOSE=1
# echoes each check.

set -u
TUMBLER=${1:?usage: $0 TUMBLER TUMBLERD}
TUMBLERD=${2:?usage: $0 TUMBLER TUMBLERD}
T_PASS=0
T_FAIL=0
T_BG=()
SRV_PID=""
SRV_STATUS=0
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-cli.XXXXXX") || exit 1
export TUMBLER_HISTFILE=""  # never touch the user's history

t_cleanup()
{
    local rc=$? p
    # Each with what its timeout(1) runs (the group timeout leads): an
    # orphan would hold the test's output open.
    for p in "${T_BG[@]}"; do
        kill -KILL -- "-$p" "$p" 2>/dev/null
    done
    srv_stop
    # A clean shutdown is part of every test; under the sanitizers it is
    # where leaks are reported.
    if [ "$SRV_STATUS" != 0 ]; then
        echo "tumblerd exited with status $SRV_STATUS on SIGTERM" >&2
        [ "$rc" != 0 ] || rc=1
    fi
    if [ "$rc" != 0 ] && [ -f "$T_DIR/server.log" ]; then
        echo "---- last lines of the server log ----" >&2
        tail -n 20 "$T_DIR/server.log" >&2
    fi
    if [ "${CLI_KEEP:-0}" = 1 ]; then echo "kept $T_DIR" >&2; else rm -rf "$T_DIR"; fi
    exit "$rc"
}
trap t_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ok()
{
    T_PASS=$((T_PASS + 1))
    if [ "${CLI_VERBOSE:-0}" = 1 ]; then echo "ok: $*"; fi
}

fail()
{
    T_FAIL=$((T_FAIL + 1))
    echo "FAIL: $*" >&2
}

# check_eq WHAT EXPECTED ACTUAL
check_eq()
{
    if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: expected [$2], got [$3]"; fi
}

# check_match WHAT REGEX TEXT  (grep -E, on any line)
check_match()
{
    if printf '%s\n' "$3" | grep -Eq -- "$2"; then ok "$1"
    else fail "$1: [$3] does not match /$2/"; fi
}

t_end()
{
    echo "$T_PASS passed, $T_FAIL failed"
    [ "$T_FAIL" = 0 ]
}

# shellcheck source=../../scripts/port.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/port.sh"

ruok()
{
    timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" && printf ruok >&3 && cat <&3' \
        "$1" 2>/dev/null
}

# srv_start: tumblerd on a free port (SRV_PORT), data in $T_DIR/data;
# exports TUMBLER_SERVERS for the commands under test.
srv_start()
{
    local attempt i
    for attempt in 1 2 3; do
        SRV_PORT=$(free_port) || return 1
        mkdir -p "$T_DIR/data"
        "$TUMBLERD" --clientPort="$SRV_PORT" --clientPortAddress=127.0.0.1 \
            --dataDir="$T_DIR/data" --tickTime=2000 '--4lw.commands.whitelist=*' \
            >> "$T_DIR/server.log" 2>&1 < /dev/null &
        SRV_PID=$!
        for i in $(seq 1 100); do
            if [ "$(ruok "$SRV_PORT")" = imok ]; then
                export TUMBLER_SERVERS=127.0.0.1:$SRV_PORT
                return 0
            fi
            kill -0 "$SRV_PID" 2>/dev/null || break
            sleep 0.1
        done
        srv_stop
        SRV_STATUS=0  # a start that failed, on a port taken meanwhile
    done
    echo "could not start tumblerd" >&2
    exit 1
}

# srv_stop: SIGTERM, SIGKILL after 10 s.  SRV_STATUS keeps the first exit
# status other than 0.
srv_stop()
{
    local i st
    [ -n "$SRV_PID" ] || return 0
    kill -TERM "$SRV_PID" 2>/dev/null
    for i in $(seq 1 100); do
        kill -0 "$SRV_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$SRV_PID" 2>/dev/null
    wait "$SRV_PID" 2>/dev/null
    st=$?
    [ "$SRV_STATUS" != 0 ] || SRV_STATUS=$st
    SRV_PID=""
}

# tb ARGS...: the tool under test, bounded to 60 s.
tb()
{
    timeout -k 5 60 "$TUMBLER" "$@"
}

# bg LIMIT_S COMMAND...: runs COMMAND in the background (BG_PID), bounded.
bg()
{
    local limit=$1
    shift
    timeout -k 5 "$limit" "$@" &
    BG_PID=$!
    T_BG+=("$BG_PID")
}

# wait_for LIMIT_S COMMAND...: polls COMMAND every 0.1 s until it
# succeeds; false after LIMIT_S seconds.
wait_for()
{
    local limit=$1 end
    shift
    end=$((SECONDS + limit))
    while ! "$@" 2>/dev/null; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.1
    done
    return 0
}

# wait_st PID: waits for a background command of this shell; its status
# in ST.  (Not in $(...): a subshell cannot wait for its parent's jobs.)
wait_st()
{
    wait "$1"
    ST=$?
}

command -v python3 > /dev/null ||
    { echo "python3 is needed (scripts/deps.sh installs it)" >&2; exit 1; }

# json_get EXPR < JSON: evaluates the Python expression EXPR on the parsed
# document `d` and prints the result (proves the output is valid JSON).
json_get()
{
    python3 -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}

# bgp LIMIT_S PIDFILE COMMAND...: like bg, and COMMAND's own pid (not the
# timeout wrapper's) is written to PIDFILE, for tests that signal it.
bgp()
{
    local limit=$1 pidfile=$2
    shift 2
    timeout -k 5 "$limit" bash -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" &
    BG_PID=$!
    T_BG+=("$BG_PID")
}

# pid_in FILE: waits (bounded) for a pid file and prints the pid.
pid_in()
{
    wait_for 10 test -s "$1" && cat "$1"
}

# queue_len PATH: how many hold or wait for the lock at PATH.
queue_len()
{
    "$TUMBLER" locks "$1" |
        sed -n '1s/.*, \([0-9]*\) holding, \([0-9]*\) waiting$/\1 \2/p' |
        awk '{ print $1 + $2 }'
}

queue_at_least()
{
    [ "$(queue_len "$1")" -ge "$2" ]
}

# proxy_start DELAY: a TCP proxy to the server (PROXY, HOST:PORT) that
# delays what the server sends by DELAY seconds, in order; what the client
# sends goes at once.  For tests that must act while a request is on its
# way, or slow a walk of the tree down.  It ends by itself after 120 s.
proxy_start()
{
    cat > "$T_DIR/proxy.py" <<'EOF'
import asyncio, sys

port, delay, portfile = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]

async def pump(reader, writer, lag):
    q = asyncio.Queue()
    async def later():
        loop = asyncio.get_running_loop()
        while True:
            due, data = await q.get()
            if due > loop.time():
                await asyncio.sleep(due - loop.time())
            if data is None:
                break
            writer.write(data)
            await writer.drain()
        writer.close()
    out = asyncio.ensure_future(later())
    loop = asyncio.get_running_loop()
    try:
        while True:
            data = await reader.read(65536)
            q.put_nowait((loop.time() + lag, data or None))
            if not data:
                break
    except OSError:
        q.put_nowait((0, None))
    try:
        await out
    except OSError:
        pass

async def serve(creader, cwriter):
    try:
        sreader, swriter = await asyncio.open_connection('127.0.0.1', port)
    except OSError:
        cwriter.close()
        return
    await asyncio.gather(pump(creader, swriter, 0), pump(sreader, cwriter, delay))

async def main():
    srv = await asyncio.start_server(serve, '127.0.0.1', 0)
    with open(portfile + '.tmp', 'w') as f:
        f.write(str(srv.sockets[0].getsockname()[1]))
    import os
    os.rename(portfile + '.tmp', portfile)
    try:
        await asyncio.wait_for(srv.serve_forever(), 120)  # bounded
    except asyncio.TimeoutError:
        pass

asyncio.run(main())
EOF
    rm -f "$T_DIR/proxy.port"
    # Not under timeout(1): the EXIT trap's SIGKILL must reach the proxy itself.
    python3 "$T_DIR/proxy.py" "$SRV_PORT" "$1" "$T_DIR/proxy.port" < /dev/null &
    T_BG+=("$!")
    wait_for 10 test -s "$T_DIR/proxy.port" || fail "the proxy did not start"
    # shellcheck disable=SC2034  # for the scripts that source this file
    PROXY=127.0.0.1:$(cat "$T_DIR/proxy.port")
}
