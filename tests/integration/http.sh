#!/usr/bin/env bash
# tumblerd's HTTP endpoints, end to end, with the tools an operator uses:
#   - the Prometheus endpoint (metricsProvider.*): `promtool check metrics`
#     finds no error, and no lint but on ZooKeeper's own names; its figures
#     are mntr's (the same znode_count through both); the CLI's creates
#     (create2) show in their latency histogram; ZooKeeper's summaries
#     (fsynctime, snapshottime, readlatency, updatelatency), after reads,
#     writes and a snapshot, have its shape and agree with the histograms
#     they come from (http_check.py summaries); a real Prometheus server scrapes it and
#     answers a query through its HTTP API with the server's figure;
#   - the AdminServer (admin.*): every command listed at /commands answers
#     JSON with "command" and "error" (parsed by Python), srvr/conf/mntr
#     carry the server's figures, an unknown command says so;
#   - hostile input on both ports: huge headers and URLs, a request line of
#     garbage, bodies, other methods, more idle connections than allowed:
#     each gets its error or is closed, the server keeps serving HTTP and
#     clients, and stops cleanly (exit 0);
#   - off unless configured; a bad provider name or a port taken stops the
#     start with a message naming it.
#   http.sh TUMBLER_CLI      (TUMBLERD names the server binary)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
cli=$1
it_init
dir=$(it_tmpdir srv)
port=$(free_port)
mport=$(free_port)
aport=$(free_port)
passed=0

fail() { echo "FAIL: $*"; tail -n 20 "$dir/server.log"; exit 1; }
ok() { passed=$((passed + 1)); echo "ok - $* (${SECONDS}s)"; }

prom=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
# snapCount: a snapshot within the test's few writes, for snapshottime
start_tumblerd "$dir" "$port" --snapCount=4 --metricsProvider.className=$prom \
    --metricsProvider.httpHost=127.0.0.1 --metricsProvider.httpPort="$mport" \
    --admin.enableServer=true --admin.serverAddress=127.0.0.1 \
    --admin.serverPort="$aport" --admin.idleTimeout=1000
pid=$SERVER_PID
wait_serving "$port" 30 "$pid" || fail "tumblerd did not start"
M=http://127.0.0.1:$mport/metrics
A=http://127.0.0.1:$aport/commands
CURL=(curl -sS --max-time 5)

"$cli" -s "127.0.0.1:$port" create /app x >/dev/null || fail "create /app"
"$cli" -s "127.0.0.1:$port" create /app/b y >/dev/null || fail "create /app/b"

# ---- Prometheus text ------------------------------------------------------
"${CURL[@]}" -o "$dir/m1" -D "$dir/h1" "$M" || fail "GET /metrics"
grep -qi '^content-type: text/plain; version=0.0.4' "$dir/h1" ||
    fail "content type: $(cat "$dir/h1")"
