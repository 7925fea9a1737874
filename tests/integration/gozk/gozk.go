// gozk: a Go client (github.com/samuel/go-zookeeper, Debian's
// golang-github-samuel-go-zookeeper-dev) against one server: the node
// operations and their errors, watches, multi, digest ACLs, and its lock
// recipe under contention, refereed here for mutual exclusion.
//
//	gozk HOST:PORT
package main

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samuel/go-zookeeper/zk"
)

var failed int

func check(ok bool, format string, args ...interface{}) {
	if !ok {
		failed++
		fmt.Printf("FAIL: "+format+"\n", args...)
	}
}

func connect(host string) *zk.Conn {
	c, events, err := zk.Connect([]string{host}, 10*time.Second,
		zk.WithLogInfo(false))
	if err != nil {
		fmt.Println("FAIL: connect:", err)
		os.Exit(1)
	}
	deadline := time.After(20 * time.Second)
	for c.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-deadline:
			fmt.Println("FAIL: no session within 20 s")
			os.Exit(1)
		}
	}
	return c
}

func expectEvent(ch <-chan zk.Event, typ zk.EventType, path string) {
	select {
	case ev := <-ch:
		check(ev.Type == typ && ev.Path == path, "event %v %s, want %v %s",
			ev.Type, ev.Path, typ, path)
	case <-time.After(10 * time.Second):
		check(false, "no %v event for %s", typ, path)
	}
}

func nodes(c *zk.Conn, root string) {
	open := zk.WorldACL(zk.PermAll)
	p, err := c.Create(root, []byte("r"), 0, open)
	check(err == nil && p == root, "create %s: %q %v", root, p, err)
	_, err = c.Create(root, nil, 0, open)
	check(err == zk.ErrNodeExists, "create again: %v", err)
	_, err = c.Create(root+"/no/such", nil, 0, open)
	check(err == zk.ErrNoNode, "create under a missing parent: %v", err)

	seq, err := c.Create(root+"/s-", []byte("x"), zk.FlagSequence, open)
	check(err == nil && seq == root+"/s-0000000000", "sequential: %q %v", seq, err)
	eph, err := c.Create(root+"/e", nil, zk.FlagEphemeral, open)
	check(err == nil, "ephemeral %s: %v", eph, err)
	_, err = c.Create(root+"/e/kid", nil, 0, open)
	check(err == zk.ErrNoChildrenForEphemerals, "child of an ephemeral: %v", err)

	data, st, err := c.Get(root)
	check(err == nil && string(data) == "r" && st.NumChildren == 2 &&
		st.Cversion == 2 && st.DataLength == 1,
		"get %s: %q %+v %v", root, data, st, err)
	st, err = c.Set(root, []byte("r2"), 0)
	check(err == nil && st.Version == 1, "set: %+v %v", st, err)
	_, err = c.Set(root, []byte("r3"), 0)
	check(err == zk.ErrBadVersion, "set an old version: %v", err)
	_, st, err = c.Get(root + "/e")
	check(err == nil && st.EphemeralOwner == c.SessionID(),
		"ephemeral owner %x, want %x (%v)", st.EphemeralOwner, c.SessionID(), err)

	kids, _, err := c.Children(root)
	sort.Strings(kids)
	check(err == nil && strings.Join(kids, ",") == "e,s-0000000000",
		"children: %v %v", kids, err)
	err = c.Delete(root, -1)
	check(err == zk.ErrNotEmpty, "delete a parent: %v", err)
	ok, _, err := c.Exists(root + "/none")
	check(err == nil && !ok, "exists of a missing node: %v %v", ok, err)
	_, err = c.Sync(root)
	check(err == nil, "sync: %v", err)
}

func watches(c, other *zk.Conn, root string) {
	open := zk.WorldACL(zk.PermAll)
	_, _, exists, err := c.ExistsW(root + "/w")
	check(err == nil, "existsW: %v", err)
	_, _, kids, err := c.ChildrenW(root)
	check(err == nil, "childrenW: %v", err)
	_, err = other.Create(root+"/w", []byte("1"), 0, open)
	check(err == nil, "create /w: %v", err)
	expectEvent(exists, zk.EventNodeCreated, root+"/w")
	expectEvent(kids, zk.EventNodeChildrenChanged, root)

	_, _, data, err := c.GetW(root + "/w")
	check(err == nil, "getW: %v", err)
	_, err = other.Set(root+"/w", []byte("2"), -1)
	check(err == nil, "set /w: %v", err)
	expectEvent(data, zk.EventNodeDataChanged, root+"/w")

	_, _, data, err = c.GetW(root + "/w")
	check(err == nil, "getW again: %v", err)
	check(other.Delete(root+"/w", -1) == nil, "delete /w")
	expectEvent(data, zk.EventNodeDeleted, root+"/w")
}

