#!/usr/bin/env python3
"""Histories of the partition tests' workloads, and their checks.

  history.py register HOSTS PATH ID STOPFILE   one register client (kazoo),
                                               its history on stdout, until
                                               STOPFILE exists
  history.py check-register FILE...            linearizable?
  history.py check-holds FILE...               one holder at a time, tokens
                                               rising?
  history.py selftest                          each check against histories
                                               known to pass or fail

A register client reads the register (getData: value and version), every
other time after a sync, and every third time then writes it with a
compare-and-set on the version it read (setData with that version).  Values
are unique ("ID-n").  Each operation is one line of its history, with the
system-wide monotonic clock (ns) at its invocation and at its completion:

  INV RET read VALUE VERSION       a read after a sync, that returned
  INV RET lread VALUE VERSION      a read alone, that returned
  INV RET cas EXP NEW ok VERSION   the write took; VERSION is the new one
  INV RET cas EXP NEW fail         refused: the version was not EXP
  INV RET cas EXP NEW info         outcome unknown (connection lost)

A read that failed says nothing and is not kept.

ZooKeeper's guarantees, which these check: writes are linearizable; a read
after a sync is too (the sync is a write through the leader, the read
waits for it); a read alone is served from the server's own state, which
may be behind the leader's, but a session never sees the register go back
(its reads and writes, in its order, have rising versions, across servers:
a server behind what the session has seen refuses it).

The register check.  A znode's version numbers its writes: the write that
took at version v is the v-th, so the order of the writes is known, and the
history is linearizable if and only if its operations can be given points in
time, each within its own interval, in that order: write v after write v-1,
a read of version v after write v and before write v+1.  Placing every point
as early as it may go decides it: no later choice can make room that an
earlier one took (every constraint says "not before").  A version that no
acknowledged write reports was made by a write whose outcome was unknown:
the one whose value a read returned at that version, else an unknown write
not used elsewhere that expected the version before, the earliest invoked
first; it may take effect any time after its invocation.  Besides: a read's
value must be the one written at its version, no two writes may make one
version, a write may only make the version after the one it expected, and a
refused write is wrong when its expected version was current all through its
interval (the write that made it had returned before, the next one was not
yet invoked).

A lock holder's history (the command `tumbler lock` runs, see partition.sh)
is lines "start NS TOKEN ID" and "end NS TOKEN ID" on the wall clock (ns).
The holds check: sorted by start, each hold starts after the one before
ended, and with a larger fencing token.
"""
import os
import sys
import time

FOREVER = 1 << 62


def run(hosts, path, ident, stopfile):
    from kazoo.client import KazooClient
    from kazoo.exceptions import BadVersionError, KazooException
    from kazoo.handlers.threading import KazooTimeoutError

    failed = (KazooException, KazooTimeoutError)
    zk = KazooClient(hosts=hosts, timeout=10.0, randomize_hosts=False,
                     connection_retry={"max_tries": -1, "delay": 0.05,
                                       "max_delay": 0.5})
    zk.start(timeout=30)
    try:
        zk.create(path, b"init")
    except failed:
        pass  # made by another client
    n = 0
    while not os.path.exists(stopfile):
        n += 1
        time.sleep(0.005)  # room on the machine for the servers
        inv = time.monotonic_ns()
        try:
            if n % 2 == 0:
                zk.sync(path)
            value, stat = zk.get(path)
        except failed:
            time.sleep(0.02)
            continue
        print(inv, time.monotonic_ns(), "read" if n % 2 == 0 else "lread",
              value.decode(), stat.version, flush=True)
        if n % 3:
            continue
        new = "%s-%d" % (ident, n)
        inv = time.monotonic_ns()
        try:
            result = "ok %d" % zk.set(path, new.encode(),
                                      version=stat.version).version
        except BadVersionError:
            result = "fail"
        except failed:
            result = "info"
        print(inv, time.monotonic_ns(), "cas", stat.version, new, result,
              flush=True)
    zk.stop()
    zk.close()


def load(files):
    """The synced reads, the writes, the writes of unknown outcome, the
    reads alone, and each session's versions in its order."""
    reads, writes, unknown, lreads, sessions = [], [], [], [], []
    for name in files:
        seen = []
        sessions.append((name, seen))
        with open(name) as f:
            for line in f:
                w = line.split()
                if len(w) < 5 or (w[2] == "cas" and len(w) < 6):
                    continue  # cut short when its client was stopped
                inv, ret = int(w[0]), int(w[1])
                if w[2] in ("read", "lread"):
                    (reads if w[2] == "read" else lreads).append(
                        (inv, ret, w[3], int(w[4])))
                    seen.append((int(w[4]), w[2] + " " + w[3]))
                elif w[5] == "ok":
                    seen.append((int(w[6]), "write " + w[4]))
                    writes.append((inv, ret, int(w[3]), w[4], int(w[6])))
                elif w[5] == "fail":
                    writes.append((inv, ret, int(w[3]), w[4], None))
                else:
                    unknown.append((inv, FOREVER, int(w[3]), w[4]))
    return reads, writes, unknown, lreads, sessions