promtool_check() {
    promtool check metrics < "$1" > "$dir/lint" 2>&1
    rc=$?
    # 3: lint only.  ZooKeeper's names keep their "_count" (dashboards use
    # them); anything else is ours to fix.
    [ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "promtool: $(cat "$dir/lint")"
    if grep -v -E '^(znode|watch|ephemerals|open_file_descriptor|max_file_descriptor)_count non-histogram' \
        "$dir/lint" | grep -q .; then
        fail "promtool lint: $(cat "$dir/lint")"
    fi
}
promtool_check "$dir/m1"
ok "promtool check metrics"

value() { awk -v n="$1" '$1 == n { print $2 }' "$2"; }
mntr_nodes=$(four_letter "$port" mntr | awk '$1 == "zk_znode_count" { print $2 }')
prom_nodes=$(value znode_count "$dir/m1")
[ -n "$prom_nodes" ] && [ "$prom_nodes" = "$mntr_nodes" ] ||
    fail "znode_count $prom_nodes, mntr says $mntr_nodes"
[ "$(value tumbler_server_state'{server_state="standalone"}' "$dir/m1")" = 1 ] ||
    fail "server_state"
creates=$(value 'tumbler_request_latency_seconds_count{op="create2"}' "$dir/m1")
[ "$creates" = 2 ] || fail "create histogram count $creates, expected 2"
inf=$(value 'tumbler_request_latency_seconds_bucket{op="create2",le="+Inf"}' "$dir/m1")
[ "$inf" = 2 ] || fail "create +Inf bucket $inf"
syncs=$(value 'tumbler_log_write_duration_seconds_count' "$dir/m1")
[ "${syncs:-0}" -ge 2 ] || fail "log write histogram count '$syncs'"
ok "figures: znode_count $prom_nodes as mntr's, 2 creates in the histogram, $syncs log writes"

# ---- ZooKeeper's summaries ---------------------------------------------------
for i in 1 2 3; do
    "$cli" -s "127.0.0.1:$port" get /app >/dev/null || fail "get /app"
    "$cli" -s "127.0.0.1:$port" set /app "v$i" >/dev/null || fail "set /app"
done
snaps=0
deadline=$((SECONDS + 30))
while [ "$SECONDS" -lt "$deadline" ]; do
    "${CURL[@]}" -o "$dir/m2" "$M" || fail "GET /metrics"
    snaps=$(value tumbler_snapshots_taken "$dir/m2")
    [ "${snaps:-0}" -ge 1 ] && break
    "$cli" -s "127.0.0.1:$port" set /app/b w >/dev/null || fail "set /app/b"
    sleep 0.2
done
[ "${snaps:-0}" -ge 1 ] || fail "no snapshot taken (snapCount=4)"
python3 "$here/http_check.py" summaries "$dir/m2" || fail "ZooKeeper's summaries"
promtool_check "$dir/m2"
ok "ZooKeeper's summaries after reads, writes and $snaps snapshot(s); promtool check metrics"

code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/nope")
[ "$code" = 404 ] || fail "/nope answered $code"

# ---- a real Prometheus scrapes it -----------------------------------------
pport=$(free_port)
pdir=$(it_tmpdir prometheus)
cat > "$pdir/prometheus.yml" <<CFG
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: tumbler
    static_configs:
      - targets: ['127.0.0.1:$mport']
CFG
run_bg 120 prometheus --config.file="$pdir/prometheus.yml" \
    --storage.tsdb.path="$pdir/data" --web.listen-address="127.0.0.1:$pport" \
    > "$pdir/log" 2>&1
got=""
deadline=$((SECONDS + 60))
while [ "$SECONDS" -lt "$deadline" ]; do
    got=$(curl -s --max-time 2 "http://127.0.0.1:$pport/api/v1/query?query=znode_count" |
        python3 -c 'import json,sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null)
    [ -n "$got" ] && break
    sleep 0.5
done
[ "$got" = "$prom_nodes" ] || { tail -n 20 "$pdir/log"; fail "prometheus query gave '$got'"; }
up=$(curl -s --max-time 2 "http://127.0.0.1:$pport/api/v1/query?query=up%7Bjob%3D%22tumbler%22%7D" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
[ "$up" = 1 ] || fail "prometheus up=$up"
stop_server "$BG_PID" 10
ok "prometheus scraped znode_count=$got, up=1"

# ---- AdminServer ----------------------------------------------------------
python3 "$here/http_check.py" admin "$A" "$port" "$prom_nodes" ||
    fail "AdminServer answers"
ok "AdminServer: every command answers JSON with the server's figures"

# ---- hostile input ----------------------------------------------------------
for url in "$M" "$A/ruok"; do
    code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' \
        -H "X-Big: $(head -c 100000 /dev/zero | tr '\0' a)" "$url")
    [ "$code" = 431 ] || [ "$code" = 413 ] || fail "huge header: $code"
    code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' \
        "$url?$(head -c 100000 /dev/zero | tr '\0' a)")
    [ "$code" = 414 ] || [ "$code" = 431 ] || fail "huge URL: $code"
    code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' -X POST \
        --data-binary @"$dir/m1" "$url")
    [ "$code" = 405 ] || fail "POST: $code"
    code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' -X DELETE "$url")
    [ "$code" = 405 ] || fail "DELETE: $code"
done
python3 "$here/http_check.py" hostile "$mport" "$aport" || fail "hostile input"
# More idle connections than allowed: the excess is refused, the idle ones
# are closed after admin.idleTimeout, and the port serves again.
for i in $(seq 1 80); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$aport" 2>/dev/null && eval "fds_$i=$fd"
done
served=0
deadline=$((SECONDS + 20))
while [ "$SECONDS" -lt "$deadline" ]; do
    if "${CURL[@]}" -o /dev/null "$A/ruok" 2>/dev/null; then served=1; break; fi
    sleep 0.2
done
for i in $(seq 1 80); do
    v=fds_$i
    [ -n "${!v:-}" ] && eval "exec ${!v}>&-"
done
[ "$served" = 1 ] || fail "admin port did not serve again after idle connections"
[ "$(four_letter "$port" ruok)" = imok ] || fail "client port after HTTP abuse"
"$cli" -s "127.0.0.1:$port" create /app/c z >/dev/null || fail "create after abuse"
ok "hostile input refused, both ports and the client port still serve"

stop_server "$pid" 10
[ "$STOP_STATUS" = 0 ] || fail "tumblerd exited $STOP_STATUS on SIGTERM"
ok "clean stop"

# ---- off unless configured; bad configuration -------------------------------
dir2=$(it_tmpdir off)
port2=$(free_port)
start_tumblerd "$dir2" "$port2" --admin.serverPort="$aport" \
    --metricsProvider.httpPort="$mport"
wait_serving "$port2" 30 "$SERVER_PID" || fail "tumblerd (no HTTP) did not start"
curl -s --max-time 2 -o /dev/null "$A/ruok" && fail "admin port open without admin.enableServer"
curl -s --max-time 2 -o /dev/null "$M" && fail "metrics port open without a provider"
out=$("$TUMBLERD" --dataDir="$dir2/x" --clientPort=0 \
    --metricsProvider.className=com.example.Nope 2>&1)
[ $? = 2 ] && echo "$out" | grep -q 'metricsProvider.className: unknown provider "com.example.Nope"' ||
    fail "bad provider: $out"
out=$("$TUMBLERD" --dataDir="$dir2/y" --clientPort=0 --metricsProvider.className=$prom \
    --metricsProvider.httpHost=127.0.0.1 --metricsProvider.httpPort="$port2" 2>&1)
[ $? = 1 ] && echo "$out" | grep -q "metrics: cannot listen on 127.0.0.1:$port2" ||
    fail "port taken: $out"
[ ! -e "$dir2/y" ] || fail "a start that failed created its data directory"
ok "off by default; bad provider and taken port refused"

# ---- on "::" both endpoints take IPv4 clients too, as the client port does ----
dir3=$(it_tmpdir any)
port3=$(free_port)
mport3=$(free_port)
aport3=$(free_port)
start_tumblerd "$dir3" "$port3" --metricsProvider.className=$prom \
    --metricsProvider.httpHost=:: --metricsProvider.httpPort="$mport3" \
    --admin.enableServer=true --admin.serverAddress=:: --admin.serverPort="$aport3" \
    --admin.commandURL=/
wait_serving "$port3" 30 "$SERVER_PID" || fail "tumblerd (HTTP on ::) did not start"
for url in "http://127.0.0.1:$mport3/metrics" "http://[::1]:$mport3/metrics" \
    "http://127.0.0.1:$aport3/ruok" "http://[::1]:$aport3/ruok"; do
    "${CURL[@]}" -o /dev/null "$url" || fail "GET $url with the endpoints on ::"
done
"${CURL[@]}" "http://127.0.0.1:$aport3/" | grep -q 'href="/ruok"' ||
    fail "commandURL=/: the index does not link /ruok"
ok "on ::, both endpoints answer over IPv4 and IPv6; commandURL=/ serves /ruok"

echo "$passed passed, 0 failed"
