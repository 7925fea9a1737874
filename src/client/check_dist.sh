#!/usr/bin/env bash
# Checks what libtumbler ships, as a user would meet it:
#   doc      docs/client.md shows src/client/example.c unchanged
#   install  `cmake --install --component client` into a temp prefix, then
#            the example compiles and links with `pkg-config tumbler` alone
#   symbols  the shared library exports tb_* symbols only
# Usage: check_dist.sh doc|install|symbols SOURCE_DIR BUILD_DIR [LIB]
set -eu
what=$1 src=$2 build=$3
case "$what" in
doc)
    awk '/^## A complete program/ { s = 1 } s && /^```c$/ { p = 1; next }
         p && /^```$/ { exit } p { print }' "$src/docs/client.md" |
        diff -u "$src/src/client/example.c" -
    ;;
install)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    cmake --install "$build" --component client --prefix "$tmp/usr" >/dev/null
    export PKG_CONFIG_PATH="$tmp/usr/lib/pkgconfig:$(echo "$tmp"/usr/lib/*/pkgconfig | tr ' ' ':')"
    # shellcheck disable=SC2046
    cc -Wall -Werror -o "$tmp/example" "$src/src/client/example.c" \
        $(pkg-config --cflags --libs tumbler)
    # shellcheck disable=SC2046
    cc -Wall -Werror -static-libgcc -o "$tmp/example_static" \
        "$src/src/client/example.c" \
        $(pkg-config --cflags tumbler) "$(ls "$tmp"/usr/lib*/libtumbler.a "$tmp"/usr/lib/*/libtumbler.a 2>/dev/null | head -1)" \
        $(pkg-config --libs --static nettle libsasl2 openssl) -lpthread
    LD_LIBRARY_PATH=$(dirname "$(ls "$tmp"/usr/lib*/libtumbler.so "$tmp"/usr/lib/*/libtumbler.so 2>/dev/null | head -1)") \
        ldd "$tmp/example" | grep -q libtumbler
    ;;
symbols)
    bad=$(nm -D --defined-only "$4" | awk '{ print $3 }' | grep -v '^tb_' || true)
    if [ -n "$bad" ]; then
        echo "exported symbols outside tb_*: $bad" >&2
        exit 1
    fi
    ;;
esac