def check_register(files):
    reads, writes, unknown, lreads, sessions = load(files)
    bad = []
    for name, seen in sessions:
        high = (0, "the start")
        for version, what in seen:
            if version < high[0]:
                bad.append("%s: %s (version %d) after %s (version %d): the "
                           "session saw the register go back"
                           % (name, what, version, high[1], high[0]))
            high = max(high, (version, what))
    made = {}  # version -> (inv, ret, value)
    for inv, ret, exp, new, version in writes:
        if version is None:
            continue
        if version in made:
            bad.append("two writes made version %d: %s and %s"
                       % (version, made[version][2], new))
        if version != exp + 1:
            bad.append("%s expected version %d and made %d" % (new, exp, version))
        made[version] = (inv, ret, new)
    # Versions read but made by no acknowledged write: an unknown write.
    by_value = {u[3]: u for u in unknown}
    used = set()
    for inv, ret, value, version in reads + lreads:
        if version > 0 and version not in made and value in by_value:
            u = by_value[value]
            if u[2] + 1 != version:
                bad.append("%s expected version %d, read at %d" % (value, u[2], version))
            made[version] = (u[0], u[1], value)
            used.add(value)
    top = max([v for _, _, _, v in reads + lreads] + list(made) + [0])
    spare = sorted(u for u in unknown if u[3] not in used)
    for v in range(1, top + 1):
        if v not in made:
            fit = [u for u in spare if u[2] == v - 1]
            if not fit:
                bad.append("version %d: no write made it" % v)
                made[v] = (0, FOREVER, None)
                continue
            spare.remove(fit[0])
            made[v] = (fit[0][0], fit[0][1], fit[0][3])
    reads_of = {}
    for r in reads:
        reads_of.setdefault(r[3], []).append(r)
    for r in reads + lreads:
        if r[3] > 0 and made[r[3]][2] is not None and r[2] != made[r[3]][2]:
            bad.append("a read of version %d returned %s, written %s"
                       % (r[3], r[2], made[r[3]][2]))
    # Earliest points, version by version.
    point = -1
    for v in range(0, top + 1):
        if v > 0:
            inv, ret, value = made[v]
            point = max(point + 1, inv)
            if point > ret:
                bad.append("write %s (version %d) returned before it could "
                           "follow version %d and its reads" % (value, v, v - 1))
        floor = point
        for inv, ret, value, _ in reads_of.get(v, []):
            p = max(floor, inv)
            if p > ret:
                bad.append("a read of version %d (%s) returned before version "
                           "%d was written" % (v, value, v))
            point = max(point, p)
    # Refusals while the expected version was current all through.
    for inv, ret, exp, new, version in writes:
        if version is not None:
            continue
        before = made.get(exp)
        after = made.get(exp + 1)
        if ((exp == 0 or (before and before[1] < inv)) and
                (after is None or after[0] > ret)):
            bad.append("%s refused, though version %d was current all "
                       "through its call" % (new, exp))
    acked = sum(1 for w in writes if w[4] is not None)
    refused = sum(1 for w in writes if w[4] is None)
    print("register: %d reads after a sync, %d alone, %d writes acknowledged, "
          "%d refused, %d unknown; %d versions; %s"
          % (len(reads), len(lreads), acked, refused, len(unknown), top,
                               "linearizable" if not bad else
                               "NOT linearizable"))
    for b in bad[:20]:
        print("  " + b)
    return 1 if bad else 0


