"""The HTTP checks of http.sh that read JSON or speak raw bytes: one Python
process for all of them (each start costs a few hundred ms).

  http_check.py admin URL CLIENT_PORT NODES   the AdminServer's answers
  http_check.py hostile MPORT APORT           bytes that are no HTTP
  http_check.py summaries FILE                ZooKeeper's summaries in a scrape
Prints what it checked; exits non-zero at the first failure."""
import json
import math
import re
import socket
import struct
import sys
import time
import urllib.error
import urllib.request


def get(url):
    """(status, body) of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def command(base, name, status=200):
    code, body = get(base + "/" + name)
    assert code == status, (name, code, body)
    d = json.loads(body)
    assert "command" in d and "error" in d, (name, d)
    return d


def admin(base, client_port, nodes):
    code, page = get(base)
    assert code == 200, code
    names = re.findall(r'href="/commands/([a-z_]+)"', page.decode())
    assert len(names) >= 15, names
    # Every listed command, and ZooKeeper's short names, answer JSON; only
    # leader (standalone) and set_trace_mask (no argument) say an error.
    for n in names + "ruok srvr stat mntr conf cons envi dump wchs wchc wchp".split():
        d = command(base, n)
        assert d["error"] is None or d["command"] in ("leader", "set_trace_mask"), d
    d = command(base, "srvr")
    assert d["command"] == "server_stats", d
    assert d["server_stats"]["server_state"] == "standalone", d
    assert d["node_count"] == nodes, d
    d = command(base, "conf")
    assert d["client_port"] == client_port and d["tick_time"] == 2000, d
    assert d["tumbler_config"]["admin.idleTimeout"] == 1000, d
    d = command(base, "mntr")
    assert d["znode_count"] == nodes and d["server_state"] == "standalone", d
    d = command(base, "wchs")
    assert {"num_connections", "num_paths", "num_total_watches"} <= set(d), d
    d = command(base, "cons")
    assert isinstance(d["connections"], list), d
    # A session's last cxid is its own last request's, not a ping's (-2).
    s = socket.create_connection(("127.0.0.1", client_port), timeout=10)
    req = struct.pack(">iqiqi16s?", 0, 0, 30000, 0, 16, b"\0" * 16, False)
    s.sendall(struct.pack(">i", len(req)) + req)
    data = b""
    while len(data) < 40:
        data += s.recv(4096)
    sid = struct.unpack(">q", data[12:20])[0]
    exists = struct.pack(">iii1s?", 5, 3, 1, b"/", False)
    ping = struct.pack(">ii", -2, 11)
    for r in (exists, ping):
        s.sendall(struct.pack(">i", len(r)) + r)
    data = b""
    while len(data) < (4 + 16 + 68) + (4 + 16):
        data += s.recv(4096)
    mine = [c for c in command(base, "cons")["connections"]
            if c.get("session_id") == sid]
    assert len(mine) == 1 and mine[0]["last_cxid"] == 5, mine
    assert mine[0]["last_operation"] == "PING", mine
    # Its last zxid is the one its last reply carried, a read's and a
    # ping's too (was -1 for a session that only read).
    ping_zxid = struct.unpack(">q", data[96:104])[0]
    assert ping_zxid > 0 and mine[0]["last_zxid"] == ping_zxid, (ping_zxid, mine)
    s.close()
    d = command(base, "stmk?traceMask=5")
    assert d["tracemask"] == 5, d
    d = command(base, "stmk?traceMask=5x")
    assert d["error"].startswith("setTraceMask requires"), d
    # Three sessions opened at once: dump lists each expiry bucket once
    # (JSON keys them by time; a key twice would hide sessions).
    sessions = [socket.create_connection(("127.0.0.1", client_port), timeout=10)
                for _ in range(3)]
    ids = []
    for s in sessions:
        req = struct.pack(">iqiqi16s?", 0, 0, 30000, 0, 16, b"\0" * 16, False)
        s.sendall(struct.pack(">i", len(req)) + req)
        data = b""
        while len(data) < 40:
            data += s.recv(4096)
        ids.append(struct.unpack(">q", data[12:20])[0])
    code, raw = get(base + "/dump")
    assert code == 200, code
    pairs = json.loads(raw, object_pairs_hook=lambda kv: kv)
    buckets = dict(pairs)["expiry_time_to_session_ids"]
    times = [k for k, _ in buckets]
    assert len(times) == len(set(times)), raw
    listed = [i for _, v in buckets for i in v]
    assert all(i in listed for i in ids), (ids, raw)
    for s in sessions:
        s.close()
    d = command(base, "voting_view")
    assert d["current_config"] == {}, d
    d = command(base, "no_such")  # 200, as ZooKeeper 3.8
    assert d["error"] == "Unknown command: no_such", d
    # a name of any bytes: still valid JSON (json.loads above), ASCII
    d = command(base, "%22%5C%ff%0a")
    assert d["command"] == '"\\??', d
    print("admin: %d commands answer JSON; srvr, conf, mntr, wchs, cons "
          "(a session's last cxid and zxid), "
          "stmk, dump's buckets, voting_view, unknown names" % len(names))


def exchange(port, data, idle=False):
    """Sends data, then (unless idle) closes our sending half; returns what
    the server sent before closing.  Fails if it does not close within
    10 s."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(data)
        if not idle:
            s.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the server closed first: what it said is still to read
    got = b""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            b = s.recv(4096)
        except socket.timeout:
            raise AssertionError("port %d still open after %r" % (port, data[:40]))
        except OSError:
            break  # reset: closed too
        if not b:
            break
        got += b
    else:
        raise AssertionError("port %d still open after %r" % (port, data))
    s.close()
    return got


