# shellcheck shell=bash
# The start of the CLI tests run against either server kind, called as
# SCRIPT KIND TUMBLER (top_batch.sh, status.sh, reconfig.sh), sourced with
# `here` set to this folder: KIND ("tumblerd", with TUMBLERD in the
# environment, or "zk") and TUMBLER, the tool under test, read;
# tests/integration/lib.sh's helpers and cleanup; and the checks: a failed
# check is counted in FAILS and the script goes on.
# shellcheck source=../integration/lib.sh disable=SC2154 # here is the caller's
source "$here/../integration/lib.sh"
kind=${1:?usage: $0 KIND TUMBLER}
TUMBLER=${2:?usage: $0 KIND TUMBLER}
it_init
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
check_eq() { [ "$2" = "$3" ] || fail "$1: expected [$2], got [$3]"; }
check_match() { printf '%s\n' "$3" | grep -Eq -- "$2" || fail "$1: [$3] does not match /$2/"; }
tb() { timeout -k 5 30 "$TUMBLER" "$@"; }
