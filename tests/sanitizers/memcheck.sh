#!/bin/sh
# Runs a program under Valgrind's memcheck, which sees what the sanitizers
# do not: a value read before it was written, and accesses made by the
# libraries built without them (libuv, libraft), such as the loop walking
# a handle whose memory was freed.  Exits 1 on a report.
#   memcheck.sh PROGRAM [ARG...]
# With TB_MEMCHECK_PROGRAM set, that is the program and every argument is
# its own, so that this script can stand for a server binary (TUMBLERD).
# With TB_MEMCHECK_DIR set, each process reports to TB_MEMCHECK_DIR/PID.log
# (left empty when clean) rather than to stderr: a test that kills servers
# with -9 loses their exit status, and the reports are read after it:
#   memcheck.sh --check DIR
# prints those in DIR, and exits 1 if there is one.
if [ "${1:-}" = --check ]; then
    if grep -q . "$2"/*.log 2>/dev/null; then
        grep -H . "$2"/*.log | head -200
        exit 1
    fi
    exit 0
fi
if [ -z "${TB_MEMCHECK_PROGRAM:-}" ]; then
    TB_MEMCHECK_PROGRAM=$1
    shift
fi
# No leak check: LSan reports leaks (the ASan stage runs the same tests);
# memcheck's, under -q, reports none.  And at a forked snapshot child's
# exit its scan reads mappings the child does not have (MADV_DONTFORK,
# which Valgrind does not model), faults there over and over and dies of
# SIGBUS: tumblerd fell back to serializing on the loop, and the child's
# code went unchecked.
exec valgrind -q --error-exitcode=1 --track-origins=yes --leak-check=no \
    ${TB_MEMCHECK_DIR:+--log-file="$TB_MEMCHECK_DIR/%p.log"} \
    "$TB_MEMCHECK_PROGRAM" "$@"
