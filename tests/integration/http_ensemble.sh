#!/usr/bin/env bash
# The ensemble's figures on the HTTP endpoints, on three tumblerd members on
# 127.0.0.1, each with its Prometheus endpoint and AdminServer: the leader's
# /metrics has quorum_size, each follower's lag as a labelled series, and
# promtool takes it; every member shows its role and the same raft term;
# the AdminServer's leader and voting_view commands agree with the
# configuration and with srvr; every member timed its first election
# (election_time); after the leader is killed, a survivor counts a leader
# change and a higher term, and both survivors time one election more.
#   http_ensemble.sh      (TUMBLERD names the server binary)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
it_init
work=$(it_tmpdir work)
passed=0
fail() { echo "FAIL: $*"; exit 1; }
ok() { passed=$((passed + 1)); echo "ok - $* (${SECONDS}s)"; }

ens_init 3
mport=() aport=()
for i in 1 2 3; do mport[$i]=$(free_port) aport[$i]=$(free_port); done
{
    echo "tickTime=1000"
    echo "4lw.commands.whitelist=*"
    echo "metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider"
    echo "metricsProvider.httpHost=127.0.0.1"
    echo "admin.enableServer=true"
    echo "admin.serverAddress=127.0.0.1"
    for i in 1 2 3; do ens_line "$i"; done
} > "$work/zoo.cfg"
for i in 1 2 3; do
    ens_start "$i" "$work/zoo.cfg" --metricsProvider.httpPort="${mport[$i]}" \
        --admin.serverPort="${aport[$i]}"
done

