#!/usr/bin/env python3
"""The summary of a bench/ensemble.sh run, in markdown, from its RESULT and META lines.

    ensemble_report.py RESULTS

Failover and rejoin figures: median, smallest and largest over the trials of each system, and
the ratio tumbler / zookeeper of the medians and of the largest.  Throughput: the median over
the repetitions, and the range of the per-repetition ratios (the two systems ran back to back).
RSS: the largest node of each ensemble at each moment.  The goals are issue 41's.  Beside the
fair-lock goals, what the same build made with its members' data on tmpfs (no disk write), the
most the rest of a handoff allows on this machine: a bound, not a result.
"""
import statistics
import sys

SYSTEMS = ("tumbler", "zookeeper")
CEILING = "tmpfs"  # tumblerd's ensemble with its members' data on tmpfs (part 4)


def load(path):
    rows, meta = [], {}
    with open(path) as f:
        for line in f:
            if line.startswith("META "):
                k, _, v = line[5:].rstrip("\n").partition("=")
                meta[k] = v
            elif line.startswith("RESULT "):
                rows.append(dict(t.split("=", 1) for t in line.split()[1:] if "=" in t))
    return rows, meta


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def fmt(v, unit=""):
    if v is None:
        return "–"
    if abs(v) >= 100:
        s = "{:,.0f}".format(v)
    elif abs(v) >= 10:
        s = "{:.1f}".format(v)
    else:
        s = "{:.2f}".format(v)
    return s + unit


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt_ratio(r):
    if r is None:
        return "–"
    return ("{:.3g}×".format(r))


def pick(rows, **kw):
    return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]


def series(rows, step, key, system):
    out = []
    for r in pick(rows, system=system, step=step):
        v = num(r.get(key))
        if v is not None and v >= 0:
            out.append(v)
    return out


def failed(rows, step, key, system):
    return sum(1 for r in pick(rows, system=system, step=step) if (num(r.get(key)) or -1) < 0)


def ceiling(rows, bound):
    """The fair-lock goals beside the tmpfs ensemble's figures, and what one lock leaves the disk."""
    if not bound:
        return []
    L = ["With no disk write (the same build, its three members' data on tmpfs, in the same run; "
         "a bound, not a result): " + "; ".join(
             "{} {} ({} ZooKeeper's){}".format(
                 label.split(":")[0].replace("Fair lock, ", ""), fmt(c), fmt_ratio(ratio(c, z)),
                 "" if c >= 4 * z else ", **below 4× even so**")
             for label, _, c, z in bound) + "."]
    disk = pick(rows, system="machine", step="disk")
    one = [b for b in bound if b[1] == "lock_fair_1"]
    if one and disk:
        d = lambda k: num(disk[0].get(k))
        _, _, c, z = one[0]
        need, took = 1e6 / (4 * z), 1e6 / c
        L += ["", "Four times ZooKeeper's one-lock rate would need an acquisition every {:.0f} µs. "
              "With no disk write tumblerd's ensemble took {:.0f} µs an acquisition (1 / its rate), "
              "the hops of a handoff and the six processes' own work, which leaves {:.0f} µs for "
              "the synced writes a handoff waits for: the delete's, on the leader and on a follower "
              "at once. With no server, two synced writes at once took {} µs (p50) on this disk, "
              "{} µs by kernel AIO as tumblerd's log makes them, one alone {} µs.".format(
                  need, took, max(need - took, 0), fmt(d("sync_write2_p50_us")),
                  fmt(d("sync_write2_aio_p50_us")), fmt(d("sync_write_p50_us")))]
    return L


