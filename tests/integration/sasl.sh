#!/usr/bin/env bash
# SASL (DIGEST-MD5) against a server that has the users of sasl/server.jaas, the SASL provider
# and superUser=super (CMakeLists.txt starts it so): sessions of Apache's CLI, whose Java client
# logs in with the JAAS file given to it, compared with what Apache ZooKeeper 3.8 answers; a
# login over raw frames followed by a second one and a flood of refused ones (sasl/raw_login.py); raw_proto's SASL checks; the
# tumbler CLI's login; then the same against a second server that enforces authentication
# (enforce.auth).
#
#   sasl.sh HOST:PORT RAW_PROTO TUMBLER
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

[ $# = 3 ] || it_die "usage: $0 HOST:PORT RAW_PROTO TUMBLER"
hostport=$1
raw_proto=$2
tumbler=$3
it_init
work=$(it_tmpdir sasl)

# session NAME JVM-FLAG: one CLI session, commands from stdin, into the transcript.
session()
{
    zkcli_append "$work" "$1" "$hostport" "$2"
}

# jaasuser: ACLs of scheme sasl, "auth" expanded to the SASL id, Kerberos-style names.
session jaasuser -Djava.security.auth.login.config="$here/sasl/client-jaasuser.jaas" <<'C'
whoami
create /sasl-a a sasl:jaasuser:cdrwa
getAcl /sasl-a
get /sasl-a
create /sasl-b b auth::cdrwa
getAcl /sasl-b
create /sasl-bad x sasl:a@b@c:cdrwa
create /sasl-k x sasl:zookeeper/host@EXAMPLE.COM:r
getAcl /sasl-k
create /sasl-n x sasl:a/b/c:r
getAcl /sasl-n
quit
C
# No SASL: the nodes are closed to it, and it has no id for "auth".
session anonymous -Dzookeeper.sasl.client=false <<'C'
get /sasl-a
whoami
create /sasl-x x auth::cdrwa
quit
C
# The superUser: every ACL gives way.
session super -Djava.security.auth.login.config="$here/sasl/client-super.jaas" <<'C'
whoami
get /sasl-a
getAcl /sasl-k
delete /sasl-a
delete /sasl-b
delete /sasl-k
delete /sasl-n
ls /
quit
C
# A wrong password: the login fails and the connection with it.
session wrong -Djava.security.auth.login.config="$here/sasl/client-wrong.jaas" <<'C'
ls /
quit
C

cat > "$work/expected" <<'EOF'
=== jaasuser
Auth scheme: User
ip: 127.0.0.1
sasl: jaasuser
Created /sasl-a
'sasl,'jaasuser
: cdrwa
a
Created /sasl-b
'sasl,'jaasuser
: cdrwa
KeeperErrorCode = InvalidACL for /sasl-bad
Acl is not valid : /sasl-bad
Created /sasl-k
Insufficient permission : /sasl-k
Created /sasl-n
Insufficient permission : /sasl-n
--- events ---
=== anonymous
Insufficient permission : /sasl-a
Auth scheme: User
ip: 127.0.0.1
KeeperErrorCode = InvalidACL for /sasl-x
Acl is not valid : /sasl-x
--- events ---
=== super
Auth scheme: User
ip: 127.0.0.1
sasl: super
super: 
a
'sasl,'zookeeper/host@EXAMPLE.COM
: r
[zookeeper]
--- events ---
=== wrong
KeeperErrorCode = AuthFailed for /
--- events ---
EOF

if ! diff -u "$work/expected" "$work/got"; then
    echo "SASL sessions differ from Apache ZooKeeper's (see diff above)" >&2
    exit 1
fi
echo "SASL sessions match ($(wc -l < "$work/expected") lines)"
/usr/bin/python3 "$here/sasl/raw_login.py" "$hostport" jaasuser jaas_password || exit 1
# A flood of refused logins is logged a line a second at most; the next line counts the rest.
/usr/bin/python3 "$here/sasl/raw_login.py" "$hostport" jaasuser wrong refused 40 || exit 1
sleep 1.2
/usr/bin/python3 "$here/sasl/raw_login.py" "$hostport" jaasuser wrong refused 1 || exit 1
if [ "$IT_SERVER_KIND" = tumblerd ]; then
    log=$(readlink "/proc/$IT_SERVER_PID/fd/1")
    n=$(grep -c "SASL authentication failed" "$log")
    [ "$n" -ge 2 ] && [ "$n" -le 6 ] ||
        it_die "$n lines for 41 refused logins in $log (a line a second at most)"
    grep -q "SASL authentication failed.*more since the last such line" "$log" ||
        it_die "no count of the refusals left unlogged in $log"
fi
IT_SASL=1 "$raw_proto" "$hostport" sasl || exit 1

# The tumbler CLI's own login (libtumbler): -a sasl:USER:PASSWORD.
who=$("$tumbler" -s "$hostport" -a sasl:jaasuser:jaas_password whoami) ||
    it_die "tumbler whoami with a SASL login failed"
grep -qx "sasl:jaasuser" <<<"$who" || it_die "tumbler whoami: no sasl:jaasuser in: $who"
"$tumbler" -s "$hostport" -a sasl:jaasuser:wrong whoami 2>/dev/null
rc=$?
[ "$rc" = 115 ] || it_die "tumbler with a wrong SASL password exited $rc, not 115"
echo "tumbler's SASL login: as expected"

# enforce.auth: a second server of the same kind that serves only connections authenticated with
# sasl or digest (the blanks in the list are ZooKeeper's to trim).
ZK_CFG_EXTRA="$ZK_CFG_EXTRA
enforce.auth.enabled=true
enforce.auth.schemes=sasl, digest"
TUMBLERD_ARGS="$TUMBLERD_ARGS --enforce.auth.enabled=true --enforce.auth.schemes=sasl,digest"
launch "$IT_SERVER_KIND" enforce
hostport=127.0.0.1:$LAUNCH_PORT
: > "$work/got"
session anonymous -Dzookeeper.sasl.client=false <<'C'
ls /
C
session digest -Dzookeeper.sasl.client=false <<'C'
addauth digest bob:pw
ls /
C
session jaasuser -Djava.security.auth.login.config="$here/sasl/client-jaasuser.jaas" <<'C'
ls /
C
cat > "$work/expected" <<'EOF'
=== anonymous
KeeperErrorCode = Session closed because client failed to authenticate for /
--- events ---
=== digest
[zookeeper]
--- events ---
=== jaasuser
[zookeeper]
--- events ---
EOF
if ! diff -u "$work/expected" "$work/got"; then
    echo "sessions with enforce.auth differ from Apache ZooKeeper's (see diff above)" >&2
    exit 1
fi
echo "sessions with enforce.auth match"
IT_SASL=enforce "$raw_proto" "$hostport" sasl
