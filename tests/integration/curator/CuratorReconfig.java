// Apache Curator's reconfig and getConfig (Debian's curator 5.4 jars) on an
// ensemble, as the super user:
//
//   java CuratorReconfig CONNECT JOINER LEAVER
//
// CONNECT is one member's host:port; JOINER a server.N=... line of a server
// that runs and is not a member yet; LEAVER the id of a member other than
// the one CONNECT names.  In order:
//   1. getConfig with a watch; reconfig().joining(JOINER).fromConfig(v0):
//      the answer and the configuration hold the joiner with a new version,
//      and the watch fires;
//   2. reconfig().leaving(LEAVER).fromConfig(v0), v0 being stale by now:
//      KeeperException.BadVersionException, nothing changed;
//   3. reconfig().leaving(LEAVER).fromConfig(v1) with a watch set: the
//      answer lacks the leaver, and the watch fires;
//   4. reconfig().withNewMembers(the same members).fromConfig(v1), stale:
//      BadVersionException.
// Prints one "ok ..." line per check and "PASSED" last; exits 1 on the
// first check that fails, saying what it found.

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

public class CuratorReconfig {
    static void fail(String why) {
        System.out.println("FAIL: " + why);
        System.exit(1);
    }

    static void ok(String what) {
        System.out.println("ok - " + what);
    }

    // The "version=<hex>" line of a configuration's text.
    static long version(String text) {
        for (String l : text.split("\n"))
            if (l.startsWith("version="))
                return Long.parseLong(l.substring(8).trim(), 16);
        fail("no version line in: " + text);
        return -1;
    }

    static List<String> servers(String text) {
        List<String> out = new ArrayList<>();
        for (String l : text.split("\n"))
            if (l.startsWith("server."))
                out.add(l.trim());
        return out;
    }

    static boolean has(String text, String id) {
        return text.contains("\nserver." + id + "=") || text.startsWith("server." + id + "=");
    }

    // A watch on the configuration: fires once, with the event's type.
    static class Once implements Watcher {
        final CountDownLatch fired = new CountDownLatch(1);
        volatile Event.EventType type;

        public void process(WatchedEvent e) {
            if (e.getType() == Event.EventType.None)
                return;
            type = e.getType();
            fired.countDown();
        }

        void await(String what) throws InterruptedException {
            if (!fired.await(10, TimeUnit.SECONDS))
                fail("the watch on the configuration did not fire after " + what);
            if (type != Event.EventType.NodeDataChanged)
                fail("the watch fired with " + type + " after " + what);
        }
    }

    static String config(CuratorFramework c, Watcher w, Stat st) throws Exception {
        byte[] b = w != null ? c.getConfig().storingStatIn(st).usingWatcher(w).forEnsemble()
                             : c.getConfig().storingStatIn(st).forEnsemble();
        return new String(b, StandardCharsets.UTF_8);
    }

    public static void main(String[] a) throws Exception {
        if (a.length != 3) {
            System.err.println("usage: CuratorReconfig CONNECT JOINER LEAVER");
            System.exit(2);
        }
        String joiner = a[1], leaver = a[2];
        String joinId = joiner.substring(7, joiner.indexOf('='));
        // The ensemble tracker is off: it would move the connection to the
        // members the configuration names, and this test stays on CONNECT.
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(a[0])
                .sessionTimeoutMs(10000)
                .connectionTimeoutMs(10000)
                .retryPolicy(new RetryNTimes(3, 500))
                .authorization("digest", "super:secret".getBytes(StandardCharsets.UTF_8))
                .ensembleTracker(false)
                .build();
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS))
            fail("no connection to " + a[0]);

        // 1. joining, from the version read.
        Stat st = new Stat();
        Once w0 = new Once();
        String t0 = config(c, w0, st);
        long v0 = version(t0);
        if (has(t0, joinId))
            fail("server." + joinId + " is a member already: " + t0);
        byte[] got = c.reconfig().joining(joiner).fromConfig(v0).forEnsemble();
        String t1 = new String(got, StandardCharsets.UTF_8);
        long v1 = version(t1);
        if (!has(t1, joinId) || servers(t1).size() != servers(t0).size() + 1)
            fail("the answer to joining does not add server." + joinId + ": " + t1);
        if (v1 <= v0)
            fail("version " + Long.toHexString(v1) + " after joining, not above "
                 + Long.toHexString(v0));
        w0.await("joining");
        String read = config(c, null, st);
        if (!read.equals(t1))
            fail("getConfig after joining: " + read + ", the answer was " + t1);
        ok("joining server." + joinId + " from version " + Long.toHexString(v0)
           + ": version " + Long.toHexString(v1) + ", " + servers(t1).size()
           + " servers, the watch fired (NodeDataChanged)");

        // 2. a stale fromConfig.
        try {
            c.reconfig().leaving(leaver).fromConfig(v0).forEnsemble();
            fail("leaving from the stale version " + Long.toHexString(v0) + " was accepted");
        } catch (KeeperException.BadVersionException e) {
            ok("leaving from the stale version " + Long.toHexString(v0) + ": BadVersion ("
               + e.code().intValue() + ")");
        }
        read = config(c, null, st);
        if (!read.equals(t1))
            fail("a refused change changed the configuration: " + read);
        ok("the configuration is unchanged, version " + Long.toHexString(version(read)));

        // 3. leaving, from the current version, with a watch.
        Once w1 = new Once();
        config(c, w1, st);
        got = c.reconfig().leaving(leaver).fromConfig(v1).forEnsemble();
        String t2 = new String(got, StandardCharsets.UTF_8);
        long v2 = version(t2);
        if (has(t2, leaver) || !has(t2, joinId) || servers(t2).size() != servers(t1).size() - 1)
            fail("the answer to leaving: " + t2);
        if (v2 <= v1)
            fail("version " + Long.toHexString(v2) + " after leaving");
        w1.await("leaving");
        ok("server." + leaver + " leaving from version " + Long.toHexString(v1) + ": version "
           + Long.toHexString(v2) + ", " + servers(t2).size() + " servers, the watch fired");

        // 4. the whole member list, from a stale version.  Until the leaver
        // is out of raft's members too (just after the answer) a change is
        // still in flight, and ReconfigInProgress comes first, as in
        // ZooKeeper's order of checks: asked again then, for up to 10 s.
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (int tries = 1;; tries++) {
            try {
                c.reconfig().withNewMembers(servers(t2)).fromConfig(v1).forEnsemble();
                fail("a member list from the stale version " + Long.toHexString(v1)
                     + " was accepted");
            } catch (KeeperException.ReconfigInProgress e) {
                if (System.nanoTime() > until)
                    fail("ReconfigInProgress for 10 s after the leaver's answer");
                Thread.sleep(200);
                continue;
            } catch (KeeperException.BadVersionException e) {
                ok("a member list from the stale version " + Long.toHexString(v1)
                   + ": BadVersion (asked " + tries + " time(s))");
            }
            break;
        }
        if (version(config(c, null, st)) != v2)
            fail("a refused member list changed the version");
        c.close();
        System.out.println("PASSED");
    }
}
