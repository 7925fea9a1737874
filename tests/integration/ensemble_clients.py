#!/usr/bin/python3
"""kazoo's part of ensemble_clients.sh, against a 3-member tumblerd ensemble on 127.0.0.1.

  ensemble_clients.py failover PORT PORT PORT
      kazoo given all three members: create/get/set/delete, a watch fired by a write made
      through another member, an ephemeral node; then it prints "kill PORT", the member it is
      connected to, which the caller kills (SIGKILL), and kazoo must come back on another
      member with the same session, its ephemeral node still there, and its DataWatch and
      ChildrenWatch firing on later writes.
  ensemble_clients.py ryw FOLLOWER_PORT
      read-your-writes on a follower: each write, then a read at once, sees the write; also
      with the read pipelined behind the write (sent before the write's reply came back).
  ensemble_clients.py sync READER_PORT WRITER_PORT...
      a client on READER writes nothing; another, on each WRITER, writes; the reader's sync
      then get sees every write.
  ensemble_clients.py election LEADER_PORT FOLLOWER_PORT FOLLOWER_PORT
      writes one after another through each follower (a client each); after 20 each, "kill
      LEADER_PORT" is printed and the caller kills the leader: for 2.5 s more, each write
      must be acknowledged or see the connection lost (kazoo then reconnects), never be
      answered with another error.  Writing through both survivors, one of them is a follower
      of the new leader whichever is elected.
  ensemble_clients.py idle PORT PORT PORT
      about 2 MB of creates through the first member, then a pause: every member takes a
      snapshot and keeps less than a quarter of its snapshot limit of log in memory (mntr),
      followers as well as the leader.
  ensemble_clients.py relink LEADER_ELECTION_PORT
      two links to the leader's election port, each saying (HELLO) it is the same follower,
      one no member is (id 77): the leader ends one of them (the older: what it still had
      unread there came before the other's) and keeps the other.

Every step prints "  ok ..." or "  FAIL ..."; the exit status is 1 if any step failed.
Debian's python3-kazoo (run with /usr/bin/python3).
"""
import logging
import queue
import socket
import sys
import threading
import time

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (ConnectionLoss, KazooException, NodeExistsError,
                              SessionMovedError, SystemZookeeperError)
from kazoo.protocol.states import EventType

logging.basicConfig(level=logging.ERROR, format="  kazoo: %(levelname)s %(message)s")

FAILED = []


def ok(msg):
    print("  ok   " + msg, flush=True)


def fail(msg):
    print("  FAIL " + msg, flush=True)
    FAILED.append(msg)


def expect(cond, msg, why=""):
    if cond:
        ok(msg)
    else:
        fail(msg + (": " + why if why else ""))
    return cond


def hosts(ports):
    return ",".join("127.0.0.1:%d" % p for p in ports)


def client(ports, timeout=10.0):
    zk = KazooClient(hosts=hosts(ports), timeout=timeout)
    zk.start(timeout=20)
    return zk


def peer_port(zk, wait=10.0):
    """The client port of the member zk is connected to (None while it is not)."""
    deadline = time.time() + wait
    while time.time() < deadline:
        try:
            sock = zk._connection._socket
            if sock is not None and zk.state == KazooState.CONNECTED:
                return sock.getpeername()[1]
        except OSError:
            pass
        time.sleep(0.02)
    return None


NOTED = set()


def retried(fn, *args, **kw):
    """fn(*args) again after a lost connection (a member electing, a client moving), for 15 s;
    a create that did happen before its connection was lost gives NodeExistsError then.
    A member without a leader link answers writes ZSYSTEMERROR for a while after the leader's
    death instead of closing the connection (check 8 fails on that): retried here too, and
    said, so that the checks that only need the write done test what they are for."""
    deadline = time.time() + 15
    first = True
    while True:
        try:
            return fn(*args, **kw)
        except NodeExistsError:
            if first:
                raise
            return None
        except (ConnectionLoss, SessionMovedError, SystemZookeeperError) as e:
            if time.time() > deadline:
                raise
            if isinstance(e, SystemZookeeperError) and "syserr" not in NOTED:
                NOTED.add("syserr")
                print("  note a write through a survivor was answered ZSYSTEMERROR right after "
                      "the kill (the bug check 8 shows); retried", flush=True)
            time.sleep(0.1)
        first = False


def event(q, what, wait=10.0):
    try:
        return q.get(timeout=wait)
    except queue.Empty:
        return None


def event_is(ev, etype, path):
    return ev is not None and ev.type == etype and ev.path == path


