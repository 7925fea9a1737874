#!/usr/bin/python3
"""The client side of oplog.sh: what provokes each line of tumblerd's log, on raw sockets
speaking ZooKeeper's protocol (jute, big-endian, a 4-byte length before each frame).

  oplog.py abandon PORT TIMEOUT_MS
      opens a session with that timeout and leaves without closing it: the server expires it.
  oplog.py burst PORT N
      opens a session and sends N creates of /burst-I in one write, then reads the N replies
      (each must be OK); with slowRequestMs=1 the last ones have waited behind the others.
  oplog.py crowd PORT N
      opens N connections and prints how many of them the server closed at once.
  oplog.py garbage PORT
      sends a ConnectRequest cut short: the server must close the connection.
  oplog.py refused PORT
      sends a ConnectRequest and expects the connection closed without an answer.
  oplog.py check-json FILE
      every line of FILE is one JSON object with time, level and message; prints the
      objects' messages and fields, one per line, as JSON, for grep.
  oplog.py find FILE EXPR
      prints the lines of FILE (JSON objects, as check-json reads them) for which the Python
      expression EXPR over `o`, the line's object, is true; status 1 if there is none.
  oplog.py tls PORT
      sends a ConnectRequest in clear to a TLS port: the server must close the connection.

Exit status 0, or 1 with the reason on stderr.
"""
import json
import socket
import struct
import sys

DEADLINE_S = 20


def fail(why):
    sys.stderr.write("oplog.py: %s\n" % why)
    sys.exit(1)


def frame(body):
    return struct.pack(">i", len(body)) + body


def connect_request(timeout_ms):
    # protocolVersion, lastZxidSeen, timeOut, sessionId, passwd (16 bytes), readOnly
    return struct.pack(">iqiqi16sB", 0, 0, timeout_ms, 0, 16, b"\0" * 16, 0)


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_frame(sock):
    head = read_exact(sock, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">i", head)
    return read_exact(sock, n)


def session(port, timeout_ms):
    sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)
    sock.sendall(frame(connect_request(timeout_ms)))
    resp = read_frame(sock)
    if resp is None or len(resp) < 20:
        fail("no ConnectResponse")
    _, negotiated, sid = struct.unpack(">iiq", resp[:16])
    if sid == 0:
        fail("session refused")
    return sock, sid


def string(s):
    b = s.encode()
    return struct.pack(">i", len(b)) + b


def create(xid, path):
    open_acl = struct.pack(">ii", 1, 31) + string("world") + string("anyone")
    return frame(struct.pack(">ii", xid, 1) + string(path) + struct.pack(">i", 0) + open_acl +
                 struct.pack(">i", 0))


def abandon(port, timeout_ms):
    sock, sid = session(port, timeout_ms)
    print("0x%x" % sid)
    sock.close()  # no closeSession: the session stays until it expires


def burst(port, n):
    sock, sid = session(port, 30000)
    sock.sendall(b"".join(create(i + 1, "/burst-%d" % i) for i in range(n)))
    for i in range(n):
        reply = read_frame(sock)
        if reply is None:
            fail("connection closed after %d replies" % i)
        xid, _, err = struct.unpack(">iqi", reply[:16])
        if err != 0:
            fail("create %d: error %d" % (xid, err))
    print("0x%x" % sid)
    sock.close()


def crowd(port, n):
    socks = [socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S) for _ in range(n)]
    closed = 0
    for s in socks:
        s.settimeout(0.5)  # the refused ones are closed at once; the others stay silent
        try:
            if s.recv(1) == b"":
                closed += 1
        except socket.timeout:
            pass
        except ConnectionResetError:
            closed += 1
    print(closed)
    for s in socks:
        s.close()


def garbage(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)
    sock.sendall(frame(connect_request(4000)[:10]))
    if read_frame(sock) is not None:
        fail("a ConnectRequest cut short was answered")


def refused(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=3)
    sock.sendall(frame(connect_request(4000)))
    try:
        if read_frame(sock) is not None:
            fail("the server answered the ConnectRequest")
    except ConnectionResetError:
        pass
    except socket.timeout:
        fail("no answer, and the connection still open")


def check_json(path):
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines[-1] != b"":
        fail("%s does not end in a newline" % path)
    for i, raw in enumerate(lines[:-1], 1):
        try:
            obj = json.loads(raw.decode("utf-8"))
        except ValueError as e:
            fail("%s:%d is not JSON (%s): %r" % (path, i, e, raw[:200]))
        if not isinstance(obj, dict):
            fail("%s:%d is not an object" % (path, i))
        for key in ("time", "level", "message"):
            if not isinstance(obj.get(key), str):
                fail("%s:%d has no %s" % (path, i, key))
        print(json.dumps(obj, sort_keys=True))
    if len(lines) < 2:
        fail("%s is empty" % path)


def read_json(path):
    with open(path, "rb") as f:
        return [json.loads(raw.decode("utf-8")) for raw in f.read().split(b"\n") if raw]


def find(path, expr):
    found = 0
    for o in read_json(path):
        try:
            if eval(expr, {}, {"o": o}):
                print(json.dumps(o, sort_keys=True))
                found += 1
        except (KeyError, TypeError):
            pass  # a line without the fields looked at is no match
    if not found:
        fail("no line of %s has %s" % (path, expr))


def tls_in_clear(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)
    sock.sendall(frame(connect_request(4000)))
    try:
        if read_frame(sock) is not None:
            fail("the TLS port answered a ConnectRequest in clear")
    except ConnectionResetError:
        pass


def main():
    if len(sys.argv) < 3:
        fail("usage: see the docstring")
    cmd, arg = sys.argv[1], sys.argv[2]
    if cmd == "abandon":
        abandon(int(arg), int(sys.argv[3]))
    elif cmd == "burst":
        burst(int(arg), int(sys.argv[3]))
    elif cmd == "crowd":
        crowd(int(arg), int(sys.argv[3]))
    elif cmd == "garbage":
        garbage(int(arg))
    elif cmd == "refused":
        refused(int(arg))
    elif cmd == "check-json":
        check_json(arg)
    elif cmd == "find":
        find(arg, sys.argv[3])
    elif cmd == "tls":
        tls_in_clear(int(arg))
    else:
        fail("unknown command %s" % cmd)


main()