metric() { # I NAME: member I's sample NAME (with its labels), or nothing
    curl -s --max-time 3 "http://127.0.0.1:${mport[$1]}/metrics" |
        awk -v n="$2" '$1 == n { print $2 }'
}
admin() { curl -s --max-time 3 "http://127.0.0.1:${aport[$1]}/commands/$2"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# every member in $@ knows leader $L and has a follower's lag on the leader
settled() {
    local i
    for i in "$@"; do
        [ "$(admin "$i" leader | json "d['leader_id']")" = "$L" ] || return 1
    done
    return 0
}

until_ok 30 find_leader 1 2 3 || fail "no leader"
followers=()
for i in 1 2 3; do [ "$i" = "$L" ] || followers+=("$i"); done
until_ok 15 settled 1 2 3 || fail "members do not agree on leader $L"
ok "leader $L"

curl -s --max-time 3 "http://127.0.0.1:${mport[$L]}/metrics" > "$work/lead.prom"
promtool check metrics < "$work/lead.prom" > "$work/lint" 2>&1
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "promtool: $(cat "$work/lint")"
! grep -v -E '^(znode|watch|ephemerals|open_file_descriptor|max_file_descriptor)_count non-histogram' \
    "$work/lint" | grep -q . || fail "promtool lint: $(cat "$work/lint")"
[ "$(awk '$1 == "quorum_size" { print $2 }' "$work/lead.prom")" = 3 ] || fail "quorum_size"
for name in learners followers; do # ZooKeeper 3.8's name, and 3.4's
    [ "$(awk -v n=$name '$1 == n { print $2 }' "$work/lead.prom")" = 2 ] || fail "$name"
done
[ "$(awk '$1 == "synced_observers" { print $2 }' "$work/lead.prom")" = 0 ] || fail "synced_observers"
for f in "${followers[@]}"; do
    lag=$(awk -v n="tumbler_follower_lag{key=\"server.$f\"}" '$1 == n { print $2 }' "$work/lead.prom")
    [ -n "$lag" ] || fail "no lag for server.$f: $(grep follower_lag "$work/lead.prom")"
done
grep -q '^tumbler_server_state{server_state="leader"} 1$' "$work/lead.prom" || fail "leader's state"
[ "$(metric "${followers[0]}" 'tumbler_server_state{server_state="follower"}')" = 1 ] ||
    fail "follower's state"
term=$(awk '$1 == "tumbler_raft_term" { print $2 }' "$work/lead.prom")
for i in "${followers[@]}"; do
    [ "$(metric "$i" tumbler_raft_term)" = "$term" ] || fail "member $i's term differs from $term"
done
ok "leader's metrics: quorum_size 3, learners 2, both followers' lag, roles, one term ($term)"

[ "$(admin "$L" leader | json "d['is_leader']")" = True ] || fail "leader says is_leader false"
for f in "${followers[@]}"; do
    [ "$(admin "$f" leader | json "d['is_leader'], d['leader_ip']")" = "False 127.0.0.1" ] ||
        fail "follower $f: $(admin "$f" leader)"
done
want="{'1': '127.0.0.1:${qport[1]}:${eport[1]}:participant;127.0.0.1:${cport[1]}', '2': '127.0.0.1:${qport[2]}:${eport[2]}:participant;127.0.0.1:${cport[2]}', '3': '127.0.0.1:${qport[3]}:${eport[3]}:participant;127.0.0.1:${cport[3]}'}"
[ "$(admin 1 voting_view | json "d['current_config']")" = "$want" ] ||
    fail "voting_view: $(admin 1 voting_view)"
[ "$(admin "$L" srvr | json "d['server_stats']['server_state']")" = leader ] || fail "srvr's state"
# the leader's proposal sizes, in ZooKeeper's shape (-1 before the first;
# unit_cluster checks the figures): in both answers, and only the leader's
sizes=$(four_letter "${cport[$L]}" srvr | sed -n 's|^Proposal sizes last/min/max: ||p')
[[ "$sizes" =~ ^-?[0-9]+/-?[0-9]+/-?[0-9]+$ ]] || fail "leader's srvr: proposal sizes '$sizes'"
[ "$(admin "$L" srvr | json "d['proposal_stats']['max_buffer_size']")" -ge "${sizes##*/}" ] ||
    fail "AdminServer srvr: proposal_stats $(admin "$L" srvr)"
! four_letter "${cport[${followers[0]}]}" srvr | grep -q "^Proposal sizes" ||
    fail "a follower's srvr has proposal sizes"
# and mntr's, by ZooKeeper 3.8's names, the leader's alone
mntr_sizes=$(four_letter "${cport[$L]}" mntr |
    awk '$1 ~ /^zk_(last|min|max)_proposal_size$/ { v[$1] = $2 }
         END { print v["zk_last_proposal_size"] "/" v["zk_min_proposal_size"] "/" v["zk_max_proposal_size"] }')
[[ "$mntr_sizes" =~ ^-?[0-9]+/-?[0-9]+/-?[0-9]+$ && "${mntr_sizes##*/}" -ge "${sizes##*/}" ]] ||
    fail "leader's mntr: proposal sizes '$mntr_sizes' (srvr: $sizes)"
! four_letter "${cport[${followers[0]}]}" mntr | grep -q "^zk_max_proposal_size" ||
    fail "a follower's mntr has proposal sizes"
ok "AdminServer: leader, voting_view, srvr; srvr's and mntr's proposal sizes ($sizes)"

# ZooKeeper's election_time: each member timed the election at its start
# (it knew no leader), in ZooKeeper's summary shape
declare -A ecount esum
for i in 1 2 3; do
    ecount[$i]=$(metric "$i" election_time_count) esum[$i]=$(metric "$i" election_time_sum)
    [ "${ecount[$i]:-0}" -ge 1 ] || fail "member $i: election_time_count '${ecount[$i]}'"
    [ "$(metric "$i" 'election_time{quantile="0.5"}')" != NaN ] || fail "member $i: no median"
    curl -s --max-time 3 "http://127.0.0.1:${mport[$i]}/metrics" |
        grep -qx '# TYPE election_time summary' || fail "member $i: election_time's TYPE"
done
ok "election_time on every member: ${ecount[1]}, ${ecount[2]}, ${ecount[3]} election(s)"

s=${followers[0]}
changes=$(metric "$s" tumbler_leader_changes)
kill -KILL "${pid[$L]}"
wait "${pid[$L]}" 2>/dev/null
pid[$L]=0
old=$L
until_ok 30 find_leader "${followers[@]}" || fail "no leader after the kill"
[ "$L" != "$old" ] || fail "the killed member still leads"
more() { [ "$(metric "$s" tumbler_leader_changes)" -gt "$changes" ]; }
until_ok 10 more || fail "member $s counted no leader change ($changes)"
[ "$(metric "$s" tumbler_raft_term)" -gt "$term" ] || fail "term did not rise"
ok "after the leader's kill: member $s counts a leader change, the term rose"

# each survivor timed one election more, from the lost link to the new
# leader named: its count rises and so does its sum
timed() {
    local i=$1
    [ "$(metric "$i" election_time_count)" -gt "${ecount[$i]}" ] &&
        awk -v a="$(metric "$i" election_time_sum)" -v b="${esum[$i]}" 'BEGIN { exit !(a > b) }'
}
for i in "${followers[@]}"; do
    until_ok 10 timed "$i" ||
        fail "member $i: election_time $(metric "$i" election_time_count) / $(metric "$i" election_time_sum) ms after ${ecount[$i]} / ${esum[$i]}"
done
took=()
for i in "${followers[@]}"; do
    took+=("member $i $(awk -v a="$(metric "$i" election_time_sum)" -v b="${esum[$i]}" 'BEGIN { print a - b }') ms")
done
ok "after the kill, both survivors' election_time count and sum rose (${took[*]})"

# how often each of the log's mends of libraft's replication was needed:
# a count on every member
for i in "${followers[@]}"; do
    for k in 1 2 3 4 5 6 7 8 9; do
        v=$(metric "$i" "tumbler_raft_mended_$k")
        [[ "$v" =~ ^[0-9]+$ ]] || fail "member $i: tumbler_raft_mended_$k '$v'"
    done
done
ok "tumbler_raft_mended_1..9 on both survivors"

for i in 1 2 3; do
    [ "${pid[$i]}" = 0 ] && continue
    stop_server "${pid[$i]}" 10
    [ "$STOP_STATUS" = 0 ] || fail "member $i exited $STOP_STATUS"
done
ok "clean stops"
echo "$passed passed, 0 failed"