def main():
    rows, meta = load(sys.argv[1])
    out = []
    p = out.append
    p("Machine: {} × {}, {}, {}; disk {}. {}. ZooKeeper: {}. Tumbler: {}{}. Run {}, took {} s; "
      "load average {} before, {} after. {}.".format(
          meta.get("nproc", "?"), meta.get("cpu", "?"), meta.get("memory", "?"),
          meta.get("kernel", "?"), meta.get("disk", "?"), meta.get("java", "?"),
          meta.get("zookeeper", "?"), meta.get("tumbler", "?"),
          " " + meta["tumbler_timeouts"] if "tumbler_timeouts" in meta else "",
          meta.get("date", "?"),
          meta.get("elapsed_s", "?"), meta.get("load_before", "?"), meta.get("load_after", "?"),
          "{} kill, {} stop and {} rolling-restart trials per system, {} repetitions of the "
          "throughput runs, {} of the memory run{}{}".format(
              meta.get("kills", "?"), meta.get("stops", "?"), meta.get("rolls", "?"),
              meta.get("repeats", "?"), meta.get("mem_trials", "1"),
              "" if meta.get("parts", "1 2 3 4 5 6") == "1 2 3 4 5 6"
              else "; parts {} only".format(meta.get("parts")),
              "; QUICK=1: not results" if meta.get("quick") == "1" else "")))
    p("")

    mark = len(out)
    # Acknowledged writes lost, over every verify of every trial.
    lost = {s: 0 for s in SYSTEMS}
    checked = {s: 0 for s in SYSTEMS}
    stale_copies = {s: 0 for s in SYSTEMS}
    for r in rows:
        if r.get("step", "").endswith("verify") and r.get("system") in lost:
            lost[r["system"]] += int(num(r.get("missing")) or 0)
            checked[r["system"]] += int(num(r.get("checked")) or 0)
            if r["step"] == "stop-verify":
                stale_copies[r["system"]] = max(stale_copies[r["system"]],
                                                int(num(r.get("stale_copies")) or 0))
    p("Acknowledged writes looked for on every server after each trial: tumbler {:,} checked, "
      "**{} missing**; zookeeper {:,} checked, **{} missing**.".format(
          checked["tumbler"], lost["tumbler"], checked["zookeeper"], lost["zookeeper"]))
    p("")

    for r in rows:
        if r.get("step") == "death":
            p("**Node {} of {} was found gone between trials, exit status {}**{}; it was started "
              "again.".format(r.get("node"), r.get("system"), r.get("status"),
                              " (SIGKILL, not sent by the script)" if r.get("status") == "137" else ""))
            p("")
    p("| figure | tumbler median (min–max) | zookeeper median (min–max) | ratio of medians | ratio of max | goal | met |")
    p("|---|---:|---:|---:|---:|---:|:---:|")
    table = [
        ("Failover, leader killed (kill -9): kill → first write acknowledged through a survivor",
         "kill", "first_ack_ms", "≤ ¼"),
        ("Failover, leader stopped (SIGSTOP): stop → first write acknowledged through a survivor",
         "stop", "first_ack_ms", "≤ ¼"),
        ("Rejoin: killed node restarted (fork) → follower with the leader's zxid",
         "rejoin", "caught_up_ms", "–"),
        ("Rejoin: killed node restarted (fork) → a write acknowledged through a new session on it",
         "rejoin", "session_write_ms", "–"),
        ("Stopped leader resumed (SIGCONT) → follower with the leader's zxid",
         "resume", "caught_up_ms", "–"),
        ("Rolling restart (each member in turn: SIGTERM, started again, serving): the longest "
         "a client writing without pause waited between two acknowledgements",
         "roll", "longest_gap_ms", "–"),
        ("Rolling restart: the longest the lock went untaken, three `tumbler lock` loops "
         "(sessions free to move, 50 ms holds) on one lock meanwhile",
         "roll-lock", "longest_gap_ms", "–"),
        ("Rolling restart: a member started again → follower with the leader's zxid",
         "roll-rejoin", "caught_up_ms", "–"),
    ]
    for label, step, key, goal in table:
        t = series(rows, step, key, "tumbler")
        z = series(rows, step, key, "zookeeper")
        tm = statistics.median(t) if t else None
        zm = statistics.median(z) if z else None
        rm = ratio(tm, zm)
        rx = ratio(max(t) if t else None, max(z) if z else None)
        met = "–"
        if goal == "≤ ¼" and rm is not None:
            met = "yes" if rm <= 0.25 and (rx or 0) <= 0.25 else "**no**"
        nf = failed(rows, step, key, "tumbler"), failed(rows, step, key, "zookeeper")
        note = "" if nf == (0, 0) else " ({} / {} trials without one)".format(*nf)
        p("| {}{} | {} ms ({}–{}) | {} ms ({}–{}) | {} | {} | {} | {} |".format(
            label, note, fmt(tm), fmt(min(t) if t else None), fmt(max(t) if t else None),
            fmt(zm), fmt(min(z) if z else None), fmt(max(z) if z else None),
            fmt_ratio(rm), fmt_ratio(rx), goal, met))
    p("")
    for s in SYSTEMS:
        p("- {} per trial, kill: {}; stop: {}; rejoin: {}; resumed: {} (ms)".format(
            s,
            ", ".join(fmt(v) for v in series(rows, "kill", "first_ack_ms", s)),
            ", ".join(fmt(v) for v in series(rows, "stop", "first_ack_ms", s)),
            ", ".join(fmt(v) for v in series(rows, "rejoin", "caught_up_ms", s)),
            ", ".join(fmt(v) for v in series(rows, "resume", "caught_up_ms", s))))
    p("")
    for s in SYSTEMS:
        rs = pick(rows, system=s, step="roll")
        if rs:
            p("- {} rolling restarts: longest wait {} ms (at {} s into each run), {} writes "
              "acknowledged; the writer's failures: {} timeouts, {} losses, {} other, "
              "{} reconnects, {} sessions expired.".format(
                  s, ", ".join(fmt(num(r.get("longest_gap_ms"))) for r in rs),
                  ", ".join(fmt(num(r.get("gap_from_s"))) for r in rs),
                  sum(int(num(r.get("acks")) or 0) for r in rs),
                  *(sum(int(num(r.get(k)) or 0) for r in rs)
                    for k in ("timeouts", "losses", "other_errors", "reconnects", "expired"))))
    p("")
    p("What the session on the stopped leader saw of the create it sent while the leader was "
      "stopped (answer time after SIGCONT), and the most copies of that node any server held:")
    p("")
    for s in SYSTEMS:
        seen = ["{} ({} ms)".format(r.get("stale"), fmt(num(r.get("stale_answer_after_cont_ms"))))
                for r in pick(rows, system=s, step="stop")]
        errs = {}
        for r in pick(rows, system=s, step="stop") + pick(rows, system=s, step="kill"):
            for k in ("timeouts", "losses", "other_errors", "open_failures", "expired"):
                errs[k] = errs.get(k, 0) + int(num(r.get(k)) or 0)
        p("- {}: {}; copies: {}. The writer's failures over all trials: {}.".format(
            s, "; ".join(seen), stale_copies[s],
            ", ".join("{} {}".format(v, k.replace("_", " ")) for k, v in errs.items())))
    p("")

    if not any(x.get("step") in ("kill", "stop", "roll") for x in rows):
        del out[mark:]  # a run without parts 1, 2 and 6
    mark = len(out)

    # Throughput.
    p("| throughput, sessions spread over the three nodes | tumbler | zookeeper | ratio (per-repetition range) | goal | met |")
    p("|---|---:|---:|---:|---:|:---:|")
    tp = [
        ("Fair lock, 100 clients, 1 lock: acquisitions/s", "lock_fair_1", None, "acq_per_s"),
        ("Fair lock, 100 clients, 10 locks: acquisitions/s", "lock_fair_10", None, "acq_per_s"),
        ("Fair lock, 100 clients all on the leader, 1 lock: acquisitions/s", "lock_fair_1_leader",
         None, "acq_per_s"),
        ("create/s, 18 clients × 64 pipelined", "raw", "create", "ops_per_s"),
        ("getData/s, 18 clients × 64 pipelined", "raw", "get", "ops_per_s"),
        ("delete/s, 18 clients × 64 pipelined", "raw", "delete", "ops_per_s"),
    ]
    extra = []
    bound = []  # (label, step, tmpfs median, zookeeper median)
    for label, step, op, key in tp:
        per = {}
        for s in SYSTEMS:
            for r in pick(rows, system=s, step=step):
                if op is not None and r.get("op") != op:
                    continue
                per.setdefault(s, {})[r.get("rep")] = r
        t = [num(r.get(key)) for r in per.get("tumbler", {}).values()]
        z = [num(r.get(key)) for r in per.get("zookeeper", {}).values()]
        tm = statistics.median(t) if t else None
        zm = statistics.median(z) if z else None
        reps = sorted(set(per.get("tumbler", {})) & set(per.get("zookeeper", {})))
        rr = [ratio(num(per["tumbler"][k].get(key)), num(per["zookeeper"][k].get(key))) for k in reps]
        rr = [x for x in rr if x is not None]
        rng = " ({}–{})".format(fmt_ratio(min(rr)).rstrip("×"), fmt_ratio(max(rr))) if len(rr) > 1 else ""
        rm = ratio(tm, zm)
        goal = "≥ 4×" if op != "delete" and not step.endswith("_leader") else "–"
        met = "–" if goal == "–" or rm is None else ("yes" if rm >= 4 else "**no**")
        if tm is None and zm is None:
            continue  # a scenario P4 left out
        p("| {} | {} | {} | {}{} | {} | {} |".format(label, fmt(tm), fmt(zm), fmt_ratio(rm), rng, goal, met))
        if step.startswith("lock"):
            c = series(rows, step, key, CEILING)
            if c and zm:
                bound.append((label, step, statistics.median(c), zm))
            for s in SYSTEMS + (CEILING,):
                rs = list(per.get(s, {}).values())
                if not rs:
                    continue
                med = lambda k: statistics.median([num(r.get(k)) or 0 for r in rs])
                extra.append("- {} {}: handoff p50 {} µs, p99 {} µs (release → the watch's notice p50 "
                             "{} µs, notice → grant {} µs); acquisition p99 {} µs; "
                             "{} violations, {} errors.".format(
                                 s, step, fmt(med("handoff_p50_us")), fmt(med("handoff_p99_us")),
                                 fmt(med("notice_p50_us")), fmt(med("regrant_p50_us")),
                                 fmt(med("acq_p99_us")),
                                 int(sum(num(r.get("violations")) or 0 for r in rs)),
                                 int(sum(num(r.get("errors")) or 0 for r in rs))))
        else:
            for s in SYSTEMS:
                rs = list(per.get(s, {}).values())
                if rs:
                    extra.append("- {} {}: latency p50 {} µs, p99 {} µs; {} errors.".format(
                        s, op, fmt(statistics.median([num(r.get("lat_p50_us")) or 0 for r in rs])),
                        fmt(statistics.median([num(r.get("lat_p99_us")) or 0 for r in rs])),
                        int(sum(num(r.get("errors")) or 0 for r in rs))))
    p("")
    out.extend(extra)
    p("")
    for line in ceiling(rows, bound):
        p(line)
    for s in SYSTEMS:
        parts = []
        for via in ("leader", "follower"):
            rs = pick(rows, system=s, step="single_" + via)
            if rs:
                parts.append("through the {}: {}/s, p50 {} µs, p99 {} µs".format(
                    via, fmt(num(rs[0].get("ops_per_s"))), fmt(num(rs[0].get("lat_p50_us"))),
                    fmt(num(rs[0].get("lat_p99_us")))))
        if parts:
            p("- {}, one client, one create at a time: {}.".format(s, "; ".join(parts)))
    p("")

    if not any(x.get("step", "").startswith(("lock", "raw", "single")) for x in rows):
        del out[mark:]  # a run without part 4

    # RSS.
    p("| RSS per node (the largest of the three) | tumbler | zookeeper | ratio | goal | met |")
    p("|---|---:|---:|---:|---:|:---:|")
    whens = []
    for r in rows:
        if r.get("step") == "rss" and r.get("system") == "tumbler" and (r.get("when"), r.get("trial")) not in whens:
            whens.append((r.get("when"), r.get("trial")))
    names = {"idle": "fresh ensemble, idle",
             "loaded": "after the throughput runs (not like for like: each holds the high-water "
                       "of its own create phase)",
             "fresh": "another fresh ensemble, idle"}
    loaded = []  # per trial of part 5: the ratio of the largest nodes after the znodes
    for w, trial in whens:
        sel = {"when": w} if trial is None else {"when": w, "trial": trial}
        t = [num(r.get("rss_kb")) for r in pick(rows, system="tumbler", step="rss", **sel)]
        z = [num(r.get("rss_kb")) for r in pick(rows, system="zookeeper", step="rss", **sel)]
        label = names.get(w, "then " + w.replace("znodes", "") + " znodes of 100 B" if w.startswith("znodes") else w)
        if trial is not None:
            label += " (trial {})".format(trial)
        rm = ratio(max(t) if t else None, max(z) if z else None)
        if w.startswith("znodes") and rm is not None:
            loaded.append((rm, max(t), max(z)))
        met = "–" if rm is None else ("yes" if rm <= 0.125 else "**no**")
        p("| {} (all three: {} / {} kB) | {} kB | {} kB | {} | ≤ ⅛ | {} |".format(
            label, ", ".join(fmt(v) for v in t), ", ".join(fmt(v) for v in z),
            fmt(max(t) if t else None), fmt(max(z) if z else None), fmt_ratio(rm), met))
    if len(loaded) > 1:
        p("")
        p("After the znodes, over {} trials: tumbler's largest node {}–{} kB (median {}), "
          "ZooKeeper's {}–{} kB (median {}); the ratio of the largest nodes {}–{} "
          "(median {}).".format(
              len(loaded), fmt(min(x[1] for x in loaded)), fmt(max(x[1] for x in loaded)),
              fmt(statistics.median(x[1] for x in loaded)),
              fmt(min(x[2] for x in loaded)), fmt(max(x[2] for x in loaded)),
              fmt(statistics.median(x[2] for x in loaded)),
              fmt_ratio(min(x[0] for x in loaded)), fmt_ratio(max(x[0] for x in loaded)),
              fmt_ratio(statistics.median(x[0] for x in loaded))))
    heap = pick(rows, system="zookeeper", step="heap")
    if heap:
        p("")
        p("ZooKeeper's Java heap (jcmd GC.heap_info), committed / used, each member, kB; and its "
          "RSS after a full collection (jcmd GC.run), which came after the figure above:")
        p("")
        trials = []
        for r in heap:
            if r.get("trial") not in trials:
                trials.append(r.get("trial"))
        for trial in trials:
            parts = []
            for w in sorted({r.get("when") for r in pick(heap, trial=trial)}, key=len):
                hs = pick(heap, trial=trial, when=w)
                parts.append("{}: {}".format(
                    "after the znodes" if not w.endswith("-gc") else "after a full collection",
                    ", ".join("{} / {}".format(fmt(num(r.get("heap_committed_kb"))),
                                               fmt(num(r.get("heap_used_kb")))) for r in hs)))
            gc = [num(r.get("rss_kb")) for r in pick(rows, system="zookeeper", step="rss", trial=trial)
                  if r.get("when", "").endswith("-gc")]
            p("- trial {}: {}; RSS after the collection {} kB.".format(
                trial, "; ".join(parts), ", ".join(fmt(v) for v in gc)))
    print("\n".join(out))


if __name__ == "__main__":
    main()
