#!/usr/bin/env bash
# tumbler check-token, counter, queue and barrier: the recipes beyond the
# lock, each through the tool.  check-token says current for a running
# lock's TUMBLER_LOCK_TOKEN and stale once it is released; counter adds
# from 4 processes at once lose nothing; queue items come out by
# priority, then in order, each to one of 3 racing takers; a barrier
# holds its waiter until removed; a double barrier of 3 starts no CMD
# before the third arrives; lock --lock-delay hands over at once after a
# clean release, and only after the delay once a holder was killed.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
srv_start
D=$T_DIR

# ---- check-token ----
bg 60 "$TUMBLER" lock /tok -- sh -c \
    'echo "$TUMBLER_LOCK_TOKEN" > "$0/token"; while [ ! -e "$0/go" ]; do sleep 0.05; done' "$D"
job=$BG_PID
wait_for 10 test -s "$D/token"
token=$(cat "$D/token")
check_eq "the holder's token is current" current "$(tb check-token /tok "$token")"
tb check-token /tok $((token + 1)) > /dev/null; check_eq "another token: 1" 1 "$?"
touch "$D/go"
wait_st "$job"
check_eq "lock released" 0 "$ST"
check_eq "a released holder's token is stale" stale "$(tb check-token /tok "$token")"
tb check-token /tok "$token" > /dev/null; check_eq "stale: 1" 1 "$?"
check_eq "json" False "$(tb --json check-token /tok "$token" | json_get 'd["current"]')"
tb check-token /tok x 2>/dev/null; check_eq "bad token: 64" 64 "$?"

# ---- counter ----
check_eq "a missing counter is 0" 0 "$(tb counter get /ctr/n)"
check_eq "add prints the value written" 5 "$(tb counter add /ctr/n 5)"
check_eq "add 1 by default" 6 "$(tb counter add /ctr/n)"
check_eq "set (a negative value after --)" -3 "$(tb counter set /ctr/n -- -3)"
pids=()
for w in 1 2 3 4; do
    bg 60 sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do "$0" counter add /ctr/n > /dev/null || exit 1; done' "$TUMBLER"
    pids+=("$BG_PID")
done
for p in "${pids[@]}"; do wait_st "$p"; check_eq "adder" 0 "$ST"; done
check_eq "40 adds at once from -3: none lost" 37 "$(tb counter get /ctr/n)"
check_eq "json" 37 "$(tb --json counter get /ctr/n | json_get 'd["value"]')"
tb create /ctr/text hello > /dev/null
tb counter get /ctr/text 2>/dev/null; check_eq "not a counter: 3 (data inconsistency)" 3 "$?"

# ---- queue ----
for l in "" -l; do
    tb queue $l put /q$l a > /dev/null
    tb queue $l put /q$l b > /dev/null
    tb queue $l put -p 5 /q$l urgent > /dev/null
    check_eq "queue $l: peek shows the urgent item" urgent "$(tb queue $l peek /q$l)"
    check_eq "queue $l: ls in take order" "urgent a b" \
        "$(tb queue $l ls /q$l | awk '{ print $2 }' | xargs)"
    check_eq "queue $l: take by priority" urgent "$(tb queue $l take /q$l)"
    check_eq "queue $l: then in order" a "$(tb queue $l take /q$l)"
    check_eq "queue $l: json" b "$(tb --json queue $l take /q$l | json_get 'd["data"]')"
    tb queue $l take -w 0.2 /q$l 2>/dev/null; check_eq "queue $l: empty: 1" 1 "$?"
done
# A PATH of 1212 bytes (ZooKeeper sets paths no short limit): the items
# are read under it, not under a cut path.
long=$(printf '/%0100d' $(seq 1 12))
for l in "" -l; do
    tb queue $l put "$long$l" first > /dev/null
    check_eq "queue $l, a long PATH: peek" first "$(tb queue $l peek "$long$l" 2>&1)"
    check_eq "queue $l, a long PATH: ls" first \
        "$(tb queue $l ls "$long$l" 2>&1 | awk '{ print $2 }')"
    check_eq "queue $l, a long PATH: ls --json" first \
        "$(tb --json queue $l ls "$long$l" | json_get 'd["items"][0]["data"]' 2>&1)"
    check_eq "queue $l, a long PATH: take" first "$(tb queue $l take -w 5 "$long$l" 2>&1)"
done
# An item claimed (its name under taken/, as a locking take claims it):
# marked by ls and passed over by peek, under the long PATH too.
tb queue -l put "$long-l" a > /dev/null
tb queue -l put "$long-l" b > /dev/null
first=$(tb queue -l ls "$long-l" | awk 'NR == 1 { print $1 }')
tb create -p "$long-l/taken/$first" x > /dev/null
check_eq "queue -l, a long PATH: ls marks the claimed item" "$first (taken) a" \
    "$(tb queue -l ls "$long-l" | sed -n 1p)"