def cmd_failover(args):
    ports = [int(a) for a in args]

    states = []
    back, dropped = threading.Event(), threading.Event()

    def listener(state):
        states.append(state)
        if state == KazooState.CONNECTED:
            back.set()
        else:
            dropped.set()
        return None  # a true value would remove the listener

    zk = client(ports)
    zk.add_listener(listener)
    sid = zk.client_id[0]
    port = peer_port(zk)
    if port not in ports:
        fail("kazoo is connected to no member (%r)" % (port,))
        return
    others = [p for p in ports if p != port]
    zk2 = client(others)
    port2 = peer_port(zk2)
    ok("kazoo given all three members: session 0x%x on member :%d; a second client on :%d"
       % (sid, port, port2))

    # Node operations.
    zk.ensure_path("/ens")
    zk.create("/ens/c", b"v1")
    data, st = zk.get("/ens/c")
    expect(data == b"v1" and st.version == 0, "create then get", "got %r version %d"
           % (data, st.version))
    st = zk.set("/ens/c", b"v2")
    data, st2 = zk.get("/ens/c")
    expect(st.version == 1 and data == b"v2" and st2.version == 1, "set then get",
           "set gave version %d, get %r version %d" % (st.version, data, st2.version))
    zk2.sync("/ens/c")
    data, _ = zk2.get("/ens/c")
    expect(data == b"v2", "the write read through the other member (after sync)",
           "got %r" % (data,))
    zk.delete("/ens/c")
    expect(zk.exists("/ens/c") is None, "delete", "the node is still there")

    # A watch fired by a write through another member.
    zk.create("/ens/w", b"0")
    q = queue.Queue()
    zk.get("/ens/w", watch=q.put)
    zk2.set("/ens/w", b"1")
    ev = event(q, "data")
    expect(event_is(ev, EventType.CHANGED, "/ens/w"),
           "a data watch fired by a write through :%d" % port2, "got %r" % (ev,))

    # An ephemeral node, seen by the other client as this session's.
    zk.create("/ens/eph", b"e", ephemeral=True)
    st = zk.exists("/ens/eph")
    zk2.sync("/ens/eph")
    st2 = zk2.exists("/ens/eph")
    expect(st is not None and st.ephemeralOwner == sid and st2 is not None
           and st2.ephemeralOwner == sid, "ephemeral node owned by the session",
           "owner %r / %r" % (st and hex(st.ephemeralOwner), st2 and hex(st2.ephemeralOwner)))

    # Watches set before the member goes.  kazoo 2.8 forgets its one-shot watches when its
    # connection drops (each gets a NONE event, and no SetWatches is sent on reconnect): its
    # way of watching across a reconnect is its DataWatch and ChildrenWatch recipes, which set
    # their watch again on the member they come back on.  (The server's side of a watch
    # re-registered with SetWatches is checked with the official C client, ensemble_watch.c.)
    zk.ensure_path("/ens/kids")
    qd, qe, qc = queue.Queue(), queue.Queue(), queue.Queue()
    zk.get("/ens/w", watch=qd.put)
    zk.exists("/ens/new", watch=qe.put)
    zk.get_children("/ens/kids", watch=qc.put)
    dw, cw = queue.Queue(), queue.Queue()
    zk.DataWatch("/ens/w", lambda data, stat: dw.put(data))
    zk.ChildrenWatch("/ens/kids", lambda kids: cw.put(sorted(kids)))
    first_d, first_c = event(dw, "DataWatch"), event(cw, "ChildrenWatch")
    expect(first_d == b"1" and first_c == [], "DataWatch and ChildrenWatch set",
           "first calls gave %r and %r" % (first_d, first_c))

    back.clear()
    dropped.clear()
    del states[:]
    print("kill %d" % port, flush=True)  # ensemble_clients.sh kills it (SIGKILL)
    if not expect(dropped.wait(15), "kazoo saw its member :%d go" % port,
                  "still connected 15 s later"):
        return
    t0 = time.time()
    if not expect(back.wait(20), "kazoo reconnected after the kill of :%d" % port,
                  "not connected again within 20 s; states %s" % states):
        return
    newport = peer_port(zk)
    ok("... in %.2f s, to :%s; states %s" % (time.time() - t0, newport,
                                            [str(s) for s in states]))
    expect(KazooState.LOST not in states, "the session was never lost", "states %s" % states)
    expect(newport in others, "now on another member", "on :%s" % newport)
    expect(zk.client_id[0] == sid, "same session id",
           "0x%x before, 0x%x after" % (sid, zk.client_id[0]))
    st = zk.exists("/ens/eph")
    expect(st is not None and st.ephemeralOwner == sid, "its ephemeral node is still there",
           "exists gives %r" % (st,))
    oneshot = [event(q, "none", 0.5) for q in (qd, qe, qc)]
    if all(e is not None and e.type == EventType.NONE for e in oneshot):
        ok("(kazoo ended its 3 one-shot watches with its NONE event on the disconnect, as "
           "kazoo 2.8 does: they are not re-registered)")
    else:
        ok("(kazoo's one-shot watches on the disconnect: %r)" % (oneshot,))
    while not dw.empty():  # what a DataWatch re-read on reconnect may deliver
        dw.get()
    while not cw.empty():
        cw.get()

    # Writes made after the reconnect, through a survivor.
    retried(zk2.set, "/ens/w", b"2")
    retried(zk2.create, "/ens/kids/k", b"k")
    got = None
    deadline = time.time() + 10
    while got != b"2" and time.time() < deadline:
        got = event(dw, "DataWatch", max(0.0, deadline - time.time()))
    expect(got == b"2", "kazoo's DataWatch set before the kill fires on a later set",
           "last call %r" % (got,))
    got = None
    deadline = time.time() + 10
    while got != ["k"] and time.time() < deadline:
        got = event(cw, "ChildrenWatch", max(0.0, deadline - time.time()))
    expect(got == ["k"], "kazoo's ChildrenWatch set before the kill fires on a later create",
           "last call %r" % (got,))

    # Clean up the tree for the later checks.
    zk.delete("/ens", recursive=True)
    zk.stop()
    zk2.stop()


