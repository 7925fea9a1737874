#!/usr/bin/env bash
# tumblerd.service's own ExecStart, run as user tumbler in its
# WorkingDirectory, in a network namespace of its own (so the default port
# 2181 is free whatever else runs here): it serves /etc/tumbler/zoo.cfg
# (to the CLI and to dev.sh's example program of libtumbler-dev),
# logs to stderr (the journal, under systemd), keeps its data under
# /var/lib/tumbler across a restart, and stops cleanly on SIGTERM.  Then
# with logFile in /var/log/tumbler: the package's logrotate snippet rotates
# it and SIGHUP moves tumblerd to the new file.
set -euo pipefail
if [ -z "${TB_PKG_NETNS:-}" ]; then
    exec env TB_PKG_NETNS=1 unshare --net -- bash "$0" "$@"
fi
ip link set lo up
unit=/lib/systemd/system/tumblerd.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
wd=$(sed -n 's/^WorkingDirectory=//p' "$unit")
tmp=$TB_PKG_TMP log=/var/log/tumbler/tumblerd.log
bad=0
no() { echo "serve: $*" >&2; bad=1; }
tb() { tumbler -s 127.0.0.1:2181 --connect-timeout 20 "$@"; }

# start [ARGS...]: ExecStart (and ARGS) as tumbler; $pid is tumblerd's.
start() {
    # shellcheck disable=SC2086  # ExecStart is split into words, as systemd does
    (cd "$wd" && exec setpriv --reuid=tumbler --regid=tumbler --init-groups \
        -- $exec_start "$@") 2>"$tmp/stderr" &
    pid=$!
    echo "$pid" >"$tmp/pid"
}
# stop: SIGTERM, which must end tumblerd with status 0.
stop() {
    local rc=0
    kill -TERM "$pid"
    wait "$pid" || rc=$?
    rm -f "$tmp/pid"
    [ "$rc" = 0 ] || no "tumblerd exited $rc on SIGTERM: $(tail -3 "$tmp/stderr")"
}
# until_in FILE TEXT: waits (bounded) until TEXT is in FILE.
until_in() {
    for _ in $(seq 200); do
        grep -qF "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# A node of this run's own (data of a run before may be there), and a
# log file of its own.
node=/package-$$
rm -f "$log"*
touch "$tmp/marker"
start
tb create "$node" served >/dev/null || no "create through the default port failed"
# The example dev.sh built against libtumbler-dev talks to it.
"$tmp/example" 127.0.0.1:2181 >"$tmp/example.out" 2>&1 ||
    no "the example client failed: $(cat "$tmp/example.out")"
[ "$(ps -o user= -p "$pid")" = tumbler ] || no "tumblerd runs as $(ps -o user= -p "$pid")"
grep -q "serving 127.0.0.1:2181, data in /var/lib/tumbler" "$tmp/stderr" ||
    no "stderr does not say it serves zoo.cfg: $(cat "$tmp/stderr")"
[ -n "$(find /var/lib/tumbler -type f -newer "$tmp/marker")" ] ||
    no "nothing written under /var/lib/tumbler"
[ -z "$(find /var/lib/tumbler ! -user tumbler)" ] ||
    no "files not tumbler's: $(find /var/lib/tumbler ! -user tumbler)"
stop
grep -q "stopped" "$tmp/stderr" || no "no clean stop in the log"

start "--logFile=$log"
[ "$(tb get "$node")" = served ] || no "the data did not survive a restart"
until_in "$log" "serving 127.0.0.1:2181" || no "$log does not say it serves"
[ ! -s "$tmp/stderr" ] || no "logged to stderr with logFile: $(cat "$tmp/stderr")"
logrotate -f -s "$tmp/logrotate.state" /etc/logrotate.d/tumblerd ||
    no "logrotate failed"
[ -f "$log.1" ] || no "logrotate did not rotate $log"
kill -HUP "$pid"
until_in "$log" "SIGHUP: logFile reopened" || no "no new $log after SIGHUP"
grep -q "SIGHUP" "$log.1" && no "logged to the rotated file after SIGHUP"
stop
grep -q "stopped" "$log" || no "the new log does not end with the stop"
exit $bad
