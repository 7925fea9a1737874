#!/usr/bin/env bash
# Path operands: every command checks its PATH by ZooKeeper's rules before
# it connects, and refuses a bad one with 64 and a message naming the
# path and the rule it breaks (not the library's 8, nor a recipe's 70);
# a recipe's PATH cannot be the root.  Nothing is made, no CMD runs.  The
# paths ZooKeeper takes still work: a sequential create under
# "/parent/", a lock on a valid path.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
srv_start
D=$T_DIR

# BAD-PATH REASON: each path with the message that must name it.
bad=(
    "relative|is not an absolute path"
    "no/slash|is not an absolute path"
    "/a/|ends with '/'"
    "//a|has an empty component"
    "/a//b|has an empty component"
    "/a/./b|has a '.' component"
    "/a/..|has a '..' component"
    "/.|has a '.' component"
    "/a$(printf '\001')b|has a character a path may not have"
)
# A sample of the commands, P standing for the path: the tree's, the
# locks' and the other recipes', read-only and writing ones.
cmds=(
    "get P" "ls P" "stat P" "create P x" "create -s P x" "set P x" "delete P"
    "deleteall P" "setacl P world:anyone:r" "watch -c 1 P" "getEphemerals P"
    "setquota -n 5 P" "locks P" "check-token P 5" "top -b -n 1 P"
    "lock P -- touch $D/ran" "lock -s P -- touch $D/ran"
    "lock --semaphore 2 P -- touch $D/ran" "lock --non-fair P -- touch $D/ran"
    "lock P" "elect P -- touch $D/ran" "elect --non-fair P -- touch $D/ran"
    "elect -l P"
    "queue put P x" "queue -l put P x" "queue take -w 0 P" "queue peek P"
    "queue -l ls P" "counter get P" "counter add P 2" "barrier set P"
    "barrier -w 0 wait P" "barrier -e 2 -w 0 P -- touch $D/ran"
)

# run SERVERS CMD PATH: the command with P replaced by PATH, its stderr in
# $D/err, its status in ST.
run()
{
    local servers=$1 cmd=$2 path=$3 words w args=()
    read -ra words <<< "$cmd"
    for w in "${words[@]}"; do
        if [ "$w" = P ]; then args+=("$path"); else args+=("$w"); fi
    done
    TUMBLER_SERVERS=$servers timeout -k 5 20 "$TUMBLER" --connect-timeout 2 "${args[@]}" \
        > /dev/null 2> "$D/err" < /dev/null
    ST=$?
}

# Checked before any connection: no server is needed to refuse them (port
# 1 has none: a connection would give 69).
for c in "${cmds[@]}"; do
    for b in "${bad[@]}"; do
        path=${b%%|*} why=${b#*|}
        # ZooKeeper's own exception: the server's suffix completes it.
        [ "$c $path" != "create -s P x /a/" ] || continue
        run 127.0.0.1:1 "$c" "$path"
        check_eq "$c, '$path': 64" 64 "$ST"
        check_match "$c, '$path': says which and why" "'$path' $why" "$(cat "$D/err")"
    done
done

# Against the server, the paths that went as far as the library or the
# recipe before (70 and 8) and the root for a recipe: 64, nothing made,
# no CMD run.
before=$(tb ls -R /)
for c in "lock P -- touch $D/ran" "lock --non-fair P -- touch $D/ran" \
         "elect P -- touch $D/ran" "queue put P x" "queue peek P" "counter add P 2" \
         "barrier set P" "get P" "create P x" "locks P"; do
    for path in /q/ //q /q/. /q/..; do
        run "$TUMBLER_SERVERS" "$c" "$path"
        check_eq "$c, '$path', with a server: 64" 64 "$ST"
    done
done
for c in "lock P -- touch $D/ran" "lock --semaphore 2 P -- touch $D/ran" \
         "elect P -- touch $D/ran" "queue put P x" "queue ls P" "counter get P" \
         "barrier set P" "barrier -e 2 -w 0 P -- touch $D/ran"; do
    run "$TUMBLER_SERVERS" "$c" /
    check_eq "$c, '/': 64" 64 "$ST"
    check_match "$c, '/': says why" "'/' is the root: .* needs a path below it" "$(cat "$D/err")"
done
check_eq "no CMD ran" no "$([ -e "$D/ran" ] && echo yes || echo no)"
check_eq "nothing made" "$before" "$(tb ls -R /)"

# What ZooKeeper takes still goes through.
tb create /jobs "" > /dev/null
check_eq "create -s under '/jobs/'" "Created /jobs/0000000000" "$(tb create -s /jobs/ x)"
check_eq "create -s '/jobs/job-'" "Created /jobs/job-0000000001" "$(tb create -s /jobs/job- x)"
check_eq "a name with dots" "Created /jobs/..a" "$(tb create /jobs/..a x)"
# Under a PATH of 1212 bytes (ZooKeeper sets paths no short limit): the
# name created, whole.
long=$(printf '/%0100d' $(seq 1 12))
tb create -p "$long" "" > /dev/null
check_eq "create -s under a long PATH: the name whole" "Created $long/job-0000000000" \
    "$(tb create -s "$long/job-" x)"
check_eq "create -s --json under a long PATH: the path whole" "$long/job-0000000001" \
    "$(tb --json create -s "$long/job-" x | json_get 'd["path"]')"
check_eq "create -s under a long PATH ending with '/'" "Created $long/0000000002" \
    "$(tb create -s "$long/" x)"
check_eq "a lock on a valid path" ran "$(tb lock /locks/a.b -- echo ran)"
check_eq "ls / (the root is a path)" zookeeper "$(tb ls / | grep zookeeper)"
check_eq "locks / reads" 0 "$(tb locks / > /dev/null; echo $?)"
t_end
