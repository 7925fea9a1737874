#!/usr/bin/env bash
# Builds the Debian packages (tumblerd, tumbler, libtumbler0,
# libtumbler-dev) from the committed tree, as a release is built: first
# installing what that needs, then dpkg-buildpackage in a scratch copy.
# The .deb files (with the .changes and .buildinfo) land in OUTDIR, a
# path from the directory this is run from, or the checkout's packages/
# by default; --install then installs tumblerd and tumbler from them
# (through sudo when not run as root, as deps.sh does):
#   scripts/package.sh [--install] [OUTDIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
install=0
[ "${1:-}" = --install ] && { install=1; shift; }
# Made absolute before the cd below.
out=${1:-$top/packages}
out=$(mkdir -p "$out" && cd "$out" && pwd)
cd "$top"
scripts/deps.sh --package
work=$(mktemp -d "${TMPDIR:-/tmp}/tumbler-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
git archive HEAD | tar -x -C "$work/src"
(cd "$work/src" && dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) ||
    { tail -40 "$work/build.log"; echo "package.sh: dpkg-buildpackage failed" >&2; exit 1; }
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
ls "$out"/*.deb
if [ "$install" = 1 ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null ||
            { echo "package.sh: --install: run as root, or install sudo" >&2; exit 1; }
        sudo="sudo"
    fi
    $sudo apt-get install -y "$out"/tumblerd_*.deb "$out"/tumbler_*.deb
fi
