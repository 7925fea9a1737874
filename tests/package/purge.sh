#!/usr/bin/env bash
# apt-get purge tumblerd removes the program, its configuration and its
# logs, and keeps /var/lib/tumbler, whose writes clients were told are
# durable (serve.sh left some there); with TUMBLER_PURGE_DATA=yes, after a
# reinstall, the data goes too.
set -euo pipefail
tmp=$TB_PKG_TMP
bad=0
no() { echo "purge: $*" >&2; bad=1; }
apt() { DEBIAN_FRONTEND=noninteractive apt-get -y -qq "$@" >"$tmp/apt.log" 2>&1 ||
            { cat "$tmp/apt.log" >&2; no "apt-get $* failed"; }; }

data=$(find /var/lib/tumbler -type f | sort)
[ -n "$data" ] || no "no data in /var/lib/tumbler to keep"
apt purge tumblerd
for f in /usr/sbin/tumblerd /etc/tumbler /var/log/tumbler \
         /lib/systemd/system/tumblerd.service /etc/logrotate.d/tumblerd; do
    [ ! -e "$f" ] || no "$f is still there after purge"
done
[ "$(find /var/lib/tumbler -type f | sort)" = "$data" ] ||
    no "purge changed /var/lib/tumbler"

apt install --no-install-recommends "$tmp"/tumblerd_*.deb
[ -d /run/systemd/system ] && systemctl stop tumblerd
TUMBLER_PURGE_DATA=yes apt purge tumblerd
[ ! -e /var/lib/tumbler ] || no "TUMBLER_PURGE_DATA=yes kept /var/lib/tumbler"
exit $bad
