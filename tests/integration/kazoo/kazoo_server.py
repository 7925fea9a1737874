"""pytest plugin: runs kazoo's own test suite (kazoo.tests) against the one server that
kazoo_suite.sh started, instead of the three-node cluster kazoo's harness would start.

The server is IT_SERVER_PID on 127.0.0.1:IT_PORT.  Tests that stop and restart it get a real
stop (SIGTERM, then waiting for the process to end) and a restart of the same command line on
the same data directory and port, logging to the same file.

A test still running after STUCK_AFTER_S leaves, in stuck.txt in the working directory, every
thread's stack and what the server says of its connections, watches and sessions: a lock test
that waits for ever on a wake-up is either a lost notification or a client's own race, and
this tells which.
"""
import ctypes
import faulthandler
import os
import signal
import socket
import subprocess
import threading
import time

import kazoo.testing.harness as harness
import pytest

STUCK_AFTER_S = 45

PR_SET_PDEATHSIG = 1


def _die_with_parent():
    # A restarted server is this process's child; it must not outlive a killed test run.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _four_letter(port, word):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(word)
            out = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    return out
                out += chunk
    except OSError:
        return b""


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Server:
    def __init__(self, pid, port):
        self.pid = pid
        self.port = port
        self.address = "127.0.0.1:%d" % port
        self.child = None
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            self.argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
        self.cwd = os.readlink("/proc/%d/cwd" % pid)
        self.log = os.readlink("/proc/%d/fd/1" % pid)

    @property
    def running(self):
        return _alive(self.pid)

    def stop(self):
        if not self.running:
            return
        os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while self.running:
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                deadline += 20
            time.sleep(0.05)
        if self.child is not None:
            # tumblerd exits 0 on SIGTERM (a JVM, 143); under the sanitizers that exit is
            # where leaks are reported.
            if self.child.wait() != 0 and os.path.basename(self.argv[0]) == "tumblerd":
                _bad_exits.append("server pid %d exited with status %d on SIGTERM; see %s"
                                  % (self.child.pid, self.child.returncode, self.log))
            self.child = None

    def run(self):
        if self.running:
            return
        with open(self.log, "ab") as log:
            self.child = subprocess.Popen(self.argv, cwd=self.cwd, stdin=subprocess.DEVNULL,
                                          stdout=log, stderr=log,
                                          preexec_fn=_die_with_parent)
        self.pid = self.child.pid
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (_four_letter(self.port, b"ruok") == b"imok" and
                    b"not currently serving" not in _four_letter(self.port, b"srvr")):
                return
            if not self.running:
                raise RuntimeError("server exited on restart; see " + self.log)
            time.sleep(0.1)
        raise RuntimeError("server did not serve within 60 s of its restart")

    start = run


class OneServer(list):
    def start(self):
        for s in self:
            s.run()

    def stop(self):
        for s in self:
            s.stop()

    def terminate(self):
        # Called by kazoo's harness at exit: pytest_sessionfinish stops a server restarted
        # here, kazoo_suite.sh the one it started.
        pass


def _report_stuck(nodeid):
    with open("stuck.txt", "a") as f:
        f.write("%s still running after %d s\n\n" % (nodeid, STUCK_AFTER_S))
        f.flush()
        faulthandler.dump_traceback(file=f, all_threads=True)
        for word in (b"cons", b"wchc", b"dump"):
            f.write("\n---- %s ----\n" % word.decode())
            f.write(_four_letter(_cluster[0].port, word).decode(errors="replace"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    timer = threading.Timer(STUCK_AFTER_S, _report_stuck, args=(item.nodeid,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def pytest_sessionfinish(session, exitstatus):
    # A server restarted here is this process's to stop; the first is kazoo_suite.sh's.
    for s in _cluster:
        if s.child is not None:
            s.stop()
    for line in _bad_exits:
        print("\n" + line)
        session.exitstatus = 1


_bad_exits = []
_cluster = OneServer([Server(int(os.environ["IT_SERVER_PID"]), int(os.environ["IT_PORT"]))])
harness.get_global_cluster = lambda: _cluster
