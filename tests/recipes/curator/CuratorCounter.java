// Apache Curator's DistributedAtomicLong (Debian's curator 5.4 jars) on a
// counter that libtumbler clients use too:
//
//   java CuratorCounter CONNECT PATH get | set VALUE | add N
//
// get prints "VALUE <v>"; set writes v; add increments N times, each
// retried until it succeeds (Curator gives up after its retry policy, so
// the loop is ours), and prints "ADDED <n> LAST <postValue>".  Exit status
// 0 unless something failed.

import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.retry.RetryNTimes;

public class CuratorCounter {
    public static void main(String[] a) throws Exception {
        if (a.length < 3) {
            System.err.println("usage: CuratorCounter CONNECT PATH get | set VALUE | add N");
            System.exit(2);
        }
        CuratorFramework c = CuratorFrameworkFactory.newClient(
                a[0], 4000, 5000, new RetryNTimes(20, 250));
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) {
            System.err.println("CuratorCounter: no connection to " + a[0]);
            System.exit(1);
        }
        // Optimistic tries without sleeping between them: a conflict
        // means another client's write went through.
        DistributedAtomicLong n = new DistributedAtomicLong(c, a[1], new RetryNTimes(100, 0));
        if (a[2].equals("get")) {
            AtomicValue<Long> v = n.get();
            if (!v.succeeded()) System.exit(1);
            System.out.println("VALUE " + v.postValue());
        } else if (a[2].equals("set")) {
            n.forceSet(Long.parseLong(a[3]));
        } else {
            int want = Integer.parseInt(a[3]);
            long last = 0;
            for (int i = 0; i < want; i++) {
                AtomicValue<Long> v;
                do {
                    v = n.increment();
                } while (!v.succeeded());
                last = v.postValue();
            }
            System.out.println("ADDED " + want + " LAST " + last);
        }
        c.close();
    }
}