# Answered (or closed) at once.
JUNK = [
    b"GARBAGE\r\n\r\n",
    b"GET / HTTP/9.9\r\n\r\n",
    b"GET /commands/ruok HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\n" + b"X: y\r\n" * 5000 + b"\r\n",
    b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n\r\n",
]
# No request line yet: the connection waits for one, until the idle
# timeout closes it (the AdminServer's is 1 s in http.sh).
UNFINISHED = [
    b"\x00\x01\x02\xff\r\n\r\n",
    b"\r\n" * 10000,
    b"GET /comm",
]


def hostile(mport, aport):
    for port in (mport, aport):
        for data in JUNK:
            got = exchange(port, data)
            # nothing, or an HTTP error status
            assert not got or re.match(rb"HTTP/1\.[01] [45]\d\d ", got), (data[:40], got[:80])
        # A GET is answered before its body is looked at; a body that is
        # no chunk then ends the connection.
        got = exchange(port, b"GET /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
                       b"chunked\r\n\r\nzz\r\nGET /x HTTP/1.1\r\n\r\n")
        assert got.count(b"HTTP/1.1 ") <= 1, got
    t = time.monotonic()
    for data in UNFINISHED:
        assert exchange(aport, data, idle=True) == b""
    at_limit(mport)
    t = dripping(aport)
    print("hostile: %d inputs on each port answered with an error or a "
          "close; %d unfinished requests closed when idle; the port serves "
          "again after its connection limit, and %.1f s after the limit of "
          "requests sent a byte at a time"
          % (len(JUNK), len(UNFINISHED), t))


def fill(port, first):
    """As many connections as the port takes (32 from each of two
    addresses), each having sent `first`."""
    socks = []
    for src in ("127.0.0.1", "127.0.0.2"):
        for _ in range(32):
            s = socket.socket()
            s.bind((src, 0))
            s.connect(("127.0.0.1", port))
            s.sendall(first)
            socks.append(s)
    return socks


def dripping(port):
    """As many connections as allowed (32 from each of two addresses),
    each sending a byte of a request line every 0.3 s, never ending it:
    none is ever idle for the idle timeout (1 s on the AdminServer in
    http.sh), but each request has taken longer than it once 1 s has
    passed, and is cut; the port then serves again.  Seconds until it
    did."""
    socks = fill(port, b"G")
    start = time.monotonic()
    served = None
    while served is None and time.monotonic() < start + 8:
        time.sleep(0.3)
        for s in socks:
            try:
                s.sendall(b"E")
            except OSError:
                pass  # cut
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/commands/ruok"
                                        % port, timeout=0.5) as r:
                if r.status == 200:
                    served = time.monotonic() - start
        except (OSError, urllib.error.URLError):
            pass
    for s in socks:
        s.close()
    assert served is not None, "still held by requests sent a byte at a time"
    return served