func multi(c *zk.Conn, root string) {
	open := zk.WorldACL(zk.PermAll)
	res, err := c.Multi(
		&zk.CreateRequest{Path: root + "/m", Data: []byte("a"), Acl: open},
		&zk.SetDataRequest{Path: root + "/m", Data: []byte("b"), Version: 0},
		&zk.CheckVersionRequest{Path: root + "/m", Version: 1})
	check(err == nil && len(res) == 3 && res[0].String == root+"/m",
		"multi: %+v %v", res, err)
	data, _, err := c.Get(root + "/m")
	check(err == nil && bytes.Equal(data, []byte("b")), "after multi: %q %v", data, err)
	// All or nothing: the failing check undoes the create before it.
	_, err = c.Multi(
		&zk.CreateRequest{Path: root + "/m2", Acl: open},
		&zk.CheckVersionRequest{Path: root + "/m", Version: 7})
	check(err == zk.ErrBadVersion, "failing multi: %v", err)
	ok, _, err := c.Exists(root + "/m2")
	check(err == nil && !ok, "a failed multi left %s/m2 (%v)", root, err)
}

func acls(host string, c *zk.Conn, root string) {
	check(c.AddAuth("digest", []byte("alice:secret")) == nil, "addAuth")
	_, err := c.Create(root+"/a", []byte("s"), 0,
		zk.DigestACL(zk.PermAll, "alice", "secret"))
	check(err == nil, "create with a digest ACL: %v", err)
	stranger := connect(host)
	defer stranger.Close()
	_, _, err = stranger.Get(root + "/a")
	check(err == zk.ErrNoAuth, "a stranger's get: %v", err)
	got, _, err := c.GetACL(root + "/a")
	check(err == nil && len(got) == 1 && got[0].Scheme == "digest" &&
		strings.HasPrefix(got[0].ID, "alice:"), "getACL: %+v %v", got, err)
	_, err = c.Create(root+"/bad", nil, 0, []zk.ACL{{Perms: zk.PermAll,
		Scheme: "world", ID: "nobody-known"}})
	check(err == zk.ErrInvalidACL, "an invalid ACL: %v", err)
}

// Clients on their own sessions take the recipe's lock in turns; the
// referee counts who is inside.
func lock(host, root string) {
	const clients, rounds = 20, 10
	var inside, most int32
	var total int64
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := connect(host)
			defer c.Close()
			l := zk.NewLock(c, root+"/lock", zk.WorldACL(zk.PermAll))
			for r := 0; r < rounds; r++ {
				if err := l.Lock(); err != nil {
					check(false, "lock: %v", err)
					return
				}
				n := atomic.AddInt32(&inside, 1)
				for {
					m := atomic.LoadInt32(&most)
					if n <= m || atomic.CompareAndSwapInt32(&most, m, n) {
						break
					}
				}
				atomic.AddInt64(&total, 1)
				time.Sleep(time.Millisecond)
				atomic.AddInt32(&inside, -1)
				if err := l.Unlock(); err != nil {
					check(false, "unlock: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	check(most == 1, "%d clients held the lock at once", most)
	check(total == clients*rounds, "%d acquisitions, want %d", total, clients*rounds)
	fmt.Printf("lock: %d acquisitions by %d clients, at most %d inside\n",
		total, clients, most)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gozk HOST:PORT")
		os.Exit(2)
	}
	host := os.Args[1]
	root := fmt.Sprintf("/gozk-%d", os.Getpid())
	c := connect(host)
	other := connect(host)
	nodes(c, root)
	watches(c, other, root)
	multi(c, root)
	acls(host, c, root)
	lock(host, root)
	other.Close()
	c.Close()
	if failed > 0 {
		fmt.Printf("%d checks failed\n", failed)
		os.Exit(1)
	}
	fmt.Println("gozk: every check passed")
}
