#!/usr/bin/python3
"""kazoo's queues and libtumbler's on one path (run.sh's kazoo_queue).

    kazoo_queue.py HOST:PORT RECIPES_IT

recipes_it's `qop` puts and takes in its own process and session:
  - Queue: each side takes what the other put, in priority order;
  - LockingQueue: an item claimed by libtumbler is hidden from kazoo; the
    claimer killed with kill -9, kazoo gets the item once the session
    expired (nothing lost); an item kazoo claimed is hidden from
    libtumbler until kazoo releases it; libtumbler's puts reach kazoo.
Exit status 0 when every check holds; every wait is bounded."""

import signal
import subprocess
import sys
import time

from kazoo.client import KazooClient
from kazoo.recipe.queue import LockingQueue, Queue

HOSTS, IT = sys.argv[1:3]
failures = 0


def check(what, ok, detail=""):
    global failures
    if ok:
        print("ok: " + what)
    else:
        failures += 1
        print("FAIL: %s %s" % (what, detail), file=sys.stderr)


def qop(*args):
    out = subprocess.run([IT, HOSTS, "qop"] + list(args), capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        return "exit %d: %s" % (out.returncode, (out.stdout + out.stderr).strip())
    return out.stdout.strip()


zk = KazooClient(hosts=HOSTS, timeout=4.0)
zk.start(timeout=20)

q = Queue(zk, "/rt/kq/simple")
q.put(b"k1")
q.put(b"k0", priority=5)
took = qop("/rt/kq/simple", "simple", "take", "5000")
check("libtumbler takes kazoo's item of priority 5 first", took == "TOOK OK k0",
      took)
took = qop("/rt/kq/simple", "simple", "take", "5000")
check("then the other", took == "TOOK OK k1", took)
put = qop("/rt/kq/simple", "simple", "put", "t1")
check("libtumbler puts", put == "PUT OK", put)
got = q.get()
check("kazoo takes libtumbler's item", got == b"t1", repr(got))

lq = LockingQueue(zk, "/rt/kq/locking")
lq.put(b"L1")
claimer = subprocess.Popen([IT, HOSTS, "qop", "/rt/kq/locking", "locking",
                            "claim"], stdout=subprocess.PIPE, text=True)
line = claimer.stdout.readline().strip()
check("libtumbler claims kazoo's item", line == "CLAIMED L1", line)
check("a claimed item is hidden from kazoo", lq.get(timeout=0.5) is None)
killed = time.time()
claimer.send_signal(signal.SIGKILL)
claimer.wait(10)
got = lq.get(timeout=20)
after = time.time() - killed
check("kazoo gets the item once the killed claimer's session expired",
      got == b"L1" and after >= 2.5, "%r after %.1f s" % (got, after))
check("and consumes it", lq.consume())
put = qop("/rt/kq/locking", "locking", "put", "L2")
check("libtumbler puts on the locking queue", put == "PUT OK", put)
got = lq.get(timeout=5)
check("kazoo takes libtumbler's item", got == b"L2", repr(got))
lq.consume()
lq.put(b"L3")
got = lq.get(timeout=5)
check("libtumbler does not get an item kazoo claimed",
      qop("/rt/kq/locking", "locking", "take", "300") == "TOOK ETIMEDOUT")
lq.release()
check("until kazoo releases it",
      qop("/rt/kq/locking", "locking", "take", "5000") == "TOOK OK L3")
check("nothing left", zk.get_children("/rt/kq/locking/entries") == [] and
      zk.get_children("/rt/kq/locking/taken") == [])
zk.stop()
print("kazoo_queue: %s" % ("ok" if failures == 0 else "%d failed" % failures))
sys.exit(1 if failures else 0)