def check_holds(files):
    holds = {}
    for name in files:
        with open(name) as f:
            for line in f:
                w = line.split()
                if len(w) < 4 or w[0] not in ("start", "end"):
                    continue
                key = (w[3], int(w[2]))
                h = holds.setdefault(key, [None, None])
                h[0 if w[0] == "start" else 1] = int(w[1])
    bad = []
    seq = sorted((h[0], h[1], key[1], key[0]) for key, h in holds.items()
                 if h[0] is not None)
    for i, (start, end, token, who) in enumerate(seq):
        if end is None and i + 1 < len(seq):
            bad.append("%s's hold (token %d) has no end, and others followed"
                       % (who, token))
        if i == 0:
            continue
        pstart, pend, ptoken, pwho = seq[i - 1]
        if pend is not None and start < pend:
            bad.append("%s (token %d) held from %d, %.1f ms before %s "
                       "(token %d) let go" % (who, token, start,
                                             (pend - start) / 1e6, pwho, ptoken))
        if token <= ptoken:
            bad.append("%s's token %d is not above %s's %d, held before"
                       % (who, token, pwho, ptoken))
    print("holds: %d, %s" % (len(seq), "one at a time, tokens rising"
                            if not bad else "VIOLATED"))
    for b in bad[:20]:
        print("  " + b)
    return 1 if bad else 0


def selftest():
    import tempfile

    def verdict(fn, lines):
        """A list of lines is one session's history; a tuple of such
        lists, one per session."""
        sessions = lines if isinstance(lines, tuple) else (lines,)
        files = []
        for one in sessions:
            f = tempfile.NamedTemporaryFile("w", suffix=".h")
            f.write("\n".join(one) + "\n")
            f.flush()
            files.append(f)
        rc = fn([f.name for f in files])
        for f in files:
            f.close()
        return rc

    register_cases = [
        (0, ["0 10 read init 0", "20 30 cas 0 a-2 ok 1", "40 50 read a-2 1"]),
        (0, (["0 100 read x-2 1"], ["20 30 cas 0 x-2 ok 1"],
             ["25 40 read init 0"])),
        (0, ["0 10 read init 0", "20 30 cas 0 a-2 info", "40 50 read a-2 1",
             "60 70 cas 1 b-2 ok 2"]),
        (0, ["0 10 read init 0", "20 30 cas 0 a-2 info", "40 50 cas 0 b-2 fail",
             "60 70 read b-4 2", "45 55 cas 1 b-4 ok 2"]),
        # a stale read: version 0 read after version 1 was acknowledged
        (1, ["0 10 read init 0", "20 30 cas 0 a-2 ok 1", "40 50 read init 0"]),
        # two acknowledged writes of one version
        (1, ["0 10 read init 0", "20 30 cas 0 a-2 ok 1", "20 35 cas 0 b-2 ok 1"]),
        # a read of a write not yet invoked
        (1, ["0 10 read x-2 1", "20 30 cas 0 x-2 ok 1"]),
        # refused while its version was current all through
        (1, ["0 10 read init 0", "20 30 cas 0 a-2 ok 1", "40 50 cas 1 b-2 fail"]),
        # a version no write can have made
        (1, ["0 10 read init 0", "20 30 read z-9 2"]),
        # a read that returned another value than the write of its version
        (1, ["0 10 read init 0", "20 30 cas 0 a-2 ok 1", "40 50 read b-2 1"]),
        # a read alone may be behind another session's write ...
        (0, (["0 10 read init 0", "20 30 cas 0 a-2 ok 1"],
             ["40 50 lread init 0"])),
        # ... but not behind what its own session has seen
        (1, ["0 10 read init 0", "20 30 cas 0 a-2 ok 1", "40 50 lread init 0"]),
        (1, (["0 10 read init 0", "20 30 cas 0 a-2 ok 1"],
             ["40 50 lread a-2 1", "60 70 lread init 0"])),
    ]
    holds_cases = [
        (0, ["start 100 5 a", "end 200 5 a", "start 210 7 b", "end 300 7 b"]),
        (1, ["start 100 5 a", "end 200 5 a", "start 150 7 b", "end 300 7 b"]),
        (1, ["start 100 7 a", "end 200 7 a", "start 210 5 b", "end 300 5 b"]),
        (1, ["start 100 5 a", "start 210 7 b", "end 300 7 b"]),
    ]
    wrong = 0
    for fn, cases in ((check_register, register_cases), (check_holds, holds_cases)):
        for want, lines in cases:
            if verdict(fn, lines) != want:
                print("SELFTEST: %s gave the wrong verdict on %s" % (fn.__name__, lines))
                wrong += 1
    print("selftest: %d wrong verdicts" % wrong)
    return 1 if wrong else 0


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) == 5 and a[0] == "register":
        run(*a[1:])
    elif len(a) > 1 and a[0] == "check-register":
        sys.exit(check_register(a[1:]))
    elif len(a) > 1 and a[0] == "check-holds":
        sys.exit(check_holds(a[1:]))
    elif a == ["selftest"]:
        sys.exit(selftest())
    else:
        sys.exit(__doc__)
