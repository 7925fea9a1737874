// The Curator side of the interoperability tests: Apache Curator's own
// InterProcessMutex (Debian's curator 5.4 jars) contending with libtumbler
// mutexes on the same path.
//
//   java CuratorLock CONNECT PATH HOLD_MS LOGFILE WHO ITERS
//
// Each hold is appended to LOGFILE as "token t0 t1 who", the format of the
// C side (tests/recipes/rt.c): the token is the czxid of the lock node
// Curator created, and t0/t1 are System.nanoTime(), which on Linux reads
// CLOCK_MONOTONIC like the C side, so holds of both compare directly.
// Exit status 0 on success.

import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;

public class CuratorLock {
    // Exposes the path of the node the mutex holds (protected in Curator).
    static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework c, String path) { super(c, path); }
        String node() { return getLockPath(); }
    }

    public static void main(String[] a) throws Exception {
        if (a.length < 6) {
            System.err.println("usage: CuratorLock CONNECT PATH HOLD_MS LOGFILE WHO ITERS");
            System.exit(2);
        }
        String connect = a[0], path = a[1], log = a[3], who = a[4];
        long holdMs = Long.parseLong(a[2]);
        int iters = Integer.parseInt(a[5]);
        CuratorFramework c = CuratorFrameworkFactory.newClient(
                connect, 4000, 5000, new RetryNTimes(20, 250));
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) {
            System.err.println("CuratorLock: no connection to " + connect);
            System.exit(1);
        }
        Mutex m = new Mutex(c, path);
        for (int i = 0; i < iters; i++) {
            if (!m.acquire(60, TimeUnit.SECONDS)) {
                System.err.println("CuratorLock: acquire timed out");
                System.exit(1);
            }
            long t0 = System.nanoTime();
            Stat st = c.checkExists().forPath(m.node());
            if (st == null) {
                System.err.println("CuratorLock: own node missing");
                System.exit(1);
            }
            System.out.println("HELD " + m.node() + " " + st.getCzxid());
            if (holdMs > 0) Thread.sleep(holdMs);
            long t1 = System.nanoTime();
            m.release();
            String line = st.getCzxid() + " " + t0 + " " + t1 + " " + who + "\n";
            try (FileOutputStream f = new FileOutputStream(log, true)) {
                f.write(line.getBytes(StandardCharsets.US_ASCII));
            }
        }
        c.close();
        System.out.println("DONE");
    }
}
