#!/usr/bin/env python3
"""Where a lock run's time went on each tumblerd member, from the mntr and GET /metrics that
bench/ensemble.sh keeps before and after each tbbench run (MNTR=1 METRICS=1 BS_KEEP=1):

    ensemble_legs.py [--kind tmpfs] DIR/mntr STEP-REP [ACQUISITIONS]

e.g. ensemble_legs.py /var/tmp/tbbench.XXXX/mntr lock_fair_1-2 2264; --kind tmpfs reads the
ensemble whose members keep their data on tmpfs instead.  For each member: its role,
the log's synced writes and entries over the run (per acquisition when ACQUISITIONS is given:
tbbench's count, which leaves out the warm-up, so per-acquisition figures there are high by the
warm-up's share; the watch notices sent, one per handoff, are the better divisor and are used
when no count is given), a write's mean (from mntr's summed write time) and, with METRICS=1,
its estimated p50/p90 (from the histogram's buckets, as Prometheus's histogram_quantile does),
an append's mean wait for a write to take it, and each request type's count, mean and p50/p90
from its arrival to its answer on that member.
"""
import sys


def mntr(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("\t")
                out[k] = v
    except OSError:
        pass
    return out


def metrics(path):
    """{(name, labels): value} of a Prometheus text page."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                key, _, v = line.rstrip("\n").rpartition(" ")
                name, _, labels = key.partition("{")
                try:
                    out[(name, labels.rstrip("}"))] = float(v)
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def diff(a, b):
    return {k: v - a.get(k, 0.0) for k, v in b.items()}


def hist(m, name, sel=""):
    """[(le, count)], sum, count of one histogram, labels filtered by sel (e.g. 'op="delete"')."""
    buckets = []
    for (n, labels), v in m.items():
        if n == name + "_bucket" and (not sel or sel in labels):
            le = labels.split('le="')[1].split('"')[0]
            buckets.append((float("inf") if le == "+Inf" else float(le), v))
    buckets.sort()
    lab = sel
    s = m.get((name + "_sum", lab), 0.0)
    c = m.get((name + "_count", lab), 0.0)
    return buckets, s, c


def quantile(buckets, q):
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lo, prev = 0.0, 0.0
    for le, c in buckets:
        if c >= rank:
            if le == float("inf"):
                return lo
            return lo + (le - lo) * ((rank - prev) / (c - prev) if c > prev else 0)
        lo, prev = le, c
    return None


def us(v):
    return "–" if v is None else "{:,.0f}".format(v * 1e6)


def main():
    args, kind = sys.argv[1:], "tumbler"
    if args[:1] == ["--kind"]:
        kind, args = args[1], args[2:]
    d, tag = args[0], args[1]
    acq = float(args[2]) if len(args) > 2 else None
    pres = ["{}/{}-{{}}-{}-{}".format(d, tag, kind, i) for i in (1, 2, 3)]
    if acq is None:  # one watch notice a handoff, sent by the waiter's member
        k = "zk_tumbler_watch_notifications"
        acq = sum(float(mntr(pre.format("after")).get(k, 0)) -
                  float(mntr(pre.format("before")).get(k, 0) or 0) for pre in pres)
    for i, pre in enumerate(pres, 1):
        a, b = mntr(pre.format("before")), mntr(pre.format("after"))
        if not b:
            continue
        dm = lambda k: float(b.get(k, 0)) - float(a.get(k, 0) or 0)
        m = diff(metrics(pre.format("before") + ".metrics"), metrics(pre.format("after") + ".metrics"))
        notices = dm("zk_tumbler_watch_notifications")
        writes, entries = dm("zk_tumbler_log_writes"), dm("zk_tumbler_log_entries")
        appends = dm("zk_tumbler_log_appends")
        wb = hist(m, "tumbler_log_write_duration_seconds")[0]
        print("member {} ({}): {:,.0f} synced writes, {:,.0f} entries, {:,.0f} watch notices sent; "
              "a write {} µs mean, p50 {}, p90 {}; an append waited {} µs on average; "
              "write time summed {:.2f} s".format(
                  i, b.get("zk_server_state", "?"), writes, entries, notices,
                  us(dm("zk_tumbler_log_write_us") / 1e6 / writes if writes else None),
                  us(quantile(wb, 0.5)), us(quantile(wb, 0.9)),
                  us(dm("zk_tumbler_log_append_wait_us") / 1e6 / appends if appends else None),
                  dm("zk_tumbler_log_write_us") / 1e6))
        if acq:
            print("  per handoff ({:,.0f}): {:.2f} writes, {:.2f} entries".format(
                acq, writes / acq, entries / acq))
        ops = sorted({labels.split('op="')[1].split('"')[0] for (n, labels) in m
                      if n == "tumbler_request_latency_seconds_count" and 'op="' in labels})
        for op in ops:
            sel = 'op="{}"'.format(op)
            bk, s, c = hist(m, "tumbler_request_latency_seconds", sel)
            if c <= 0:
                continue
            print("  {:<13} {:>7,.0f}  mean {:>6} µs  p50 {:>6}  p90 {:>6}".format(
                op, c, us(s / c), us(quantile(bk, 0.5)), us(quantile(bk, 0.9))))


if __name__ == "__main__":
    main()
