#!/usr/bin/env bash
# After apt-get install: every file each package lists is there, the paths
# the documentation promises are in the right package, the library's
# soname matches its package, and the system user owns its directories.
set -euo pipefail
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
bad=0
no() { echo "files: $*" >&2; bad=1; }

for p in tumblerd tumbler libtumbler0 libtumbler-dev; do
    while IFS= read -r f; do
        [ -e "$f" ] || [ -L "$f" ] || no "$p lists $f, which is missing"
    done < <(dpkg -L "$p")
done

# package path: what README.md, tumblerd(8) and the units name.
while read -r p f; do
    # not in a pipe: grep -q's early exit would fail it under pipefail
    grep -Eq "^$p(:[a-z0-9]+)?: " <<<"$(dpkg -S "$f" 2>/dev/null)" ||
        no "$f is not in $p"
done <<END
tumblerd /usr/sbin/tumblerd
tumblerd /etc/tumbler/zoo.cfg
tumblerd /lib/systemd/system/tumblerd.service
tumblerd /lib/systemd/system/tumblerd@.service
tumblerd /etc/logrotate.d/tumblerd
tumblerd /usr/share/man/man8/tumblerd.8.gz
tumblerd /usr/share/doc/tumblerd/examples/ensemble.cfg
tumbler /usr/bin/tumbler
tumbler /usr/share/man/man1/tumbler.1.gz
libtumbler0 /usr/lib/$ma/libtumbler.so.0
libtumbler-dev /usr/lib/$ma/libtumbler.so
libtumbler-dev /usr/lib/$ma/libtumbler.a
libtumbler-dev /usr/lib/$ma/pkgconfig/tumbler.pc
libtumbler-dev /usr/include/tumbler/tumbler.h
libtumbler-dev /usr/include/tumbler/recipes.h
END
grep -qx 'dataDir=/var/lib/tumbler' /etc/tumbler/zoo.cfg ||
    no "zoo.cfg does not put dataDir in /var/lib/tumbler"
grep -qx '/etc/tumbler/zoo.cfg' /var/lib/dpkg/info/tumblerd.conffiles ||
    no "zoo.cfg is not a conffile"

# The soname's number is the package's: libtumbler0 holds libtumbler.so.0.
soname=$(readelf -d "/usr/lib/$ma/libtumbler.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libtumbler.so.0 ] || no "soname is '$soname', not libtumbler.so.0"

# A system user (no login) that owns the data and log directories.
IFS=: read -r _ _ uid _ _ home shell < <(getent passwd tumbler) ||
    no "no user tumbler"
[ "${uid:-1000}" -lt 1000 ] || no "tumbler is not a system user (uid $uid)"
[ "${home:-}" = /var/lib/tumbler ] || no "tumbler's home is '$home'"
case ${shell:-} in */nologin | */false) ;; *) no "tumbler's shell is '$shell'" ;; esac
[ "$(stat -c '%U:%G %a' /var/lib/tumbler)" = "tumbler:tumbler 750" ] ||
    no "/var/lib/tumbler is $(stat -c '%U:%G %a' /var/lib/tumbler)"
[ "$(stat -c '%U:%G %a' /var/log/tumbler)" = "tumbler:adm 2750" ] ||
    no "/var/log/tumbler is $(stat -c '%U:%G %a' /var/log/tumbler)"

# --version says the package's version: debian/changelog and the
# project's VERSION in CMakeLists.txt agree.
v=$(dpkg-query -W -f='${Version}' tumblerd)
grep -q "^tumblerd ${v%%-*} " <<<"$(tumblerd --version)" ||
    no "tumblerd --version ($(tumblerd --version)) is not $v"
[ "$(tumbler --version)" = "tumbler ${v%%-*}" ] ||
    no "tumbler --version ($(tumbler --version)) is not $v"
exit $bad