check_eq "queue -l, a long PATH: peek passes it over" b "$(tb queue -l peek "$long-l" 2>&1)"
# ls prints one line per item, whatever its bytes: no byte that drives the
# terminal (an escape, a newline, NUL: '?' each, as locks shows an owner).
tb queue put /qx "$(printf 'red \033[31mX\nnext')" > /dev/null
printf 'a\000b' > "$T_DIR/nul"
tb create -f "$T_DIR/nul" "/qx/entry-100-$(printf '%010d' 9)" > /dev/null
out=$(tb queue ls /qx)
check_eq "queue ls: one line per item" 2 "$(printf '%s\n' "$out" | wc -l)"
check_match "queue ls: control bytes as '?'" "^entry-100-0000000000 red \?\[31mX\?next$" "$out"
check_match "queue ls: NUL as '?', the rest after it" "^entry-100-0000000009 a\?b$" "$out"
if printf '%s' "$out" | grep -q "$(printf '\033')"; then fail "queue ls: an escape byte on stdout"
else ok "queue ls: no escape byte"; fi
# A waiting take gets a later put; 3 takers race over 30 items.
bg 30 "$TUMBLER" queue take /qw
job=$BG_PID
sleep 0.3
tb queue put /qw late > /dev/null
wait_st "$job"
check_eq "a waiting take gets a later put" 0 "$ST"
pids=()
for w in 1 2 3; do
    bg 60 sh -c 'while x=$("$0" queue take -w 2 /qr); do echo "$x"; done > "$1/taken.$2"' \
        "$TUMBLER" "$D" "$w"
    pids+=("$BG_PID")
done
for i in $(seq 1 30); do tb queue put /qr "item$i" > /dev/null; done
for p in "${pids[@]}"; do wait_st "$p"; done
check_eq "30 items, each taken once" 30 "$(cat "$D"/taken.* | sort -u | wc -l)"
check_eq "and none twice" 30 "$(cat "$D"/taken.* | wc -l)"
# Reading a queue, or any recipe, that does not exist makes nothing: it
# is a missing node (101), as get says, not an empty queue (1).
before=$(tb ls -R /)
for l in "" -l; do
    tb queue $l peek /typo$l > "$D/peek.out" 2> "$D/peek.err"
    check_eq "queue $l peek, missing: 101" 101 "$?"
    check_match "queue $l peek, missing: said" \
        "^tumbler: queue /typo$l(/entries)?: node does not exist \(ENONODE\)$" \
        "$(cat "$D/peek.err")"
    check_eq "queue $l peek, missing: nothing printed" "" "$(cat "$D/peek.out")"
    tb queue $l ls /typo$l > /dev/null 2>&1; check_eq "queue $l ls, missing: 101" 101 "$?"
done
tb counter get /typo/n > /dev/null
tb check-token /typo/lk 5 > /dev/null
tb locks /typo/lk > /dev/null
tb barrier -w 0 /typo/bar > /dev/null
bg 10 "$TUMBLER" elect -l /typo/el > /dev/null
sleep 0.3; kill "$BG_PID"; wait "$BG_PID"
tb stat /typo > /dev/null 2>&1; check_eq "no /typo made" 101 "$?"
check_eq "the tree is as it was" "$before" "$(tb ls -R /)"
tb queue put /qe x > /dev/null; tb queue take /qe > /dev/null
tb queue peek /qe 2> "$D/peek.err"; check_eq "queue peek, empty: 1" 1 "$?"
check_eq "queue peek, empty: said" "tumbler: queue /qe: empty" "$(cat "$D/peek.err")"
# An item this session may not read is no item taken meanwhile: ls ends
# there with its error (102, not 0), the items before it listed, as ls -R.
tb queue put /qn one > /dev/null; tb queue put /qn two > /dev/null
first=$(tb queue ls /qn | awk 'NR == 1 { print $1 }')
second=$(tb queue ls /qn | awk 'NR == 2 { print $1 }')
tb setacl "/qn/$second" world:anyone:cdwa
out=$(tb queue ls /qn 2> "$D/qn.err"); rc=$?
check_eq "queue ls, an item it may not read: 102" 102 "$rc"
check_eq "queue ls, an item it may not read: the one before it" "$first one" "$out"
check_eq "queue ls, an item it may not read: said" \
    "tumbler: queue /qn/$second: not authorized (ENOAUTH)" "$(cat "$D/qn.err")"
j=$(tb --json queue ls /qn 2> /dev/null); rc=$?
check_eq "queue ls --json, an item it may not read: 102" 102 "$rc"
check_eq "queue ls --json: the items so far, then the error" "['one'] ENOAUTH /qn/$second" \
    "$(json_get '"%s %s %s" % ([i["data"] for i in d["items"]], d["error"]["name"], d["error"]["path"])' <<< "$j")"
# -l: claims it may not read would show a claimed item as free.
tb queue -l put /qln x > /dev/null
tb setacl /qln/taken world:anyone:cdwa
tb queue -l ls /qln > /dev/null 2> "$D/qln.err"
check_eq "queue -l ls, taken/ it may not read: 102" 102 "$?"
check_eq "queue -l ls, taken/ it may not read: said" \
    "tumbler: queue /qln/taken: not authorized (ENOAUTH)" "$(cat "$D/qln.err")"
