#!/usr/bin/env bash
# The installed man pages render (man -l) without a warning, and hold what
# the installed programs' --help prints: every option and zoo.cfg key of
# tumblerd, every command and global option of tumbler, each command a
# subsection; tumblerd(8) has the sections the help has not.
set -euo pipefail
tmp=$TB_PKG_TMP
bad=0
no() { echo "man: $*" >&2; bad=1; }

# render PAGE: the page as text in $tmp/PAGE.txt; troff's warnings fail.
render() {
    LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$1" >"$tmp/$2.txt" 2>"$tmp/$2.err" ||
        no "man -l $1 failed"
    [ -s "$tmp/$2.txt" ] || no "$1 renders empty"
    [ ! -s "$tmp/$2.err" ] || no "$1: $(cat "$tmp/$2.err")"
}
render /usr/share/man/man8/tumblerd.8.gz tumblerd
render /usr/share/man/man1/tumbler.1.gz tumbler

# Every key tumblerd --help lists is a tagged paragraph: "  key=default".
keys=$(tumblerd --help | sed -n 's/^  \([A-Za-z0-9.]*\)=.*/\1/p')
[ "$(echo "$keys" | wc -l)" -gt 20 ] || no "too few keys in tumblerd --help: $keys"
for k in $keys; do
    grep -Eq "^ +$k=" "$tmp/tumblerd.txt" || no "tumblerd(8) lacks the key $k"
done
for o in $(tumblerd --help | sed -n '/^Options:/,/^Keys/p' | grep -o -- '--[a-z-]*' | sort -u); do
    grep -q -- "$o" "$tmp/tumblerd.txt" || no "tumblerd(8) lacks $o"
done
for s in SYNOPSIS DESCRIPTION OPTIONS SIGNALS "EXIT STATUS" FILES; do
    grep -qx "$s" "$tmp/tumblerd.txt" || no "tumblerd(8) has no $s section"
done

# Every command of tumbler --help is a subsection, every long option a tag.
cmds=$(tumbler --help | awk '/^[A-Z][^:]*:$/ { c = ($0 == "Commands:") }
                            c && /^  [^ ]/ { print $1 }')
[ -n "$cmds" ] || no "no commands in tumbler --help"
for c in $cmds; do
    grep -qx "   $c" "$tmp/tumbler.txt" || no "tumbler(1) has no subsection $c"
done
for o in $(tumbler --help | grep -o -- '--[a-z-]*' | sort -u); do
    grep -q -- "^ *\(-., \)\?$o\b" "$tmp/tumbler.txt" || no "tumbler(1) lacks $o"
done
exit $bad
