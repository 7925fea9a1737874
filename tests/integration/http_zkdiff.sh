#!/usr/bin/env bash
# The AdminServer of tumblerd against Apache ZooKeeper 3.8's, the same
# state on both (http_zkdiff.py): every field of ZooKeeper's answer to each
# command is in tumblerd's, with its JSON type, and the HTTP status is the
# same.  ZooKeeper's AdminServer runs on Debian's Jetty 9 and Jackson.
#   http_zkdiff.sh      (TUMBLERD names the server binary)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
it_init
fail() { echo "FAIL: $*"; exit 1; }

j=/usr/share/java
cp=$(zk_classpath)
for n in jetty9-server jetty9-servlet jetty9-http jetty9-util jetty9-io \
    jetty9-security jackson-core jackson-databind jackson-annotations servlet-api; do
    [ -f "$j/$n.jar" ] || fail "$j/$n.jar not found"
    cp+=":$j/$n.jar"
done
zdir=$(it_tmpdir zk)
zport=$(free_port)
zadmin=$(free_port)
mkdir -p "$zdir/data"
cat > "$zdir/zoo.cfg" <<CFG
tickTime=2000
dataDir=$zdir/data
clientPort=$zport
clientPortAddress=127.0.0.1
4lw.commands.whitelist=*
admin.enableServer=true
admin.serverAddress=127.0.0.1
admin.serverPort=$zadmin
CFG
# shellcheck disable=SC2046
${ZK_JAVA:-java} $(zk_jvm_flags "$zdir/server.log") -cp "$cp" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$zdir/zoo.cfg" \
    >> "$zdir/server.log" 2>&1 < /dev/null &
IT_PIDS+=("$!")

tdir=$(it_tmpdir tumblerd)
tport=$(free_port)
tadmin=$(free_port)
start_tumblerd "$tdir" "$tport" --admin.enableServer=true \
    --admin.serverAddress=127.0.0.1 --admin.serverPort="$tadmin"

for p in "$zadmin" "$tadmin"; do
    deadline=$((SECONDS + 60))
    until curl -s --max-time 2 -o /dev/null "http://127.0.0.1:$p/commands/ruok"; do
        [ "$SECONDS" -lt "$deadline" ] || fail "no AdminServer on $p"
        sleep 0.2
    done
done
wait_serving "$zport" 60 || fail "ZooKeeper does not serve"
wait_serving "$tport" 30 || fail "tumblerd does not serve"
run_bounded 60 /usr/bin/python3 "$here/http_zkdiff.py" \
    "http://127.0.0.1:$zadmin/commands" "$zport" \
    "http://127.0.0.1:$tadmin/commands" "$tport" || fail "the answers differ"
echo "1 passed, 0 failed"
