#!/usr/bin/python3
"""kazoo's locks and libtumbler's on one path (run.sh's kazoo scenario).

    kazoo_mix.py HOST:PORT RECIPES_IT TMPDIR

kazoo (Debian's python3-kazoo) holds; recipes_it's `try` and `hold` take
libtumbler's locks in their own processes and sessions:
  - a kazoo Lock keeps every libtumbler kind out, and a waiting mutex gets
    the lock once kazoo releases it;
  - a kazoo ReadLock shares with libtumbler's readers only;
  - kazoo's own recipes see libtumbler's nodes only when told their names
    (extra_lock_patterns): then a WriteLock and a ReadLock wait for a
    libtumbler holder as they should; without them a kazoo Lock does not
    see it (the mix docs/recipes.md calls unsafe);
  - a kazoo Semaphore's path is refused (EFOREIGNLOCK, naming the lease).
Exit status 0 when every check holds; every wait is bounded."""

import os
import subprocess
import sys
import time

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

HOSTS, IT, TMP = sys.argv[1:4]
TB_PATTERNS_WRITE = ("-lock-", "__WRIT__", "__READ__")
TB_PATTERNS_READ = ("-lock-", "__WRIT__")
failures = 0


def check(what, ok, detail=""):
    global failures
    if ok:
        print("ok: " + what)
    else:
        failures += 1
        print("FAIL: %s %s" % (what, detail), file=sys.stderr)


def tb_try(path, kind):
    """One libtumbler try-lock: (error name, what refused it)."""
    out = subprocess.run([IT, HOSTS, "try", path, kind], capture_output=True,
                         text=True, timeout=60)
    lines = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        return "CRASH", out.stderr.strip()
    code, _, why = lines[-1][len("RESULT "):].partition(" ")
    return code, why


def expect_try(path, kind, want, about):
    code, why = tb_try(path, kind)
    check("libtumbler %s %s: %s" % (kind, about, want), code == want,
          "got %s %s" % (code, why))
    return why


def wait_until(cond, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


class Holder:
    """recipes_it hold PATH KIND in the background, until release()."""

    def __init__(self, name, path, kind):
        self.go = os.path.join(TMP, name + ".go")
        self.out = os.path.join(TMP, name + ".out")
        with open(self.out, "w") as f:
            self.p = subprocess.Popen([IT, HOSTS, "hold", path, kind, self.go],
                                      stdout=f, stderr=subprocess.STDOUT)

    def text(self):
        with open(self.out) as f:
            return f.read()

    def held(self, seconds):
        return wait_until(lambda: "HELD" in self.text(), seconds)

    def release(self):
        open(self.go, "w").close()
        try:
            rc = self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = -1
        check("holder released cleanly", rc == 0, self.text())


def kazoo_lock_excludes(zk):
    path = "/rt/kz/lock"
    lock = zk.Lock(path, "kazoo-holder")
    check("kazoo Lock acquired", lock.acquire(timeout=10))
    for kind in ("mutex", "read", "write"):
        expect_try(path, kind, "ETIMEDOUT", "while a kazoo Lock holds")
    waiter = Holder("w1", path, "mutex")
    check("the libtumbler mutex queues behind kazoo",
          wait_until(lambda: len(zk.get_children(path)) == 2, 10))
    time.sleep(0.3)
    check("no hold while kazoo holds", "HELD" not in waiter.text())
    lock.release()
    check("the mutex holds once kazoo releases", waiter.held(10),
          waiter.text())
    waiter.release()


def kazoo_readlock_shares(zk):
    path = "/rt/kz/rw"
    rlock = zk.ReadLock(path, "kazoo-reader")
    check("kazoo ReadLock acquired", rlock.acquire(timeout=10))
    expect_try(path, "read", "OK", "beside a kazoo ReadLock")
    expect_try(path, "mutex", "ETIMEDOUT", "while a kazoo ReadLock holds")
    expect_try(path, "write", "ETIMEDOUT", "while a kazoo ReadLock holds")
    rlock.release()


def kazoo_sees_us_when_told(zk):
    path = "/rt/kz/told"
    holder = Holder("h1", path, "mutex")
    check("libtumbler mutex holds", holder.held(20), holder.text())
    wl = zk.WriteLock(path, "w", extra_lock_patterns=TB_PATTERNS_WRITE)
    check("kazoo WriteLock told our names waits for our mutex",
          wl.acquire(blocking=False) is False)
    rl = zk.ReadLock(path, "r", extra_lock_patterns=TB_PATTERNS_READ)
    check("kazoo ReadLock told our names waits for our mutex",
          rl.acquire(blocking=False) is False)
    blind = zk.Lock(path, "blind")
    got = blind.acquire(blocking=False)
    check("a kazoo Lock not told our names does not see us (unsafe mix)",
          got is True)
    if got:
        blind.release()
    holder.release()
    reader = Holder("h2", path, "read")
    check("libtumbler reader holds", reader.held(20), reader.text())
    check("kazoo ReadLock told our names shares with our reader",
          rl.acquire(blocking=False) is True)
    rl.release()
    check("kazoo WriteLock told our names waits for our reader",
          wl.acquire(blocking=False) is False)
    reader.release()


def kazoo_semaphore_refused(zk):
    path = "/rt/kz/sem"
    sem = zk.Semaphore(path, "kazoo-lease", max_leases=2)
    check("kazoo Semaphore lease acquired", sem.acquire(timeout=10))
    for kind in ("mutex", "write", "sem"):
        why = expect_try(path, kind, "EFOREIGNLOCK", "on a kazoo Semaphore")
        check("the refusal names the kazoo lease", "kazoo Semaphore" in why,
              why)
    sem.release()


def main():
    zk = KazooClient(hosts=HOSTS, timeout=4.0)
    zk.start(timeout=20)
    try:
        zk.delete("/rt/kz", recursive=True)
    except Exception:  # absent
        pass
    kazoo_lock_excludes(zk)
    kazoo_readlock_shares(zk)
    kazoo_sees_us_when_told(zk)
    kazoo_semaphore_refused(zk)
    for sub in ("lock", "rw", "told", "sem"):
        try:
            children = zk.get_children("/rt/kz/" + sub)
        except NoNodeError:  # an emptied container, removed: nothing left
            children = []
        left = [c for c in children if "_c_" in c or c in ("locks", "leases")]
        check("no libtumbler node left under " + sub, not left, str(left))
    zk.stop()
    zk.close()
    print("%s" % ("kazoo mix: ok" if failures == 0 else
                  "kazoo mix: %d failed" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
