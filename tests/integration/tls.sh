#!/usr/bin/env bash
# TLS on the secure client port, against a server of KIND started here with a TLS port
# (tls/mkcerts.sh's certificates, clients' certificates required, CN=other the x509 super user):
# sessions of Apache's CLI over TLS with Java's Netty client, compared with one transcript for
# both servers (tls/expected.txt); then tls/checks.py (kazoo and Python's TLS: ACLs by
# certificate, refused handshakes, plain bytes at the TLS port and TLS at the plain one); for
# tumblerd, the stores it cannot use stop it at start-up with a message, and renewed stores are
# read again on SIGHUP and, with client.certReload, when their files change.
#
#   tls.sh zk|tumblerd
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

[ $# = 1 ] || it_die "usage: $0 zk|tumblerd"
kind=$1
it_init
work=$(it_tmpdir tls)
certs=$work/certs
"$here/tls/mkcerts.sh" "$certs" || it_die "cannot make the test certificates"
tport=$(free_port)
cfg="$(zk_tls_cfg "$certs" "$tport")
X509AuthenticationProvider.superUser=CN=other"
if [ "$kind" = zk ]; then
    export ZK_CFG_EXTRA="$cfg"
else
    # The same keys as flags, but serverCnxnFactory: a zoo.cfg may name Netty (tumblerd ignores
    # it there), a flag may not.
    TUMBLERD_ARGS="${TUMBLERD_ARGS:-} $(grep -v '^serverCnxnFactory=' <<< "$cfg" |
        sed 's/^/--/' | tr '\n' ' ')"
    export TUMBLERD_ARGS
fi
launch "$kind" "$kind"
plain=127.0.0.1:$LAUNCH_PORT
deadline=$((SECONDS + 30))
until (exec 3<> "/dev/tcp/127.0.0.1/$tport") 2> /dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || it_die "the TLS port $tport did not open"
    sleep 0.1
done

# session NAME HOSTPORT [JVM FLAG ...]: one CLI session, commands from stdin, into the transcript.
session()
{
    zkcli_append "$work" "$@"
}

# shellcheck disable=SC2046
session client "127.0.0.1:$tport" $(zk_tls_client_flags "$certs" client) <<'C'
whoami
create /tls-auth a auth::cdrwa
getAcl /tls-auth
get /tls-auth
create /tls-world w
quit
C
# Without TLS: no x509 id, yet x509 ACLs are valid on a server with a TLS port.
session plain "$plain" <<'C'
whoami
get /tls-auth
create /tls-other o x509:CN=other:cdrwa
get /tls-world
create /tls-bad b x509::cdrwa
quit
C
# The client's certificate does not match another subject's ACL.
# shellcheck disable=SC2046
session client-again "127.0.0.1:$tport" $(zk_tls_client_flags "$certs" client) <<'C'
get /tls-other
get /tls-auth
quit
C
# CN=other is X509AuthenticationProvider.superUser: every ACL gives way.
# shellcheck disable=SC2046
session super "127.0.0.1:$tport" $(zk_tls_client_flags "$certs" other) <<'C'
whoami
get /tls-other
get /tls-auth
delete /tls-auth
delete /tls-other
delete /tls-world
quit
C
if ! diff -u "$here/tls/expected.txt" "$work/got"; then
    echo "the CLI's TLS sessions differ from tls/expected.txt" >&2
    exit 1
fi
it_log "zkCli over TLS: as expected"

run_bounded 120 /usr/bin/python3 "$here/tls/checks.py" all "$kind" "$LAUNCH_PORT" "$tport" "$certs" ||
    it_die "tls/checks.py failed"

[ "$kind" = tumblerd ] || exit 0
# Stores tumblerd cannot use stop it before it listens, saying why.
# refused WHAT EXPECTED-TEXT ARG...: tumblerd with a TLS port and ARGs must exit non-zero, its
# log holding EXPECTED-TEXT.
refused()
{
    local what=$1 text=$2 dir
    shift 2
    dir=$(it_tmpdir "refused")
    run_bounded 20 "$TUMBLERD" --clientPort=0 --clientPortAddress=127.0.0.1 \
        --dataDir="$dir/data" --secureClientPort="$(free_port)" --ssl.clientAuth=none \
        "$@" > "$dir/log" 2>&1 &&
        it_die "tumblerd started with $what"
    grep -qF -- "$text" "$dir/log" || {
        cat "$dir/log" >&2
        it_die "tumblerd with $what did not say \"$text\""
    }
    it_log "refused at start-up: $what"
}
cp "$certs/server.p12" "$work/server.jks"
refused "a JKS key store" "JKS stores cannot be read here" \
    --ssl.keyStore.location="$work/server.jks"
refused "a wrong password" "server.p12 cannot be used: error:11800071:PKCS12 routines::mac verify failure (a wrong password?)" \
    --ssl.keyStore.location="$certs/server.p12" --ssl.keyStore.password=wrong
refused "a missing key store" "nothing.p12 cannot be used" \
    --ssl.keyStore.location="$work/nothing.p12" --ssl.keyStore.password=secret
refused "a store of no known type" "cannot tell its type from its name; set ssl.keyStore.type" \
    --ssl.keyStore.location="$work/store" --ssl.keyStore.password=secret
