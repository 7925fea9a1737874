#!/usr/bin/env bash
# Installs what building and testing Tumbler needs, from Debian 12's packages.
#   scripts/deps.sh          build dependencies only
#   scripts/deps.sh --package  also what builds the Debian packages
#                            (scripts/package.sh)
#   scripts/deps.sh --test   also the test peers: Apache ZooKeeper 3.8 (server,
#                            zkCli.sh, the C client, Curator, Netty for its
#                            TLS port), kazoo and its
#                            test suite's needs, Go with go-zookeeper,
#                            clang, and what builds and checks the Debian
#                            packages (tests/package), Prometheus (server and
#                            promtool) and curl for the HTTP endpoints,
#                            tmux for tumbler top's screen, valgrind,
#                            nftables (a NAT in tests/crash/partition.sh),
#                            git (tests/package packages the committed tree)
# What is missing is installed with apt-get: as root, or through sudo.
# No service starts during that install (see policy-rc.d below).
set -euo pipefail

pkgs=(build-essential cmake ninja-build pkg-config
      libuv1-dev libraft-dev liblz4-dev nettle-dev zlib1g-dev libreadline-dev
      libsasl2-dev libsasl2-modules libssl-dev libmicrohttpd-dev)
if [ "${1:-}" = "--package" ]; then
    pkgs+=(debhelper git)
fi
if [ "${1:-}" = "--test" ]; then
    pkgs+=(libcmocka-dev zookeeper zookeeper-bin libzookeeper-mt-dev
           libcurator-recipes-java default-jdk-headless netcat-openbsd
           clang libclang-rt-14-dev python3 e2fsprogs util-linux strace
           python3-kazoo python3-pytest python3-pytest-timeout
           python3-pytest-rerunfailures python3-mock python3-objgraph
           golang-go golang-github-samuel-go-zookeeper-dev libnetty-java openssl
           iproute2 nftables
           debhelper lintian logrotate man-db systemd
           prometheus curl tmux valgrind git)
fi

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "deps.sh: apt-get must install ${missing[*]}: run as root, or install sudo" >&2
        exit 1
    fi
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# A package's post-install start would serve at once: prometheus on port
# 9090 of every address, with no authentication; zookeeper, where its
# package starts one, on the tests' port 2181.  A policy-rc.d that answers 101
# (action forbidden) keeps invoke-rc.d and deb-systemd-invoke from starting
# anything during this install.  It is this script's only if none was
# there: a machine's own is left as it is.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
    trap '$sudo rm -f "$policy"' EXIT
    printf '#!/bin/sh\n# scripts/deps.sh: no service starts while it installs.\nexit 101\n' |
        $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
fi
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The package still enabled prometheus.service, which would start at the
# next boot; the tests run prometheus themselves.  Only if installed here.
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi
