#!/usr/bin/env bash
# libtumbler-dev as a user meets it: the client example of docs/client.md,
# copied out of the tree, builds and links with `pkg-config tumbler` alone,
# against the installed libtumbler.so.0 (serve.sh runs it against the
# packaged server).  The static library links too, its dependencies given
# by `pkg-config --static`.
#   dev.sh SOURCE_DIR
set -euo pipefail
src=$1 out=$TB_PKG_TMP
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
mkdir -p "$out/dev"
cp "$src/src/client/example.c" "$out/dev/example.c"
cd "$out/dev"

# shellcheck disable=SC2046  # pkg-config prints words
cc -Wall -Werror -o "$out/example" example.c $(pkg-config --cflags --libs tumbler)
# ldd's output is taken first, not piped: grep -q's early exit would fail
# ldd with SIGPIPE under pipefail.
libs=$(ldd "$out/example")
grep -Eq "libtumbler.so.0 => (/usr)?/lib/$ma/libtumbler.so.0" <<<"$libs" ||
    { echo "dev: example is not linked to the packaged library: $libs" >&2; exit 1; }

# shellcheck disable=SC2046
cc -Wall -Werror -o example_static example.c $(pkg-config --cflags tumbler) \
    "$(pkg-config --variable=libdir tumbler)/libtumbler.a" \
    $(pkg-config --static --libs-only-l tumbler | sed 's/-ltumbler//')
libs=$(ldd example_static)
! grep -q libtumbler <<<"$libs" ||
    { echo "dev: example_static uses the shared library" >&2; exit 1; }
