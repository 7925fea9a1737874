#!/usr/bin/env bash
# What TLS costs, on both servers, with one command:
#
#   bench/tls.sh [REPEATS]        (default 3; environment: BUILD_DIR)
#
# Both servers up on fresh data directories, each with a TLS port that requires client
# certificates (tests/integration/tls/mkcerts.sh); ZooKeeper runs on Netty, which its TLS port
# needs, for the plain runs too.  Every scenario runs plain, then over TLS, against one server,
# then the other (the order flips every repetition).  Prints medians, TLS / plain per server, and
# tumbler / zookeeper over TLS.
set -Eeuo pipefail
trap 'echo "tls.sh: line $LINENO: command failed" >&2' ERR
cd "$(dirname "$0")/.."
ROOT=$(pwd)
REPEATS=${1:-3}
BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}

cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
ninja -C "$BUILD_DIR" tumblerd tbbench > /dev/null
TUMBLERD=$BUILD_DIR/src/server/tumblerd
TBBENCH=$BUILD_DIR/bench/tbbench
BS_TMPDIR=${BS_TMPDIR:-/var/tmp}
# shellcheck source=servers.sh
. "$ROOT/bench/servers.sh"
bs_init
export BS_TLS=$BS_ROOT/certs
"$ROOT/tests/integration/tls/mkcerts.sh" "$BS_TLS"
RESULTS=$BS_ROOT/results.txt
: > "$RESULTS"

SCENARIOS=(
    "lock_fair_1|lock --variant fair --clients 100 --locks 1 --duration 10 --warmup 2"
    "lock_fair_10|lock --variant fair --clients 100 --locks 10 --duration 10 --warmup 2"
    "raw|raw --clients 16 --outstanding 64 --ops create,get,delete --data-bytes 100 --duration 5 --warmup 1"
)

declare -A port pid
for rep in $(seq 1 "$REPEATS"); do
    for kind in tumbler zookeeper; do
        port[$kind]=$(free_port_pair) # and + 1, the TLS port
        bs_start "$kind" "r$rep-$kind" "${port[$kind]}"
        pid[$kind]=$BS_PID
    done
    for kind in tumbler zookeeper; do
        "$TBBENCH" serving --server "127.0.0.1:${port[$kind]}" > /dev/null
    done
    order=(tumbler zookeeper)
    [ $((rep % 2)) = 0 ] && order=(zookeeper tumbler)
    for sc in "${SCENARIOS[@]}"; do
        name=${sc%%|*}
        for kind in "${order[@]}"; do
            for mode in plain tls; do
                extra=()
                [ "$mode" = tls ] && extra=(--tls-port $((port[$kind] + 1))
                    --tls-ca "$BS_TLS/ca.pem" --tls-cert "$BS_TLS/client.pem"
                    --tls-key "$BS_TLS/client.key")
                # shellcheck disable=SC2086
                "$TBBENCH" ${sc#*|} --server "127.0.0.1:${port[$kind]}" --pid "${pid[$kind]}" \
                    --label "$kind" "${extra[@]}" 2>&1 |
                    sed -n "s/^RESULT /RESULT rep=$rep name=$name mode=$mode /p" >> "$RESULTS"
            done
        done
    done
    for kind in tumbler zookeeper; do bs_stop "${pid[$kind]}"; done
done

python3 - "$RESULTS" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    op = f.get("op", "")
    key = (f["name"] + (":" + op if op else ""), f["server"], f["mode"])
    for metric in ("acq_per_s", "handoff_p99_us", "ops_per_s", "p99_us", "server_cpu_ms_per_1k_acq",
                   "server_cpu_ms_per_1k_req"):
        if metric in f:
            runs.setdefault(key + (metric,), []).append(float(f[metric]))
med = {k: statistics.median(v) for k, v in runs.items()}
print("| scenario | metric | tumbler plain | tumbler TLS | TLS/plain | zookeeper plain | zookeeper TLS | TLS/plain | tumbler/zookeeper, TLS |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for (name, server, mode, metric) in sorted(k for k in med if k[1] == "tumbler" and k[2] == "plain"):
    g = lambda s, m: med.get((name, s, m, metric))
    tp, tt, zp, zt = g("tumbler", "plain"), g("tumbler", "tls"), g("zookeeper", "plain"), g("zookeeper", "tls")
    if None in (tp, tt, zp, zt):
        continue
    r = lambda a, b: f"{a / b:.2f}" if b else "-"
    print(f"| {name} | {metric} | {tp:,.0f} | {tt:,.0f} | {r(tt, tp)} | {zp:,.0f} | {zt:,.0f} | {r(zt, zp)} | {r(tt, zt)} |")
PY
