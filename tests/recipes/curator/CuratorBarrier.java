// Apache Curator's DistributedBarrier and DistributedDoubleBarrier
// (Debian's curator 5.4 jars) on paths libtumbler clients use too:
//
//   java CuratorBarrier CONNECT PATH set | remove | wait MS
//   java CuratorBarrier CONNECT PATH double N [GO_FILE]
//
// wait prints "WAITING", then "PASSED" or "TIMEDOUT"; double enters a double barrier of N
// members ("ENTERED"), waits for GO_FILE to exist if given, and leaves
// ("LEFT").  Exit status 0 unless something failed.

import java.io.File;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.retry.RetryNTimes;

public class CuratorBarrier {
    public static void main(String[] a) throws Exception {
        if (a.length < 3) {
            System.err.println("usage: CuratorBarrier CONNECT PATH set|remove|wait MS|double N [GO_FILE]");
            System.exit(2);
        }
        CuratorFramework c = CuratorFrameworkFactory.newClient(
                a[0], 4000, 5000, new RetryNTimes(20, 250));
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) {
            System.err.println("CuratorBarrier: no connection to " + a[0]);
            System.exit(1);
        }
        String op = a[2];
        if (op.equals("double")) {
            DistributedDoubleBarrier b =
                    new DistributedDoubleBarrier(c, a[1], Integer.parseInt(a[3]));
            if (!b.enter(60, TimeUnit.SECONDS)) System.exit(1);
            System.out.println("ENTERED");
            if (a.length > 4) {
                File go = new File(a[4]);
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!go.exists() && System.nanoTime() < end) Thread.sleep(20);
            }
            if (!b.leave(60, TimeUnit.SECONDS)) System.exit(1);
            System.out.println("LEFT");
        } else {
            DistributedBarrier b = new DistributedBarrier(c, a[1]);
            if (op.equals("set")) {
                b.setBarrier();
            } else if (op.equals("remove")) {
                b.removeBarrier();
            } else {
                System.out.println("WAITING");
                boolean passed = b.waitOnBarrier(Long.parseLong(a[3]), TimeUnit.MILLISECONDS);
                System.out.println(passed ? "PASSED" : "TIMEDOUT");
            }
        }
        c.close();
    }
}
