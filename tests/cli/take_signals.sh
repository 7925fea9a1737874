#!/usr/bin/env bash
# tumbler queue take interrupted twice (SIGINT, then SIGTERM at once):
# every item is either printed by a take or still in the queue, never
# deleted and dropped.  First with the server's answers held up 0.3 s by
# a proxy, the two signals sent just after the taker's delete removed the
# item on the server and before its answer came back: the take must wait
# for it and print the item.  Then a storm: takers interrupted at random
# moments while items are put, both layouts, every item accounted for
# exactly once.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
srv_start
D=$T_DIR

# What the server sends, held up 0.3 s (PROXY).
proxy_start 0.3

# watches: how many watches the server holds, child watches included (mntr's zk_watch_count;
# wchs counts data watches only, as ZooKeeper's does).
watches()
{
    # shellcheck disable=SC2016  # the inner shell's $0
    timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" && printf mntr >&3 && cat <&3' \
        "$SRV_PORT" 2>/dev/null | sed -n 's/^zk_watch_count\t\([0-9]*\)$/\1/p'
}
watching() { [ "$(watches)" -ge 1 ]; }
gone() { [ -z "$("$TUMBLER" queue ls /qd)" ]; }

# ---- two signals while the delete's answer is on its way ----
for i in 1 2; do
    rm -f "$D/take.pid"
    bgp 30 "$D/take.pid" "$TUMBLER" -s "$PROXY" queue take /qd > "$D/slow.$i" 2> "$D/slow.err.$i"
    job=$BG_PID
    pid=$(pid_in "$D/take.pid")
    wait_for 10 watching || fail "round $i: the taker never waited"
    tb queue put /qd "slow$i" > /dev/null
    # Deleted on the server: the taker has the item, its answer 0.3 s away.
    wait_for 10 gone || fail "round $i: the item was never taken"
    kill -INT "$pid"; kill -TERM "$pid"
    wait_st "$job"
    check_eq "round $i: the item deleted is printed" "slow$i" "$(cat "$D/slow.$i")"
    check_eq "round $i: status 0 (an item was taken)" 0 "$ST"
    wait_for 10 test "$(watches)" = 0
done

# ---- a storm: takers interrupted at random while items are put ----
for l in "" -l; do
    q=/qs$l
    # shellcheck disable=SC2016  # the inner shell's variables
    bg 60 sh -c 'i=0; while [ $i -lt 40 ]; do i=$((i + 1))
        "$0" queue $1 put "$2" "item$i" > /dev/null || exit 1; sleep 0.02; done' \
        "$TUMBLER" "$l" "$q"
    putter=$BG_PID
    n=0
    while kill -0 "$putter" 2>/dev/null && [ $n -lt 200 ]; do
        n=$((n + 1))
        rm -f "$D/take.pid"
        bgp 30 "$D/take.pid" "$TUMBLER" queue $l take "$q" > "$D/storm$l.$n" 2> /dev/null
        job=$BG_PID
        pid=$(pid_in "$D/take.pid")
        sleep "0.0$((RANDOM % 4))$((RANDOM % 10))"
        kill -INT "$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null
        wait "$job"
    done
    wait_st "$putter"
    check_eq "queue $l storm: all 40 put" 0 "$ST"
    cat "$D"/storm"$l".* > "$D/taken$l"
    tb queue $l ls "$q" | awk '{ print $NF }' > "$D/left$l"
    check_eq "queue $l storm: each item taken or left, exactly once ($n takers)" \
        "$(seq 1 40 | sed 's/^/item/' | sort)" "$(sort "$D/taken$l" "$D/left$l")"
done
t_end
