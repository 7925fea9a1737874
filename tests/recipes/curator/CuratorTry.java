// One acquisition with Apache Curator's own recipes (Debian's curator 5.4
// jars), for the tests that mix them with libtumbler's on one path:
//
//   java CuratorTry CONNECT PATH mutex|read|write WAIT_MS [GO_FILE]
//
// KIND is InterProcessMutex, or the read or write side of
// InterProcessReadWriteLock.  Prints "ACQUIRED" or "TIMEDOUT" (after
// WAIT_MS).  With GO_FILE, an acquired lock is held ("HELD") until that
// file exists, then released.  Exit status 0 unless something failed.

import java.io.File;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.RetryNTimes;

public class CuratorTry {
    public static void main(String[] a) throws Exception {
        if (a.length < 4) {
            System.err.println("usage: CuratorTry CONNECT PATH mutex|read|write WAIT_MS [GO_FILE]");
            System.exit(2);
        }
        String connect = a[0], path = a[1], kind = a[2];
        long waitMs = Long.parseLong(a[3]);
        CuratorFramework c = CuratorFrameworkFactory.newClient(
                connect, 4000, 5000, new RetryNTimes(20, 250));
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) {
            System.err.println("CuratorTry: no connection to " + connect);
            System.exit(1);
        }
        InterProcessLock lock;
        if (kind.equals("mutex")) {
            lock = new InterProcessMutex(c, path);
        } else {
            InterProcessReadWriteLock rw = new InterProcessReadWriteLock(c, path);
            lock = kind.equals("read") ? rw.readLock() : rw.writeLock();
        }
        if (!lock.acquire(waitMs, TimeUnit.MILLISECONDS)) {
            System.out.println("TIMEDOUT");
            c.close();
            return;
        }
        System.out.println("ACQUIRED");
        if (a.length > 4) {
            System.out.println("HELD");
            File go = new File(a[4]);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!go.exists() && System.nanoTime() < end) Thread.sleep(20);
        }
        lock.release();
        c.close();
    }
}