tb queue -l peek /qln > /dev/null 2>&1
check_eq "queue -l peek, taken/ it may not read: 102" 102 "$?"

# ---- barrier ----
tb barrier set /bar > /dev/null
tb barrier -w 0.2 /bar 2>/dev/null; check_eq "a set barrier holds: 1" 1 "$?"
bg 30 "$TUMBLER" barrier /bar
job=$BG_PID
sleep 0.3
kill -0 "$job" 2>/dev/null; check_eq "the waiter waits" 0 "$?"
tb barrier remove /bar > /dev/null
wait_st "$job"
check_eq "removed: the waiter passes" 0 "$ST"
tb barrier remove /bar > /dev/null; check_eq "remove again: 0" 0 "$?"
# A double barrier of 3: no CMD starts before the third arrives; each
# exits with its CMD's status once all left.
pids=()
for w in 1 2; do
    bg 60 "$TUMBLER" barrier -e 3 /dbar -- sh -c 'touch "$0/in.$1"; exit 7' "$D" "$w"
    pids+=("$BG_PID")
done
wait_for 10 test "$(tb ls /dbar 2>/dev/null | wc -l)" = 2
sleep 0.3
check_eq "no CMD with 2 of 3" "" "$(ls "$D" | grep '^in\.')"
bg 60 "$TUMBLER" barrier -e 3 /dbar -- sh -c 'touch "$0/in.3"' "$D"
pids+=("$BG_PID")
for p in "${pids[@]}"; do wait_st "$p"; done
check_eq "all three ran" "in.1 in.2 in.3" "$(ls "$D" | grep '^in\.' | xargs)"
check_eq "the last exits with its CMD's status" 0 "$ST"
wait_for 10 test "$(tb ls /dbar 2>/dev/null | wc -l)" = 0
check_eq "nothing left in the double barrier" 0 "$(tb ls /dbar 2>/dev/null | wc -l)"
tb barrier -e 3 -w 0.3 /dbar2 -- true 2>/dev/null; check_eq "alone, -w: 1" 1 "$?"
# CMD's TUMBLER_BARRIER_PATH is the whole PATH, however long (1212 bytes).
long=$(printf '/%0100d' $(seq 1 12))
# shellcheck disable=SC2016 # expanded by CMD's shell
check_eq "a long PATH: TUMBLER_BARRIER_PATH whole" "$long" \
    "$(tb barrier -e 1 "$long" -- sh -c 'printf %s "$TUMBLER_BARRIER_PATH"')"
tb barrier bogus /x 2>/dev/null; check_eq "bad action: 64" 64 "$?"
# A member count beyond the recipe's int is refused, not cut to 1 or < 0.
tb barrier -e 4294967297 -w 0.3 /dbar3 -- echo ran > "$D/big" 2> "$D/big.err"
check_eq "-e 2^32+1: 64" 64 "$?"
check_eq "-e 2^32+1: CMD never ran" "" "$(cat "$D/big")"
check_match "-e 2^32+1: said" "bad member count '4294967297'" "$(cat "$D/big.err")"
tb barrier -e 2147483648 -w 0.3 /dbar3 -- true 2>/dev/null
check_eq "-e 2^31: 64" 64 "$?"

# ---- lock --lock-delay ----
tb lock --lock-delay 1 -s /ldx -- true 2>/dev/null; check_eq "--lock-delay with -s: 64" 64 "$?"
# A clean release hands over at once ...
tb lock --lock-delay 5 /ld -- true; check_eq "first holder" 0 "$?"
t0=$(date +%s%3N)
tb lock --lock-delay 5 /ld -- true; check_eq "after a clean release" 0 "$?"
took=$(( $(date +%s%3N) - t0 ))
[ "$took" -lt 2500 ] && ok "at once ($took ms)" || fail "a clean release delayed the next: $took ms"
# ... a holder killed with kill -9 delays the next until its session
# expired (4 s) and the delay (2 s) passed.
bgp 60 "$D/ldh.pid" "$TUMBLER" --session-timeout 4 lock --lock-delay 2 /ld2 -- sleep 60
wait_for 10 test "$(tb ls /ld2 2>/dev/null | wc -l)" = 1
bg 60 "$TUMBLER" lock --lock-delay 2 /ld2 -- sh -c 'date +%s%3N > "$0/ld2.at"' "$D"
job=$BG_PID
wait_for 10 test "$(tb ls /ld2 2>/dev/null | wc -l)" = 2
killed=$(date +%s%3N)
kill -KILL "$(pid_in "$D/ldh.pid")"
wait_st "$job"
check_eq "the waiter ran" 0 "$ST"
after=$(( $(cat "$D/ld2.at") - killed ))
[ "$after" -ge 4500 ] && ok "granted $after ms after the kill" ||
    fail "granted $after ms after the kill, before expiry + delay"
t_end
