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
#                            tmux for tumbler top's screen, valgrind
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
           iproute2
           debhelper lintian logrotate man-db systemd
           prometheus curl tmux valgrind)
fi

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# zookeeper's package starts no service by itself in a container, but keep
# any post-install start from claiming port 2181.
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