def at_limit(port):
    """The connection limit (32 from each of two addresses), one more
    connection tried, then all closed at once: the port serves again
    (libmicrohttpd stops listening at its limit, until its next run)."""
    socks = fill(port, b"GET /met")
    time.sleep(0.3)
    extra = socket.create_connection(("127.0.0.1", port), timeout=2)
    extra.sendall(b"G")
    time.sleep(0.3)
    for s in socks + [extra]:
        s.close()
    code, _ = get("http://127.0.0.1:%d/metrics" % port)
    assert code == 200, code


def parse(text):
    """({family: type}, [(name, {label: value}, float)]) of a scrape."""
    types, samples = {}, []
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            types[name] = kind
        elif line and not line.startswith("#"):
            m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
            assert m, line
            labels = dict(re.findall(r'([a-zA-Z_]+)="([^"]*)"', m.group(2) or ""))
            samples.append((m.group(1), labels, float(m.group(3))))
    return types, samples


# ZooKeeper counts a request in updatelatency when it makes a txn; auth and
# sasl in neither; every other it answers in readlatency.
UPDATES = set("create delete setData setACL check multi create2 reconfig "
              "createContainer deleteContainer createTTL createSession "
              "closeSession".split())
NEITHER = {"auth", "sasl"}


def source(samples, hist, keep):
    """count, sum (ms) and cumulative buckets [(le ms, n)] of the series of
    histogram `hist` whose labels `keep` accepts, added together."""
    count, total, buckets = 0, 0.0, {}
    for name, labels, v in samples:
        if not keep(labels):
            continue
        if name == hist + "_count":
            count += v
        elif name == hist + "_sum":
            total += v * 1000
        elif name == hist + "_bucket":
            le = float(labels["le"]) * 1000
            buckets[le] = buckets.get(le, 0) + v
    return count, total, sorted(buckets.items())


def summaries(path):
    types, samples = parse(open(path).read())
    one = {name: v for name, labels, v in samples if not labels}
    lat = "tumbler_request_latency_seconds"
    checks = [
        ("fsynctime", ["0.5"],
         source(samples, "tumbler_log_write_duration_seconds", lambda l: True)),
        ("snapshottime", ["0.5"], None),
        ("readlatency", ["0.5", "0.9", "0.99"],
         source(samples, lat, lambda l: l.get("op") not in UPDATES | NEITHER)),
        ("updatelatency", ["0.5", "0.9", "0.99"],
         source(samples, lat, lambda l: l.get("op") in UPDATES)),
    ]
    for name, quantiles, src in checks:
        assert types.get(name) == "summary", (name, types.get(name))
        qs = [(labels, v) for n, labels, v in samples if n == name]
        assert [l for l, _ in qs] == [{"quantile": q} for q in quantiles], (name, qs)
        values = [v for _, v in qs]
        count, total = one[name + "_count"], one[name + "_sum"]
        assert count > 0 and total >= 0, (name, count, total)
        assert all(0 <= a <= b for a, b in zip(values, values[1:] + [1e4])), (name, values)
        if src is None:  # no histogram of its own: the snapshots' count
            assert count == one["tumbler_snapshots_taken"], (name, count)
            assert total > 0, (name, total)
            continue
        # the histogram's count and sum, in ms; each quantile in the
        # bucket that holds its rank
        scount, stotal, buckets = src
        assert count == scount and abs(total - stotal) < 0.002, (name, count, total, src)
        for q, v in zip(quantiles, values):
            rank, lower = float(q) * count, 0
            for le, n in buckets:
                if n >= rank:
                    assert lower <= v <= le, (name, q, v, lower, le)
                    break
                lower = le
    # a server alone holds no elections: the summary is there, empty, as
    # ZooKeeper's standalone server gives it
    assert types.get("election_time") == "summary", types.get("election_time")
    el = [(l, v) for n, l, v in samples if n == "election_time"]
    assert len(el) == 1 and el[0][0] == {"quantile": "0.5"} and math.isnan(el[0][1]), el
    assert one["election_time_count"] == 0 and one["election_time_sum"] == 0, \
        (one["election_time_count"], one["election_time_sum"])
    print("summaries: %s have ZooKeeper's shape, counts and sums as their "
          "histograms', quantiles in order and in their buckets"
          % ", ".join("%s (%d)" % (n, one[n + "_count"]) for n, _, _ in checks))


if sys.argv[1] == "admin":
    admin(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
elif sys.argv[1] == "summaries":
    summaries(sys.argv[2])
else:
    hostile(int(sys.argv[2]), int(sys.argv[3]))
