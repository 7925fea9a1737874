"""The HTTP checks of http.sh that read JSON or speak raw bytes: one Python
process for all of them (each start costs a few hundred ms).

  http_check.py admin URL CLIENT_PORT NODES   the AdminServer's answers
  http_check.py hostile MPORT APORT           bytes that are no HTTP
Prints what it checked; exits non-zero at the first failure."""
import json
import re
import socket
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
    d = command(base, "stmk?traceMask=5")
    assert d["tracemask"] == 5, d
    d = command(base, "stmk?traceMask=5x")
    assert d["error"].startswith("setTraceMask requires"), d
    d = command(base, "voting_view")
    assert d["current_config"] == {}, d
    d = command(base, "no_such")  # 200, as ZooKeeper 3.8
    assert d["error"] == "Unknown command: no_such", d
    # a name of any bytes: still valid JSON (json.loads above), ASCII
    d = command(base, "%22%5C%ff%0a")
    assert d["command"] == '"\\??', d
    print("admin: %d commands answer JSON; srvr, conf, mntr, wchs, cons, "
          "stmk, voting_view, unknown names" % len(names))


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
    print("hostile: %d inputs on each port answered with an error or a "
          "close; %d unfinished requests closed when idle (%.1f s)"
          % (len(JUNK), len(UNFINISHED), time.monotonic() - t))


if sys.argv[1] == "admin":
    admin(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
else:
    hostile(int(sys.argv[2]), int(sys.argv[3]))
