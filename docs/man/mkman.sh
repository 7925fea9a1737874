#!/bin/sh
# Writes a manual page from a template and the program's own --help texts,
# so that the page and --help cannot say different things: every option,
# command and zoo.cfg key on the page is printed by the program itself.
#
#   mkman.sh TEMPLATE PROGRAM [PAGE]      (else to standard output)
#
# The template is roff, in which these lines are replaced by PROGRAM
# ARGS's output, turned into roff:
#   @usage ARGS...     its "Usage:" lines, as a block (for the SYNOPSIS)
#   @intro ARGS...     the paragraphs after them (for the DESCRIPTION)
#   @sections ARGS...  the rest: each "Heading:" line a section, each
#                      indented "  TAG  text" line (its text going on below
#                      it, deeper) a tagged paragraph, other lines paragraphs
#   @commands          for each command listed under "Commands:" in
#                      PROGRAM --help, a subsection .SS COMMAND with the
#                      whole of PROGRAM COMMAND --help
# and @VERSION@ anywhere by the version PROGRAM --version prints.
set -eu
template=$1 prog=$2
if [ $# -ge 3 ]; then
    # A page that failed is not left behind half-written.
    "$0" "$1" "$2" > "$3.tmp" && mv "$3.tmp" "$3" && exit 0
    rm -f "$3.tmp"
    exit 1
fi

# roff PART: PROGRAM's output on stdin, turned into roff on stdout; only
# PART of it (usage, intro, sections), or all of it in a subsection.
roff() {
    awk -v want="$1" '
    function esc(s) {
        gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s)
        if (s ~ /^[.'\'']/) s = "\\&" s
        return s
    }
    # Long words (server.N=host:port:..., Java class names) may break
    # after : ; | . = /, or troff cannot fit them in the line.
    function brk(s,   n, w, i, r) {
        n = split(s, w, / /)
        for (i = 1; i <= n; i++) {
            if (length(w[i]) > 24) gsub(/[:;|.=\/]/, "&\\:", w[i])
            r = r (i > 1 ? " " : "") w[i]
        }
        return r
    }
    function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
    function out(s) { if (want == "all" || want == part) print s }
    BEGIN { part = "intro" }
    /^Usage: / {
        part = "usage"; out(".nf"); out(esc(substr($0, 8))); next
    }
    part == "usage" && /^       / { out(esc(trim($0))); next }
    part == "usage" { out(".fi"); part = "intro"; pp = want == "all" }
    /^$/ { pp = 1; item = 0; next }
    # A heading: "Keys and their defaults:", "Commands:"
    /^[A-Z][^:]*:$/ {
        part = "sections"; h = substr($0, 1, length($0) - 1)
        if (want == "all") out(".PP\n\\fB" esc(h) "\\fR")
        else out(".SH " esc(toupper(h)))
        pp = 0; item = 0; next
    }
    # An item: two spaces in, or six before a long option ("  -s, --x",
    # "      --json"); its tag ends at two spaces, else at the first space
    # of a word ("getAllChildrenNumber Print ..."), else with the line
    # ("  -E, --conflict-exit-code N", its text below).
    /^  [^ ]/ || /^      --/ {
        line = trim($0)
        n = match(line, /  +/)
        if (n == 0 && line !~ /^-/) n = index(line, " ")
        tag = n ? substr(line, 1, n - 1) : line
        text = n ? trim(substr(line, n)) : ""
        out(".TP"); out("\\fB" brk(esc(tag)) "\\fR")
        if (text != "") out(brk(esc(text)))
        item = 1; pp = 0; next
    }
    item && /^ / { out(brk(esc(trim($0)))); next }
    {
        if (pp || item) out(".PP")
        out(brk(esc($0))); pp = 0; item = 0
    }
    END { if (part == "usage") out(".fi") }'
}

# run ARGS...: PROGRAM's output, which must exit 0 and print something.
run() {
    out=$("$prog" "$@") && [ -n "$out" ] ||
        { echo "mkman.sh: '$prog $*' failed" >&2; exit 1; }
    printf '%s\n' "$out"
}

# The commands listed under "Commands:" in PROGRAM --help, one a line.
commands() {
    run --help | awk '/^[A-Z][^:]*:$/ { in_cmds = ($0 == "Commands:") }
                      in_cmds && /^  [^ ]/ { print $1 }'
}

version=$(run --version | awk 'NR == 1 { print $2 }')
[ -n "$version" ] || { echo "mkman.sh: no version from $prog" >&2; exit 1; }

while IFS= read -r line; do
    case $line in
    "@usage "* | "@intro "* | "@sections "*)
        part=${line%% *} part=${part#@}
        # shellcheck disable=SC2086  # the arguments are words
        help=$(run ${line#* })
        printf '%s\n' "$help" | roff "$part"
        ;;
    @commands)
        cmds=$(commands)
        [ -n "$cmds" ] || { echo "mkman.sh: no Commands: in $prog --help" >&2; exit 1; }
        for c in $cmds; do
            help=$(run "$c" --help)
            printf '.SS %s\n' "$c"
            printf '%s\n' "$help" | roff all
        done
        ;;
    *)
        printf '%s\n' "$line" | sed "s/@VERSION@/$version/g"
        ;;
    esac
done < "$template"
