"""The AdminServer's answers of tumblerd against Apache ZooKeeper 3.8's own,
with the same state on both (a session holding an ephemeral node, a data
watch and a child watch): for every command, each field ZooKeeper's answer
has is in tumblerd's, with the same JSON type, nested objects and list items
alike (a map keyed by session ids, times or paths is compared by its
values).  Left out, as docs/operations.md says: envi's java.* fields, and
of mntr the figures tumblerd does not have; instead each of mntr's names
that is not tumbler_* must be ZooKeeper's, with its type.

  http_zkdiff.py ZK_ADMIN_URL ZK_CLIENT_PORT TB_ADMIN_URL TB_CLIENT_PORT"""
import json
import re
import sys
import urllib.error
import urllib.request

from kazoo.client import KazooClient

COMMANDS = ["ruok", "srvr", "stat", "mntr", "conf", "cons", "envi", "dump",
            "wchs", "wchc", "wchp", "lead", "voting_view", "dirs", "isro",
            "gtmk", "stmk?traceMask=0", "crst", "srst", "no_such"]


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        body = e.read()
        try:
            return e.code, json.loads(body)
        except ValueError:
            return e.code, {"not JSON": body.decode(errors="replace")}


def dynamic(d):
    return d and all(re.fullmatch(r"-?\d+|/.*", k) for k in d)


def kind(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "int" if isinstance(v, int) else "float"
    return {str: "str", type(None): "null", list: "list", dict: "dict"}[type(v)]


def compare(zk, tb, where, problems):
    kz, kt = kind(zk), kind(tb)
    # ZooKeeper writes a double as 2.0, tumblerd the same; an int where
    # ZooKeeper has a double would be read differently by a strict reader.
    if kz != kt:
        problems.append("%s: ZooKeeper %s %r, tumblerd %s %r" % (where, kz, zk, kt, tb))
        return
    if kz == "list" and zk and tb:
        compare(zk[0], tb[0], where + "[0]", problems)
    elif kz == "dict":
        if dynamic(zk) or dynamic(tb):
            if zk and tb:
                compare(next(iter(zk.values())), next(iter(tb.values())),
                        where + "{*}", problems)
            return
        for k, v in zk.items():
            if k not in tb:
                problems.append("%s: no field %s" % (where, k))
            else:
                compare(v, tb[k], where + "." + k, problems)


def state(port):
    """A session with an ephemeral node and two watches, kept open."""
    zk = KazooClient(hosts="127.0.0.1:%d" % port, timeout=10)
    zk.start(timeout=15)
    zk.ensure_path("/d")
    if not zk.exists("/d/e"):
        zk.create("/d/e", b"x", ephemeral=True)
    zk.exists("/d/e", watch=lambda ev: None)
    zk.get_children("/d", watch=lambda ev: None)
    return zk


def main():
    zk_url, zk_port, tb_url, tb_port = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    sessions = [state(zk_port), state(tb_port)]
    problems = []
    for c in COMMANDS:
        zs, z = get(zk_url + "/" + c)
        ts, t = get(tb_url + "/" + c)
        if zs != ts:
            problems.append("%s: HTTP %d from ZooKeeper, %d from tumblerd" % (c, zs, ts))
        if c == "mntr":
            for k, v in t.items():
                if k.startswith("tumbler_") or k in ("command", "error"):
                    continue
                if k not in z:
                    problems.append("mntr: %s is not ZooKeeper's" % k)
                elif kind(v) != kind(z[k]):
                    problems.append("mntr.%s: ZooKeeper %s, tumblerd %s" % (k, kind(z[k]), kind(v)))
            continue
        if c == "envi":
            z = {k: v for k, v in z.items() if not k.startswith("java.")}
        compare(z, t, c, problems)
    for s in sessions:
        s.stop()
        s.close()
    for p in problems:
        print("DIFF", p)
    print("%d commands compared, %d differences" % (len(COMMANDS), len(problems)))
    return 1 if problems else 0


sys.exit(main())
