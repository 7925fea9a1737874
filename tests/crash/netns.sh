# The network of the partition tests (sourced after lib.sh, with $dir,
# $tumblerd, $writer and $tumbler set, and ns_prefix, ns_servers and
# ns_clients naming this test's namespaces and its two /16s).  It makes,
# at once, a hub namespace with two bridges and four member namespaces,
# each with two veth links to the hub: eth0 on the servers' bridge
# (ns_servers.<net>.I), eth1 on the clients' (ns_clients.<net>.I); <net>
# comes from the test's pid, so two tests apart never share addresses.
# Everything it makes is removed on exit (cleanup, the EXIT trap), and
# what runs in those namespaces killed.  Then the helpers both tests use:
# the servers' srvr, leaders and zxids, writes and their checks, shells.

pfx=$ns_prefix$$ net=$(($$ % 250 + 1))
hub=$pfx-hub
nsn() { echo "$pfx-$1"; }
saddr() { echo "$ns_servers.$net.$1"; } # the servers' side
caddr() { echo "$ns_clients.$net.$1"; } # the clients' side
made=() anomalies=0 faults=0
cleanup() {
    local rc=$? n
    # shellcheck disable=SC2046 # pids, one word each
    crash_kill $(jobs -p)
    # Anything still running in the namespaces this test made is its own.
    # shellcheck disable=SC2046
    for n in "${made[@]}"; do crash_kill $(ip netns pids "$n" 2>/dev/null); done
    for n in "${made[@]}"; do ip netns del "$n" 2>/dev/null || true; done
    if [ "$rc" != 0 ]; then
        for n in 1 2 3 4; do
            [ -f "$dir/s$n.log" ] && { echo "---- server $n"; grep -v 'cannot log a write\|did not complete' "$dir/s$n.log" | tail -25; }
        done
    fi
    if [ "$rc" != 0 ] && [ -n "${KEEP:-}" ]; then
        echo "logs and data kept in $dir"
    else
        rm -rf "$dir"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP
# anomaly TEXT: a check failed; counted, and the run goes on.
anomaly() { echo "ANOMALY: $*"; anomalies=$((anomalies + 1)); }

# ---- the network
mkns() {
    local err
    err=$(ip netns add "$1" 2>&1) ||
        fail "cannot create network namespace $1 ($err): $(basename "$0") needs ip netns (root, a kernel with network namespaces)"
    made+=("$1")
}
mkns "$hub"
ip -n "$hub" link set lo up
for b in 0 1; do
    ip -n "$hub" link add "br$b" type bridge
    ip -n "$hub" link set "br$b" up
done
ip -n "$hub" addr add "$(caddr 254)/24" dev br1
for i in 1 2 3 4; do
    mkns "$(nsn "$i")"
    ip -n "$(nsn "$i")" link set lo up
    # s$i: the servers' bridge, eth0 inside; c$i: the clients', eth1.
    for b in 0 1; do
        p=$([ "$b" = 0 ] && echo s || echo c)$i
        ip -n "$hub" link add "$p" type veth peer name "eth$b" netns "$(nsn "$i")" ||
            fail "cannot make a veth pair into namespace $(nsn "$i")"
        ip -n "$hub" link set "$p" master "br$b" up
        ip -n "$(nsn "$i")" link set "eth$b" up
    done
    ip -n "$(nsn "$i")" addr add "$(saddr "$i")/24" dev eth0
    ip -n "$(nsn "$i")" addr add "$(caddr "$i")/24" dev eth1
done
# cut_off I / heal I: server I's port on the servers' bridge down / up, said
# with the time (UTC, as the servers' logs).
cut_off() {
    ip -n "$hub" link set "s$1" down
    faults=$((faults + 1))
    echo "  $(date -u +%T.%3N) server $1 cut off"
}
heal() { ip -n "$hub" link set "s$1" up; echo "  $(date -u +%T.%3N) server $1 back"; }
hubx() { ip netns exec "$hub" "$@"; }
now_ms() { date +%s%3N; }

show() {
    local i
    for i in "$@"; do echo "  server $i: $(srvr "$i" | grep -E '^(Mode|Zxid)|not currently' | tr '\n' ' ')"; done
}
hosts() { local i h=""; for i in "$@"; do h+="${h:+,}$(caddr "$i"):2181"; done; echo "$h"; }
srvr() { printf srvr | hubx timeout 5 nc -N "$(caddr "$1")" 2181 2>/dev/null || true; }
mode() { srvr "$1" | sed -n 's/^Mode: //p'; }
zxid() { srvr "$1" | sed -n 's/^Zxid: //p'; }
# finish PID S: our child PID ends by itself within S seconds, or is killed
# (and "killed" printed).
finish() {
    local p=$1 t=$(($2 * 10))
    while kill -0 "$p" 2>/dev/null && [ "$t" -gt 0 ]; do sleep 0.1; t=$((t - 1)); done
    if kill -0 "$p" 2>/dev/null; then kill -9 "$p" 2>/dev/null || true; echo killed; fi
    wait "$p" 2>/dev/null || true
}
# settled "I J ...": within 20 s, exactly one of them says leader and the
# others follower; prints the leader.
settled() {
    local i l n end=$(($(now_ms) + 20000))
    while [ "$(now_ms)" -lt "$end" ]; do
        l="" n=0
        for i in $1; do
            case $(mode "$i") in
                leader) l=$i n=$((n + 1)) ;;
                follower) ;;
                *) n=99 ;;
            esac
        done
        [ "$n" = 1 ] && { echo "$l"; return 0; }
        sleep 0.1
    done
    { echo "FAIL: servers $1 did not settle on one leader within 20 s:"; show $1; } >&2
    return 1
}
# converged MS: within MS, each of the three at or past the highest zxid
# any had when this began (the workloads keep writing: the three are at one
# zxid only by chance); prints that zxid.
converged() {
    local i z top=0 end=$(($(now_ms) + $1))
    for i in $members; do
        z=$(zxid "$i")
        [ -n "$z" ] && [ $((z)) -gt "$top" ] && top=$((z))
    done
    for i in $members; do
        until z=$(zxid "$i"); [ -n "$z" ] && [ $((z)) -ge "$top" ]; do
            [ "$(now_ms)" -lt "$end" ] || return 1
            sleep 0.1
        done
    done
    printf '0x%x\n' "$top"
}
# write WHERE PREFIX N: N creates from the hub through the servers WHERE
# (a list), every acknowledged path appended to $dir/acked; all N must be.
write() {
    local got
    hubx "$writer" write "$(hosts $1)" "$2" "$3" >"$dir/w.out" 2>"$dir/w.err" || true
    cat "$dir/w.out" >>"$dir/acked"
    got=$(grep -c . "$dir/w.out" || true)
    [ "$got" = "$3" ] ||
        fail "$2: $got of $3 writes through servers $1 acknowledged: $(cat "$dir/w.err")"
}
# present I < PATHS: how many of PATHS server I has.
present() {
    local out
    out=$(hubx "$writer" verify "$(caddr "$1"):2181" || true)
    echo "$out" | sed -n 's/^verified \([0-9]*\) acknowledged writes, \([0-9]*\) missing$/\1 \2/p' |
        awk '{ print $1 - $2 }'
}
# server_of PID: the server our client PID (or its child: hubx runs in a
# subshell) is connected to.
server_of() {
    local p
    for p in "$1" $(pgrep -P "$1"); do
        hubx ss -tnpH state established '( dport = :2181 )' |
            sed -nE "/pid=$p,/s/.*\.([0-9]+):2181 .*/\1/p"
    done | head -n1
}
# moved NAME PATH: the shell's session, its server gone, goes on elsewhere:
# a create of PATH, sent again until acknowledged (within 20 s); 1 if
# it never was (an anomaly).
moved() {
    local name=$1 path=$2 end=$(($(now_ms) + 20000))
    until grep -qx "Created $path" "$dir/$name.out"; do
        [ "$(now_ms)" -lt "$end" ] || {
            anomaly "the session of $name did not move to another server within 20 s: $(tail -3 "$dir/$name.err")"
            return 1
        }
        shell "$name" "create $path x"
        sleep 0.5
    done
    echo "$path" >>"$dir/acked"
}
# shell NAME COMMAND...: one command line to the shell.
shell() { local name=$1; shift; echo "$*" >&"${shfd[$name]}"; }
# shell_close NAME [S]: its input closed, what it has left fails or runs
# at once (killed if not within S seconds, default 10).
shell_close() {
    local fd=${shfd[$1]}
    exec {fd}>&-
    finish "${shpid[$1]}" "${2:-10}" >/dev/null
}
# shell_open NAME I [pinned]: a tumbler shell from the hub (one session),
# its commands fed through a fifo, its session open on server I when this
# returns; on $members (reopened until its session starts on I), or on I
# alone if pinned.
declare -A shpid shfd
shell_open() {
    local name=$1 i=$2 end fd
    for _ in $(seq 20); do
        rm -f "$dir/$name.in"
        mkfifo "$dir/$name.in"
        # shellcheck disable=SC2086
        hubx "$tumbler" -s "$(if [ -n "${3:-}" ]; then hosts "$i"; else hosts $members; fi)" \
            --session-timeout 10 <"$dir/$name.in" >"$dir/$name.out" 2>"$dir/$name.err" &
        shpid[$name]=$!
        exec {fd}>"$dir/$name.in"
        shfd[$name]=$fd
        echo "stat /" >&"$fd"
        end=$(($(now_ms) + 10000))
        until grep -q '^cZxid' "$dir/$name.out"; do
            [ "$(now_ms)" -lt "$end" ] || fail "no session: $(cat "$dir/$name.err")"
            sleep 0.05
        done
        [ -n "${3:-}" ] && return 0
        [ "$(server_of "${shpid[$name]}")" = "$i" ] && return 0
        shell_close "$name"
    done
    fail "the shell's session never started on server $i"
}
