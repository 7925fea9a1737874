# shellcheck shell=bash
# The checks of the CLI tests run against either server kind (top_batch.sh,
# status.sh; sourced after tests/integration/lib.sh): a failed check is
# counted in FAILS and the script goes on; TUMBLER is the tool under test.
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
check_eq() { [ "$2" = "$3" ] || fail "$1: expected [$2], got [$3]"; }
check_match() { printf '%s\n' "$3" | grep -Eq -- "$2" || fail "$1: [$3] does not match /$2/"; }
tb() { timeout -k 5 30 "$TUMBLER" "$@"; }
