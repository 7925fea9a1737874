#!/usr/bin/env bash
# The Debian packages as an operator meets them (ctest package; root, as in
# CI): built from the committed tree by scripts/package.sh, checked by
# lintian, installed with apt-get, then
#   files.sh   every file where its package says, the user and directories
#   units.sh   systemd-analyze verify, both units hardened alike
#   dev.sh     a C program built against libtumbler-dev by pkg-config alone
#   serve.sh   the unit's ExecStart as user tumbler serves zoo.cfg (to that
#              program too), data under /var/lib/tumbler, logFile rotated
#              by the logrotate snippet, a clean stop on SIGTERM
#   man.sh     the man pages render and hold every key and command of --help
#   purge.sh   purging removes config and logs, keeps the data unless asked
# and the packages are purged again, whatever happened.
# It purges the packages and deletes /etc/tumbler, /var/log/tumbler and
# /var/lib/tumbler (every member's data), so on a machine where Tumbler is
# installed, or has left any of these, it skips (exit 77) and changes
# nothing.  TUMBLER_PACKAGE_TEST_REPLACES_INSTALL=yes runs it there anyway,
# and that install and its data are lost.
#   run.sh SOURCE_DIR
set -euo pipefail
src=$1 here=$(cd "$(dirname "$0")" && pwd)
pkgs=(tumblerd tumbler libtumbler0 libtumbler-dev)
dirs=(/etc/tumbler /var/lib/tumbler /var/log/tumbler)

fail() { echo "package: $*" >&2; exit 1; }

# installed: prints each of pkgs that dpkg holds here in any state: ii, rc
# (its config files left), ...; un and pn mean nothing of it is here.
installed() {
    local p
    for p in "${pkgs[@]}"; do
        case $(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null) in
        "" | u* | p*) ;;
        *) echo "$p" ;;
        esac
    done
}

# Before anything else: what is here may be an operator's.
found=()
mapfile -t found < <(installed)
for d in "${dirs[@]}"; do [ ! -e "$d" ] || found+=("$d"); done
if [ ${#found[@]} -gt 0 ] && [ "${TUMBLER_PACKAGE_TEST_REPLACES_INSTALL:-}" != yes ]; then
    echo "package: skipped: Tumbler's packages or files are here (${found[*]})," \
         "which the test would purge and delete, data included;" \
         "TUMBLER_PACKAGE_TEST_REPLACES_INSTALL=yes runs it anyway" >&2
    exit 77
fi
# Nothing was here: whatever is left at the end is this test's own.
fresh=0
[ ${#found[@]} -gt 0 ] || fresh=1

[ "$(id -u)" = 0 ] || fail "must run as root (apt-get install, user tumbler)"
for c in git dpkg-buildpackage dh lintian apt-get systemd-analyze man \
         setpriv unshare ip cc pkg-config readelf logrotate; do
    command -v "$c" >/dev/null ||
        fail "'$c' not found (scripts/deps.sh --test installs it)"
done

tmp=$(mktemp -d /tmp/tb-package.XXXXXX)
export TB_PKG_TMP=$tmp
purge_all() {
    local p=()
    mapfile -t p < <(installed)
    [ ${#p[@]} -eq 0 ] ||
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${p[@]}" >/dev/null
}
# On a machine that had none of it, a run that stopped half way leaves
# nothing either (its data included): else the next run would skip.
cleanup() {
    [ -f "$tmp/pid" ] && kill -KILL "$(cat "$tmp/pid")" 2>/dev/null || true
    if [ "$fresh" = 1 ]; then
        TUMBLER_PURGE_DATA=yes purge_all || true
        rm -rf "${dirs[@]}"
    else
        purge_all || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# README's way: scripts/package.sh builds the committed tree (a shared
# checkout's work in progress is not packaged); the debs land in $tmp.
echo "== scripts/package.sh"
"$src/scripts/package.sh" "$tmp" >"$tmp/build.log" 2>&1 ||
    { tail -40 "$tmp/build.log"; fail "scripts/package.sh failed"; }

# Errors and warnings fail; what remains is explained in debian/*overrides.
echo "== lintian"
lintian --fail-on error,warning "$tmp"/tumbler_*.changes ||
    fail "lintian found errors or warnings (above)"

echo "== apt-get install"
purge_all
debs=()
for p in "${pkgs[@]}"; do debs+=("$tmp/${p}_"*.deb); done
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${debs[@]}" >"$tmp/apt.log" 2>&1 ||
    { cat "$tmp/apt.log"; fail "apt-get install of the packages failed"; }
# Where systemd runs, the package started the service: the checks run
# tumblerd themselves.
[ -d /run/systemd/system ] && systemctl stop tumblerd

for t in files units dev serve man purge; do
    echo "== $t"
    bash "$here/$t.sh" "$src" || fail "$t.sh failed"
done
echo "package: all checks passed"
