"""TLS checks with Python's own TLS (the ssl module) and kazoo, against a server with a TLS port
set up by tls.sh, each bounded in time:

    checks.py all KIND PLAIN_PORT TLS_PORT CERTDIR
        sessions by certificate and their ACLs, and every way a connection must be refused,
        after which the server still serves;
    checks.py reload|watch TLS_PORT CERTDIR DIR PID
        tumblerd's SIGHUP (reload) or client.certReload (watch) with a renewed key store
        DIR/live.p12, then a broken one;
    checks.py want TLS_PORT CERTDIR
        tumblerd with certificates wanted, not needed, and one TLS 1.2 suite.
"""
import os
import shutil
import signal
import socket
import ssl
import struct
import sys
import time

from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import ACL, Id, Permissions

mode = sys.argv[1]
if mode == "all":
    kind, plain_port, tls_port, certs = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
else:
    tls_port, certs = int(sys.argv[2]), sys.argv[3]
failures = []


def check(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def context(cert="client", ca="ca", version=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(f"{certs}/{ca}.pem")
    if cert:
        ctx.load_cert_chain(f"{certs}/{cert}.pem", f"{certs}/{cert}.key")
    if version:
        ctx.minimum_version = ctx.maximum_version = version
    return ctx


CONNECT = struct.pack(">iqiqi16s?", 0, 0, 30000, 0, 16, b"\0" * 16, False)
CONNECT = struct.pack(">i", len(CONNECT)) + CONNECT


def session(sock):
    """Sends a ConnectRequest; the session id granted, or None if the server closed instead."""
    try:
        sock.sendall(CONNECT)
        data = b""
        while len(data) < 4 + 36:
            chunk = sock.recv(4096)
            if not chunk:
                return None
            data += chunk
        return struct.unpack(">q", data[12:20])[0]
    except (OSError, ssl.SSLError):
        return None


def closed_by_server(sock):
    """True once the server has closed the connection (after an alert, maybe); False if it
    left it open for the socket's timeout."""
    try:
        while sock.recv(4096):
            pass
        return True
    except socket.timeout:
        return False
    except OSError:
        return True


def tls_session(cert="client", ca="ca", version=None, seen=None):
    """A session over TLS: (handshake error or None, session id or None); seen(socket), if
    given, looks at the connection once the handshake is done."""
    raw = socket.create_connection(("127.0.0.1", tls_port), timeout=10)
    try:
        s = context(cert, ca, version).wrap_socket(raw, server_hostname="localhost")
    except (OSError, ssl.SSLError) as e:
        raw.close()
        return type(e).__name__, None
    with s:
        if seen:
            seen(s)
        return None, session(s)


class Pipe:
    """A TLS connection whose records are sent only when asked (ssl.SSLObject over memory):
    what several calls make can leave in one write."""

    def __init__(self, cert="client"):
        self.raw = socket.create_connection(("127.0.0.1", tls_port), timeout=10)
        self.inc, self.out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context(cert).wrap_bio(self.inc, self.out, server_hostname="localhost")
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                self.fill()
        self.flush()

    def flush(self):
        self.raw.sendall(self.out.read())

    def fill(self):
        data = self.raw.recv(65536)
        if not data:
            raise OSError("closed by the server")
        self.inc.write(data)

    def frame(self):
        """The next frame's body."""
        data = b""
        while True:
            try:
                data += self.tls.read(65536)
            except ssl.SSLWantReadError:
                pass
            if len(data) >= 4 and len(data) >= 4 + struct.unpack(">i", data[:4])[0]:
                return data[4:]
            self.fill()


def request(xid, op, body=b""):
    return struct.pack(">iii", 8 + len(body), xid, op) + body


def create(xid, path, flags):
    """A create of PATH with data "x", open to anyone, of FLAGS (1: ephemeral)."""
    def s(b):
        return struct.pack(">i", len(b)) + b
    acl = struct.pack(">ii", 1, 31) + s(b"world") + s(b"anyone")
    return request(xid, 1, s(path.encode()) + s(b"x") + acl + struct.pack(">i", flags))


def kazoo(cert=None, port=None):
    if cert:
        zk = KazooClient(hosts=f"127.0.0.1:{tls_port}", use_ssl=True, verify_certs=True,
                         ca=f"{certs}/ca.pem", certfile=f"{certs}/{cert}.pem",
                         keyfile=f"{certs}/{cert}.key", timeout=10)
    else:
        zk = KazooClient(hosts=f"127.0.0.1:{port or plain_port}", timeout=10)
    zk.start(timeout=15)
    return zk


def whoami(cert):
    """The (scheme, id) pairs whoAmI answers a session of cert's; a null string as None."""
    p = Pipe(cert)
    p.tls.write(CONNECT)
    p.flush()
    p.frame()
    p.tls.write(request(1, 107))  # whoAmI
    p.flush()
    body = p.frame()[16:]
    ids, at = [], 4
    for _ in range(struct.unpack(">i", body[:4])[0]):
        pair = []
        for _ in range(2):
            n = struct.unpack(">i", body[at:at + 4])[0]
            pair.append(None if n < 0 else body[at + 4:at + 4 + n].decode())
            at += 4 + max(n, 0)
        ids.append(tuple(pair))
    p.raw.close()
    return ids


def all_checks():
    # Sessions by certificate, and an x509 ACL naming a subject of several parts (RFC 2253 order).
    client_dn = "CN=client,OU=test,O=Tumbler"
    zk = kazoo("client")
    zk.create("/tls-k", b"k", acl=[ACL(Permissions.ALL, Id("x509", client_dn))])
    check("the client's certificate reads its x509 node", zk.get("/tls-k")[0] == b"k")
    check("the ACL is stored as given", zk.get_acls("/tls-k")[0][0].id == Id("x509", client_dn))
    zk.stop()
    zk = kazoo()
    try:
        zk.get("/tls-k")
        check("a plain session is refused the x509 node", False)
    except NoAuthError:
        check("a plain session is refused the x509 node", True)
    zk.stop()
    zk = kazoo("other")  # the super user
    check("the super user's certificate reads it", zk.get("/tls-k")[0] == b"k")
    zk.delete("/tls-k")
    zk.stop()

    # The x509 id of a subject with a multi-valued RDN, attributes RFC 2253 has no keyword for
    # (by OID, the value's DER in hex), characters to escape and a non-ASCII one, as Java's
    # X500Principal.getName() writes it (ZooKeeper's id, which ACLs and superUser name).
    odd = (r'STREET=Main St,2.5.4.12=#0c024472,1.2.840.113549.1.9.1=#16056140622e63,'
           r'CN=odd\=name\#1 \<x\>\;\"q\"\\,OU=test+UID=u1,L=Zürich,'
           r'O=Tumbler\, Inc.,DC=example')
    ids = whoami("odd")
    check(f"whoAmI over TLS with an odd subject: {ids}", ("x509", odd) in ids)
    # A certificate whose subject is empty (its name in the SAN alone): the id is "", not null.
    ids = whoami("nameless")
    check(f"whoAmI over TLS with an empty subject: {ids}", ("x509", "") in ids)
    # The superUser's certificate: super:"" beside its x509 id, as ZooKeeper 3.8.0 gives it.
    ids = whoami("other")
    check(f"whoAmI of the x509 super user: {ids}",
          ("super", "") in ids and ("x509", "CN=other") in ids)

    # setAuth x509 over TLS with a certificate: the provider takes the certificate again.
    p = Pipe()
    p.tls.write(CONNECT)
    p.flush()
    p.frame()
    p.tls.write(request(-4, 100, struct.pack(">iI", 0, 4) + b"x509" + struct.pack(">i", 0)))
    p.flush()
    err = struct.unpack(">iqi", p.frame()[:16])[2]
    check(f"setAuth x509 over TLS with a certificate: {err}", err == 0)
    p.raw.close()

    # A create and a closeSession that arrive with the client's close_notify, in one write, are
    # run: the node is made, and the session ends with its ephemeral node at once, not once it
    # expires.
    p = Pipe()
    p.tls.write(CONNECT)
    p.flush()
    p.frame()
    p.tls.write(create(1, "/tls-eph", 1))
    p.flush()
    check("an ephemeral node made over TLS", struct.unpack(">iqi", p.frame()[:16])[2] == 0)
    p.tls.write(create(2, "/tls-last", 0) + request(3, -11))
    try:
        p.tls.unwrap()
    except ssl.SSLWantReadError:
        pass
    p.flush()
    zk = kazoo()
    gone = time.monotonic() + 10
    while zk.exists("/tls-eph") and time.monotonic() < gone:
        time.sleep(0.05)
    check("a create sent with the close_notify is made", zk.exists("/tls-last") is not None)
    check("a closeSession sent with the close_notify ends the session: its ephemeral node is "
          "gone within 10 s (its timeout is 30 s)", zk.exists("/tls-eph") is None)
    zk.delete("/tls-last")
    zk.stop()
    p.raw.close()

    # Handshakes that must fail, or sessions that must not open.
    err, sid = tls_session()
    check("a trusted certificate gets a session", err is None and sid is not None)
    err, sid = tls_session(cert="rogue")
    check(f"a certificate of an untrusted CA gets no session ({err})", sid is None)
    err, sid = tls_session(cert=None)
    check(f"no certificate gets no session ({err})", sid is None)
    err, sid = tls_session(ca="rogueca")
    check(f"the client refuses the server under another CA ({err})",
          err == "SSLCertVerificationError" and sid is None)
    tickets = []
    err, sid = tls_session(version=ssl.TLSVersion.TLSv1_2,
                           seen=lambda s: tickets.append(s.session.has_ticket))
    check("TLS 1.2 is offered", err is None and sid is not None)
    if kind != "zk":  # ZooKeeper's JDK gives one; tumblerd keeps nothing to resume
        check(f"TLS 1.2 gets no session ticket ({tickets})", tickets == [False])
    err, sid = tls_session(version=ssl.TLSVersion.TLSv1_3)
    if kind == "zk":  # 3.8.0 enables ssl.protocol alone, TLSv1.2
        check(f"ZooKeeper refuses TLS 1.3 ({err})", sid is None)
    else:
        check("TLS 1.3 is offered", err is None and sid is not None)
    with socket.create_connection(("127.0.0.1", tls_port), timeout=10) as s:
        check("a plain ConnectRequest at the TLS port gets no session, and is closed",
              session(s) is None and closed_by_server(s))
    with socket.create_connection(("127.0.0.1", tls_port), timeout=10) as s:
        s.sendall(b"\x16\x03\x01\x00\xff" + b"\xee" * 255)  # a handshake record of garbage
        check("garbage at the TLS port is closed", closed_by_server(s))
    raw = socket.create_connection(("127.0.0.1", plain_port), timeout=10)
    try:
        context().wrap_socket(raw, server_hostname="localhost").close()
        check("a TLS handshake at the plain port fails", False)
    except (OSError, ssl.SSLError) as e:
        check(f"a TLS handshake at the plain port fails ({type(e).__name__})", True)
    raw.close()

    # A connection that never begins a session (nor a handshake) is closed after 10 s.  ZooKeeper
    # times the TLS handshake (Netty's 10 s); its NIO factory closes an idle plain connection after
    # 10-20 s (19.6 s measured), but the Netty factory its TLS port needs leaves one open.
    names = ("TLS", "plain") if kind != "zk" else ("TLS",)
    idle = [socket.create_connection(("127.0.0.1", tls_port if n == "TLS" else plain_port), timeout=25)
            for n in names]
    start = time.monotonic()
    for s, port in zip(idle, names):
        closed = closed_by_server(s)
        check(f"an idle connection at the {port} port is closed within 25 s "
              f"({time.monotonic() - start:.1f} s)", closed)
        s.close()

    # Still serving, both ports.
    err, sid = tls_session()
    check("after all that, TLS sessions still open", sid is not None)
    zk = kazoo()
    check("and plain ones", zk.exists("/") is not None)
    zk.stop()

    # mntr counts the failed handshakes (the untrusted certificate, the missing one, TLS 1.3 at
    # ZooKeeper, the plain ConnectRequest and the garbage) and has none left on its way.
    mntr = mntr_now()
    check(f"mntr: zk_unsuccessful_handshake {mntr.get('zk_unsuccessful_handshake')} >= 3",
          int(mntr.get("zk_unsuccessful_handshake", 0)) >= 3)
    check(f"mntr: zk_outstanding_tls_handshake {mntr.get('zk_outstanding_tls_handshake')} == 0",
          mntr.get("zk_outstanding_tls_handshake") == "0")
    # A handshake the client gives up (a ClientHello's record header, then the close) counts too.
    failed = int(mntr["zk_unsuccessful_handshake"])
    with socket.create_connection(("127.0.0.1", tls_port), timeout=10) as s:
        s.sendall(b"\x16\x03\x01\x00\x40")
    end = time.monotonic() + 10
    while int(mntr_now()["zk_unsuccessful_handshake"]) == failed and time.monotonic() < end:
        time.sleep(0.1)
    check("a handshake given up counts as unsuccessful",
          int(mntr_now()["zk_unsuccessful_handshake"]) == failed + 1)


def mntr_now():
    """mntr's figures, by key."""
    with socket.create_connection(("127.0.0.1", plain_port), timeout=10) as s:
        s.sendall(b"mntr")
        text = b""
        while chunk := s.recv(65536):
            text += chunk
    return dict(line.split("\t", 1) for line in text.decode().splitlines() if "\t" in line)


def reload_checks(dir, pid, by_signal):
    """Renewal of live.p12: by SIGHUP (written in place, and not read before the signal), or
    by client.certReload (renamed over, then written in place)."""
    def org():
        subject = {}
        tls_session(seen=lambda s: subject.update(x[0] for x in s.getpeercert()["subject"]))
        return subject.get("organizationName")

    def within(seconds, ok):
        deadline = time.monotonic() + seconds
        while not ok():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def log_has(text):
        return within(10, lambda: text in open(f"{dir}/server.log").read())

    def put(data, renamed):
        target = f"{dir}/live.p12"
        with open(target + ".new" if renamed else target, "wb") as f:
            f.write(data)
        if renamed:
            os.replace(target + ".new", target)
        if by_signal:
            os.kill(pid, signal.SIGHUP)

    renewed = open(f"{certs}/renewed.p12", "rb").read()
    zk = kazoo("client")
    zk.create("/before", b"b")
    check("the certificate in use at start", org() == "Tumbler")
    if by_signal:
        shutil.copy(f"{certs}/renewed.p12", f"{dir}/live.p12")
        time.sleep(2.5)
        check("without client.certReload a changed store waits for SIGHUP", org() == "Tumbler")
    put(renewed, renamed=not by_signal)
    check("the renewed certificate is in use", within(10, lambda: org() == "Tumbler renewed"))
    check("the reload is logged", log_has("the key and trust stores were read again"))
    check("the open session went on", zk.get("/before")[0] == b"b" and zk.connected)
    put(b"not a key store", renamed=False)
    check("a broken store is refused in the log", log_has("the certificates in use stay"))
    check("and leaves the renewed certificate in use", org() == "Tumbler renewed")
    if not by_signal:
        put(open(f"{certs}/server.p12", "rb").read(), renamed=False)
        check("a store mended in place is read again", within(10, lambda: org() == "Tumbler"))
    zk.stop()


def want_checks():
    def cipher_of(cert=None, version=None):
        got = []
        err, sid = tls_session(cert=cert, version=version,
                               seen=lambda s: got.append(s.cipher()[0]))
        return (got[0] if got else None), sid is not None

    cipher, ok = cipher_of()
    check(f"no certificate gets a session, by the one suite ({cipher})",
          ok and cipher == "ECDHE-RSA-AES256-GCM-SHA384")
    check("a certificate gets a session", cipher_of("client")[1])
    check("an untrusted certificate, though only wanted, gets none", not cipher_of("rogue")[1])
    check("TLS 1.3 has none of the suites named",
          cipher_of(version=ssl.TLSVersion.TLSv1_3)[0] is None)


def inter_checks():
    """A trust store of an intermediate CA alone: what it signed is trusted, as Java trusts
    every certificate of a store, not only self-signed roots; what the root above it signed is
    not."""
    check("a certificate the trust store's intermediate CA signed gets a session",
          tls_session(cert="underinter")[1] is not None)
    check("one the root above that CA signed gets none", tls_session(cert="client")[1] is None)


if mode == "all":
    all_checks()
elif mode == "inter":
    inter_checks()
elif mode in ("reload", "watch"):
    reload_checks(sys.argv[4], int(sys.argv[5]), by_signal=mode == "reload")
elif mode == "only":
    check("a session on the TLS port alone", tls_session()[1] is not None)
else:
    want_checks()
sys.exit(1 if failures else 0)
