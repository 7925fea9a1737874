#!/usr/bin/env bash
# A scripted session of Apache's own CLI (ZooKeeperMain, what zkCli.sh runs) against
# HOST:PORT, with its printed output compared to what Apache ZooKeeper 3.8 answers.
#
#   zkcli_session.sh HOST:PORT
#
# The CLI reads the commands from stdin (Debian ships no jline, so it reads plain lines).  The
# output is normalized before the comparison: zxids, times and session ids vary between runs;
# lists whose order the server does not define are sorted; watch notifications, which the CLI
# prints from another thread at no fixed place, are moved (in arrival order) to the end.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

[ $# = 1 ] || it_die "usage: $0 HOST:PORT"
hostport=$1
it_init
work=$(it_tmpdir zkcli)

cat > "$work/commands" <<'EOF'
create /S hello
create -e /S/eph e
create -s /S/seq- a
create -s -e /S/es- b
create /S/child
create /S hello
create /nope/x
create /S/eph/kid x
ls /S
ls -s /S
get /S
get -s /S
stat /S
stat /S/eph
stat /nope
set -v 0 /S world
set -v 0 /S again
set -s /S/child data
get /S
get /nope
delete /S
delete -v 5 /S/child
delete /S/child
delete /zookeeper
getAcl /S
addauth digest alice:secret
create /S/secret s auth::cdrwa
getAcl /S/secret
create /S/open o world:anyone:ra
getAcl /S/open
setAcl -v 0 /S/open world:anyone:cdrwa,digest:alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=:a
setAcl -v 0 /S/open world:anyone:cdrwa
getAcl -s /S/open
create /S/badacl x world:foo:r
sync /S
getAllChildrenNumber /S
getEphemerals /S
whoami
create /T
create /T/a
create /T/a/b
ls -R /T
get -w /S
set /S watched
stat -w /S/nothere
create /S/nothere
ls -w /T
create /T/c
addWatch /T/a
create /T/a/p1
set /T/a x
set /T/a y
removewatches /T/a
set /T/a z
setquota -n 4 /T
create /T/q
listquota /T
setquota -b 10 /T/a
delquota -n /T
listquota /T
create /Q
setquota -N 1 /Q
create /Q/a
create /Q/b
listquota /Q
deleteall /Q
deleteall /S
ls /S
stat /S
deleteall /T
ls /
quit
EOF

cat > "$work/expected" <<'EOF'
Created /S
Created /S/eph
Created /S/seq-0000000001
Created /S/es-0000000002
Created /S/child
Node already exists: /S
Node does not exist: /nope/x
Ephemerals cannot have children: /S/eph/kid
[child, eph, es-0000000002, seq-0000000001]
[child, eph, es-0000000002, seq-0000000001]
cZxid = 0xZXID
ctime = DATE
mZxid = 0xZXID
mtime = DATE
pZxid = 0xZXID
cversion = 4
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 5
numChildren = 4
hello
hello
cZxid = 0xZXID
ctime = DATE
mZxid = 0xZXID
mtime = DATE
pZxid = 0xZXID
cversion = 4
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 5
numChildren = 4
cZxid = 0xZXID
ctime = DATE
mZxid = 0xZXID
mtime = DATE
pZxid = 0xZXID
cversion = 4
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 5
numChildren = 4
cZxid = 0xZXID
ctime = DATE
mZxid = 0xZXID
mtime = DATE
pZxid = 0xZXID
cversion = 0
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0xSESSION
dataLength = 1
numChildren = 0
Node does not exist: /nope
version No is not valid : /S
cZxid = 0xZXID
ctime = DATE
mZxid = 0xZXID
mtime = DATE
pZxid = 0xZXID
cversion = 0
dataVersion = 1
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 4
numChildren = 0
world
Node does not exist: /nope
Node not empty: /S
version No is not valid : /S/child
Arguments are not valid : /zookeeper
'world,'anyone
: cdrwa
Created /S/secret
'digest,'alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=
: cdrwa
Created /S/open
'world,'anyone
: ra
version No is not valid : /S/open
'world,'anyone
: cdrwa
'digest,'alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=
: a
cZxid = 0xZXID
ctime = DATE
mZxid = 0xZXID
mtime = DATE
pZxid = 0xZXID
cversion = 0
dataVersion = 0
aclVersion = 1
ephemeralOwner = 0x0
dataLength = 1
numChildren = 0
KeeperErrorCode = InvalidACL for /S/badacl
Acl is not valid : /S/badacl
Sync is OK
5
[/S/eph, /S/es-0000000002]
Auth scheme: User
digest: alice
ip: 127.0.0.1
Created /T
Created /T/a
Created /T/a/b
/T
/T/a
/T/a/b
world
Node does not exist: /S/nothere
Created /S/nothere
[a]
Created /T/c
Created /T/a/p1
[Warning]: the count quota you create is less than the existing count:5
Created /T/q
absolute path is /zookeeper/quota/T/zookeeper_limits
Output quota for /T count=4,bytes=-1=;byteHardLimit=-1;countHardLimit=-1
Output stat for /T count=6,bytes=1
/T/a has a parent /T which has a quota
absolute path is /zookeeper/quota/T/zookeeper_limits
Output quota for /T count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=-1
Output stat for /T count=6,bytes=1
Created /Q
Created /Q/a
Created /Q/b
absolute path is /zookeeper/quota/Q/zookeeper_limits
Output quota for /Q count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=1
Output stat for /Q count=3,bytes=0
Node does not exist: /S
Node does not exist: /S
[zookeeper]
--- events ---
WatchedEvent state:SyncConnected type:NodeDataChanged path:/S
WatchedEvent state:SyncConnected type:NodeCreated path:/S/nothere
WatchedEvent state:SyncConnected type:NodeChildrenChanged path:/T
WatchedEvent state:SyncConnected type:NodeCreated path:/T/a/p1
WatchedEvent state:SyncConnected type:NodeDataChanged path:/T/a
WatchedEvent state:SyncConnected type:NodeDataChanged path:/T/a
WatchedEvent state:SyncConnected type:PersistentWatchRemoved path:/T/a
EOF

zkcli "$hostport" "$work/cli.log" < "$work/commands" > "$work/raw" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
    echo "zkCli exited with $rc" >&2
    cat "$work/raw" >&2
    exit 1
fi
zkcli_normalize < "$work/raw" > "$work/got"
if diff -u "$work/expected" "$work/got"; then
    echo "zkcli session output matches ($(wc -l < "$work/expected") lines)"
    exit 0
fi
echo "zkcli session output differs from Apache ZooKeeper's (see diff above)" >&2
exit 1
