#!/usr/bin/python3
"""Whether a member writes to the other members with TCP_NODELAY, and watches the links
followers made to it and the raft connections other members made to it (keepalive probes
and a user timeout: a member gone without a word must not leave them open for good).

  nodelay.py PID leader|follower QUORUM_PORTS ELECTION_PORTS

Every connection member PID writes on to another member must have TCP_NODELAY (why:
src/server/replog/tcp.c): those it made to a quorum port (raft's messages) and the peer
links (to or from an election port).

Each of PID's sockets is taken with pidfd_getfd (root, or ptrace rights over PID).  Waits up
to 10 s for a leader's two raft connections and two links, a follower's one and one, so that
the check cannot pass on none.  Prints "  ok ..." or "  FAIL ..." per connection; exit
status 1 if any failed.
"""
import ctypes
import os
import socket
import sys
import time

SYS_PIDFD_GETFD = 438  # x86-64 and arm64 alike (the generic table)


def member_sockets(pid, qports, eports):
    """{(kind, local port, remote port, TCP_NODELAY, watched)} of PID's connections to or
    from another member; kind "raft" (made to a quorum port), "raft-in" (taken on its own,
    only read) or "link".  A connection with two descriptors (tumblerd watches raft's
    through a copy) is listed once."""
    libc = ctypes.CDLL(None, use_errno=True)
    found = set()
    pidfd = os.pidfd_open(pid)
    try:
        for name in os.listdir("/proc/%d/fd" % pid):
            try:
                if not os.readlink("/proc/%d/fd/%s" % (pid, name)).startswith("socket:"):
                    continue
            except OSError:  # closed meanwhile
                continue
            fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, int(name), 0)
            if fd < 0:
                err = ctypes.get_errno()
                if err == 9:  # EBADF: closed meanwhile
                    continue
                raise OSError(err, "pidfd_getfd(%d, %s): %s" % (pid, name, os.strerror(err)))
            s = socket.socket(fileno=fd)
            try:
                if s.family not in (socket.AF_INET, socket.AF_INET6) or \
                        s.type != socket.SOCK_STREAM:
                    continue
                try:
                    remote = s.getpeername()[1]
                except OSError:  # a listener
                    continue
                local = s.getsockname()[1]
                if remote in qports:
                    kind = "raft"
                elif local in qports:
                    kind = "raft-in"
                elif remote in eports or local in eports:
                    kind = "link"
                else:
                    continue
                watched = kind == "raft" or (kind == "link" and local not in eports) or (
                    s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) and
                    s.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) > 0)
                found.add((kind, local, remote,
                           s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY),
                           bool(watched)))
            finally:
                s.close()
    finally:
        os.close(pidfd)
    return found


def main(args):
    if len(args) != 4 or args[1] not in ("leader", "follower"):
        print(__doc__, file=sys.stderr)
        return 2
    pid, role = int(args[0]), args[1]
    qports = {int(p) for p in args[2].split(",")}
    eports = {int(p) for p in args[3].split(",")}
    want = 2 if role == "leader" else 1
    deadline = time.monotonic() + 10
    while True:
        found = member_sockets(pid, qports, eports)
        raft = sum(1 for f in found if f[0] == "raft")
        taken = sum(1 for f in found if f[0] == "raft-in")
        links = sum(1 for f in found if f[0] == "link")
        if (raft >= want and taken >= want and links >= want) or \
                time.monotonic() > deadline:
            break
        time.sleep(0.1)
    failed = 0
    if raft >= want and taken >= want and links >= want:
        print("  ok   the %s (pid %d): %d raft connections made, %d taken, %d peer links"
              % (role, pid, raft, taken, links))
    else:
        print("  FAIL the %s (pid %d): %d raft connections made, %d taken, %d peer links; "
              "want %d of each" % (role, pid, raft, taken, links, want))
        failed += 1
    for kind, local, remote, nodelay, watched in sorted(found):
        if kind != "raft-in":
            print("  %s %s connection :%d -> :%d has TCP_NODELAY"
                  % ("ok  " if nodelay else "FAIL", kind, local, remote))
            failed += not nodelay
        if kind == "raft-in" or local in eports:
            print("  %s %s from a member :%d -> :%d has keepalive and a user timeout"
                  % ("ok  " if watched else "FAIL", kind, local, remote))
            failed += not watched
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