def cmd_ryw(args):
    port = int(args[0])
    zk = client([port])
    zk.ensure_path("/ryw")
    n = 10
    stale = []
    for i in range(n):
        zk.set("/ryw", b"s%d" % i)
        data, _ = zk.get("/ryw")
        if data != b"s%d" % i:
            stale.append((i, data))
        zk.create("/ryw/n%d" % i, b"")
        if zk.exists("/ryw/n%d" % i) is None:
            stale.append((i, "created node missing"))
    expect(not stale, "%d set+get and create+exists on follower :%d, each read right after "
           "its write's reply" % (n, port), "stale reads %s" % stale)
    stale = []
    for i in range(n):
        w = zk.set_async("/ryw", b"p%d" % i)
        r = zk.get_async("/ryw")
        c = zk.create_async("/ryw/p%d" % i, b"")
        e = zk.exists_async("/ryw/p%d" % i)
        data, _ = r.get(timeout=10)
        w.get(timeout=10)
        c.get(timeout=10)
        if data != b"p%d" % i:
            stale.append((i, data))
        if e.get(timeout=10) is None:
            stale.append((i, "created node missing"))
    expect(not stale, "%d reads pipelined behind the session's own write (sent before its "
           "reply) see that write" % n, "stale reads %s" % stale)
    zk.stop()  # /ryw stays: deleting its nodes through the follower costs a write each


def cmd_sync(args):
    reader_port = int(args[0])
    reader = client([reader_port])
    reader.ensure_path("/sync")
    n = 12
    for wp in (int(a) for a in args[1:]):
        writer = client([wp])
        stale_plain = 0
        stale = []
        for i in range(n):
            v = b"%d-%d" % (wp, i)
            writer.set("/sync", v)
            if reader.get("/sync")[0] != v:
                stale_plain += 1
            reader.sync("/sync")
            data, _ = reader.get("/sync")
            if data != v:
                stale.append((i, data))
        expect(not stale, "%d writes through :%d, each read on :%d after sync" % (n, wp, reader_port),
               "stale after sync: %s" % stale)
        ok("(without the sync, %d of those %d reads on :%d were stale, as a follower may be)"
           % (stale_plain, n, reader_port))
        writer.stop()
    reader.delete("/sync")
    reader.stop()