refused "TLS 1.1" "\"TLSv1.1\" is not offered here" \
    --ssl.keyStore.location="$certs/server.p12" --ssl.keyStore.password=secret \
    --ssl.enabledProtocols=TLSv1.2,TLSv1.1
refused "an unknown cipher suite" "\"TLS_NO_SUCH_SUITE\" is not offered here" \
    --ssl.keyStore.location="$certs/server.p12" --ssl.keyStore.password=secret \
    --ssl.ciphersuites=TLS_AES_128_GCM_SHA256,TLS_NO_SUCH_SUITE
refused "a trust store without its password" "trust.p12 cannot be used" \
    --ssl.keyStore.location="$certs/server.p12" --ssl.keyStore.password=secret \
    --ssl.trustStore.location="$certs/trust.p12"
# The system's CAs would make any certificate a public CA signed an x509 id.
refused "clients' certificates wanted and no trust store" \
    "ssl.clientAuth=want: ssl.trustStore.location must name the CAs" \
    --ssl.keyStore.location="$certs/server.p12" --ssl.keyStore.password=secret \
    --ssl.clientAuth=want

# renewal MODE [FLAG ...]: tumblerd serving live.p12, a copy of the server's key store, which
# tls/checks.py MODE renews under a live session.
renewal()
{
    local mode=$1 dir port tport
    shift
    dir=$(it_tmpdir "$mode")
    port=$(free_port)
    tport=$(free_port)
    cp "$certs/server.p12" "$dir/live.p12"
    start_tumblerd "$dir" "$port" --secureClientPort="$tport" "$@" \
        --ssl.keyStore.location="$dir/live.p12" --ssl.keyStore.password=secret \
        --ssl.trustStore.location="$certs/ca.pem"
    wait_serving "$port" 30 "$SERVER_PID" || it_die "tumblerd did not start"
    run_bounded 60 /usr/bin/python3 "$here/tls/checks.py" "$mode" "$tport" "$certs" "$dir" \
        "$SERVER_PID" || it_die "the $mode checks failed"
    stop_server "$SERVER_PID" 10
}
# SIGHUP reads the stores again: a renewed certificate is in use for the next handshake, open
# sessions go on; a store that cannot be used then leaves the one in use.
renewal reload
# client.certReload: the same when their files change, with no signal.
renewal watch --client.certReload=true

# A PEM key store and trust store, certificates wanted (not needed), and one cipher suite, which
# leaves TLS 1.2 alone.
dir=$(it_tmpdir want)
port=$(free_port)
tport=$(free_port)
start_tumblerd "$dir" "$port" --secureClientPort="$tport" \
    --ssl.keyStore.location="$certs/server.pem.key" --ssl.keyStore.type=PEM \
    --ssl.trustStore.location="$certs/ca.pem" --ssl.clientAuth=want \
    --ssl.ciphersuites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
wait_serving "$port" 30 "$SERVER_PID" || it_die "tumblerd with PEM stores did not start"
run_bounded 60 /usr/bin/python3 "$here/tls/checks.py" want "$tport" "$certs" ||
    it_die "the PEM/want/cipher checks failed"
stop_server "$SERVER_PID" 10

# A trust store holding an intermediate CA alone, clients' certificates needed.
dir=$(it_tmpdir inter)
port=$(free_port)
tport=$(free_port)
start_tumblerd "$dir" "$port" --secureClientPort="$tport" \
    --ssl.keyStore.location="$certs/server.pem.key" --ssl.keyStore.type=PEM \
    --ssl.trustStore.location="$certs/inter.pem"
wait_serving "$port" 30 "$SERVER_PID" || it_die "tumblerd trusting an intermediate CA did not start"
run_bounded 60 /usr/bin/python3 "$here/tls/checks.py" inter "$tport" "$certs" ||
    it_die "the intermediate CA checks failed"
stop_server "$SERVER_PID" 10

# A zoo.cfg for TLS alone, with no clientPort: as with ZooKeeper, no plain port is opened (not
# the default 2181 either), and the TLS port serves.
dir=$(it_tmpdir tls-only)
tport=$(free_port)
{
    echo "dataDir=$dir/data"
    zk_tls_cfg "$certs" "$tport"
} > "$dir/zoo.cfg"
"$TUMBLERD" "$dir/zoo.cfg" > "$dir/server.log" 2>&1 < /dev/null &
SERVER_PID=$!
IT_PIDS+=("$SERVER_PID")
IT_TUMBLERDS+="$SERVER_PID "
deadline=$((SECONDS + 30))
until grep -q "serving only with TLS 127.0.0.1:$tport," "$dir/server.log"; do
    [ "$SECONDS" -lt "$deadline" ] || { cat "$dir/server.log" >&2; it_die "no TLS-only start"; }
    sleep 0.1
done
listening=$(ss -Hltnp | grep -F "pid=$SERVER_PID," | awk '{print $4}')
[ "$listening" = "127.0.0.1:$tport" ] ||
    it_die "a TLS-only tumblerd listens on: ${listening//$'\n'/ }"
run_bounded 60 /usr/bin/python3 "$here/tls/checks.py" only "$tport" "$certs" ||
    it_die "the TLS-only server did not serve"
stop_server "$SERVER_PID" 10
it_log "TLS alone: no plain port"
