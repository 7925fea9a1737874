#!/usr/bin/env bash
# Runs the client integration tests (it_client) against one freshly started
# server: "zk" (Apache ZooKeeper 3.8) or "tumblerd" ($TUMBLERD).
#   run.sh KIND IT_CLIENT_BINARY [TEST-NAME-SUBSTRING ...]
# With IT_TLS=1 the server also has a TLS port (secureClientPort, on a second
# free port, clients' certificates required) with the certificates of
# tls/mkcerts.sh; the tests get IT_TLS_PORT and IT_TLS_CERTS.
# The tests may stop and restart the server through srvctl.sh; whatever
# server process is recorded in the run's directory is stopped on exit.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"

[ $# -ge 2 ] || it_die "usage: $0 zk|tumblerd IT_CLIENT [NAME ...]"
kind=$1
bin=$2
shift 2
it_init
# A session may ask for up to 120 s (both servers allow 40 s by default): a
# test that restarts the server needs the restart to fit in its timeout.  The
# server ticks every 250 ms, so sessions of 2 s can be had (the default tick
# of 2 s grants 4 s at least): the tests that wait for a session to expire,
# or to be kept alive, wait that long.
export ZK_CFG_EXTRA="${ZK_CFG_EXTRA:-}
tickTime=250
maxSessionTimeout=120000"
export TUMBLERD_ARGS="${TUMBLERD_ARGS:-} --tickTime=250 --maxSessionTimeout=120000"
if [ "${IT_TLS:-0}" = 1 ]; then
    IT_TLS_CERTS=$(it_tmpdir certs)
    "$here/../tls/mkcerts.sh" "$IT_TLS_CERTS" || it_die "tls/mkcerts.sh failed"
    IT_TLS_PORT=$(free_port)
    tls_cfg=$(zk_tls_cfg "$IT_TLS_CERTS" "$IT_TLS_PORT")
    ZK_CFG_EXTRA+="
$tls_cfg"
    # tumblerd takes the same keys as flags; it has no Netty to choose.
    TUMBLERD_ARGS+=" $(grep -v '^serverCnxnFactory=' <<<"$tls_cfg" | sed 's/^/--/' | tr '\n' ' ')"
    export IT_TLS_CERTS IT_TLS_PORT
fi
stop_recorded()
{
    local rc=$? f pid
    for f in "$IT_TMPROOT"/*/server.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        # The servers this shell started are it_cleanup's, which judges their exit.
        case " ${IT_PIDS[*]} " in *" $pid "*) continue ;; esac
        kill -0 "$pid" 2>/dev/null && stop_server "$pid" 10
    done
    it_cleanup "$rc"
}
trap stop_recorded EXIT
launch "$kind" "$kind"
export IT_KIND=$kind IT_DIR=$LAUNCH_DIR IT_PORT=$LAUNCH_PORT
export IT_CTL="$here/srvctl.sh"
timeout --kill-after=5 "${IT_TIMEOUT:-900}" "$bin" "127.0.0.1:$LAUNCH_PORT" "$@"