def cmd_election(args):
    """Writes through each follower, one after another, while the leader is killed."""
    leader, followers = int(args[0]), [int(a) for a in args[1:]]
    started = threading.Barrier(len(followers) + 1)
    killed = threading.Event()
    stats = {}

    def writer(port):
        st = stats[port] = {"acked": 0, "lost": 0, "other": {}, "last": None, "error": None}
        try:
            zk = client([port])
            path = "/el%d" % port
            zk.ensure_path(path)
            n = 0
            while st["acked"] < 20:
                zk.set(path, b"%d" % n)
                n += 1
                st["acked"] += 1
        except Exception as e:  # said below
            st["error"] = e
            started.abort()
            return
        try:
            started.wait()
        except threading.BrokenBarrierError:  # the other writer failed: said below
            zk.stop()
            return
        killed.wait()
        end = t_kill[0] + 2.5
        while time.time() < end:
            v = b"%d" % n
            n += 1
            try:
                zk.set(path, v)
                st["acked"] += 1
                st["last"] = v
            except ConnectionLoss:
                st["lost"] += 1
                time.sleep(0.01)
            except KazooException as e:
                st["other"].setdefault(type(e).__name__, []).append(time.time() - t_kill[0])
                time.sleep(0.01)
        try:
            retried(zk.sync, path)
            st["read"] = zk.get(path)[0]
            zk.delete(path)
            zk.stop()
        except Exception as e:
            st["error"] = e

    t_kill = [None]
    threads = [threading.Thread(target=writer, args=(p,)) for p in followers]
    for t in threads:
        t.start()
    try:
        started.wait()
    except threading.BrokenBarrierError:
        pass
    if not started.broken:
        print("kill %d" % leader, flush=True)  # ensemble_clients.sh kills it (SIGKILL)
        t_kill[0] = time.time()
    killed.set()
    for t in threads:
        t.join()
    for port in followers:
        st = stats[port]
        if t_kill[0] is None:
            if st["error"] is not None:
                fail("writes through :%d before the kill: %s: %s"
                     % (port, type(st["error"]).__name__, st["error"]))
            continue
        ok("through follower :%d: %d writes acknowledged, %d saw the connection lost (kazoo "
           "reconnects; a client retries those)" % (port, st["acked"], st["lost"]))
        for name, when in sorted(st["other"].items()):
            fail("through :%d, %d writes answered %s, from %.2f s to %.2f s after the kill: a "
                 "member without a leader must close the connection (the client sees connection "
                 "loss), as ZooKeeper's followers do, not fail the write"
                 % (port, len(when), name, min(when), max(when)))
        if st["error"] is not None:
            fail("through :%d after the writes: %s: %s" % (port, type(st["error"]).__name__,
                                                            st["error"]))
        elif st["last"] is not None:
            # A write that saw its connection lost may have been applied: what is read is the
            # last acknowledged write or a later one.
            expect(int(st["read"]) >= int(st["last"]),
                   "through :%d the last acknowledged write is there" % port,
                   "read %r, last acknowledged %r" % (st["read"], st["last"]))
        else:
            fail("through :%d no write was acknowledged in the 2.5 s after the kill" % port)


def mntr(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"mntr")
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return dict(line.split("\t", 1) for line in out.decode().splitlines() if "\t" in line)


def cmd_idle(args):
    ports = [int(a) for a in args]
    before = {p: int(mntr(p)["zk_tumbler_snapshots_taken"]) for p in ports}
    zk = client(ports[:1])
    zk.ensure_path("/idle")
    # Under the 4 MiB a snapshot is due at by size, over a quarter of it.
    n, data = 4000, b"x" * 200
    for r in [zk.create_async("/idle/n%d" % i, data) for i in range(n)]:
        r.get(timeout=30)
    zk.stop()
    for p in ports:
        def gave_back(m):
            return (int(m["zk_tumbler_snapshots_taken"]) > before[p] and
                    4 * int(m["zk_tumbler_snapshot_log_bytes"]) <
                    int(m["zk_tumbler_snapshot_log_limit"]))
        deadline, m = time.monotonic() + 15, mntr(p)
        while not gave_back(m) and time.monotonic() < deadline:
            time.sleep(0.1)
            m = mntr(p)
        expect(gave_back(m),
               "%d creates, then a pause: the %s on :%d took a snapshot and gave its log back"
               % (n, m["zk_server_state"], p),
               "snapshots %s (before %d), log %s bytes of a %s limit" % (
                   m["zk_tumbler_snapshots_taken"], before[p],
                   m["zk_tumbler_snapshot_log_bytes"], m["zk_tumbler_snapshot_log_limit"]))


def closed_within(s, wait):
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionError:
        return True


def cmd_relink(args):
    port = int(args[0])
    hello = (5).to_bytes(4, "big") + bytes([1]) + (77).to_bytes(4, "big")
    links = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(2)]
    for s in links:
        s.sendall(hello)
    deadline, ended = time.monotonic() + 10, []
    while not ended and time.monotonic() < deadline:
        ended = [i for i, s in enumerate(links) if closed_within(s, 0.1)]
    kept = [s for i, s in enumerate(links) if i not in ended]
    expect(len(ended) == 1 and not closed_within(kept[0], 1.0),
           "a follower's second link to the leader: its first ends, the second stays",
           "links ended: %s" % ended)
    for s in links:
        s.close()


def main():
    cmds = {"failover": cmd_failover, "ryw": cmd_ryw, "sync": cmd_sync,
            "election": cmd_election, "idle": cmd_idle, "relink": cmd_relink}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        cmds[sys.argv[1]](sys.argv[2:])
    except Exception as e:  # a step that raised: report it as that check's failure
        fail("%s: %s: %s" % (sys.argv[1], type(e).__name__, e))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
