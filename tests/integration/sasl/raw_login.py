"""SASL logins over raw frames (pure-sasl computes the digests).

    raw_login.py HOST:PORT USER PASSWORD         a login, then a second SASL request on the same
                                                 connection: the server answers AuthFailed with
                                                 a null token and closes, as Java's SaslServer
                                                 refuses a step after completion
    raw_login.py HOST:PORT USER PASSWORD refused N
                                                 N logins with that (wrong) password, each
                                                 refused with AuthFailed
"""
import socket
import struct
import sys

from puresasl.client import SASLClient

host, port = sys.argv[1].rsplit(":", 1)
user, password = sys.argv[2], sys.argv[3]
sock = None


def send(payload):
    sock.sendall(struct.pack(">i", len(payload)) + payload)


def recv():
    """One frame's payload, or None once the server has closed."""
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data
    head = exactly(4)
    return head and exactly(struct.unpack(">i", head)[0])


def sasl(xid, token):
    """Sends a SASL request; returns (err, token or None) of its reply."""
    send(struct.pack(">iii", xid, 102, len(token)) + token)
    reply = recv()
    rxid, _, err, n = struct.unpack(">iqii", reply[:20])
    assert rxid == xid, (rxid, xid)
    return err, (reply[20:20 + n] if n >= 0 else None)


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)


def login():
    """A new session and a login on it: the error of the step that failed, else 0."""
    global sock
    sock = socket.create_connection((host, int(port)), timeout=10)
    send(struct.pack(">iqiqi", 0, 0, 30000, 0, 16) + bytes(16))
    check(recv() is not None, "no handshake reply")
    client = SASLClient("zk-sasl-md5", "zookeeper", mechanism="DIGEST-MD5", username=user,
                        password=password)
    challenge, xid = None, 0
    while True:
        response = client.process(challenge) or b""
        if client.complete and not response:  # it has checked the server's rspauth
            break
        xid += 1
        err, challenge = sasl(xid, response)
        if err != 0:
            return err
    check(xid == 2, "the login took %d steps, not 2" % xid)
    return 0


if sys.argv[4:5] == ["refused"]:
    for _ in range(int(sys.argv[5])):
        err = login()
        check(err == -115, "a wrong password got %d" % err)
        check(recv() is None, "the connection stayed open")
        sock.close()
    print("%s logins refused" % sys.argv[5])
    sys.exit(0)

check(login() == 0, "the login failed")

send(struct.pack(">ii", 10, 107))  # whoAmI
check(b"\x00\x00\x00\x04sasl" + struct.pack(">i", len(user)) + user.encode() in recv(),
      "whoAmI lacks sasl:" + user)

err, token = sasl(11, b"")
check(err == -115 and token is None, "a second login got %d %r" % (err, token))
check(recv() is None, "the connection stayed open")
print("SASL login, whoAmI and refused second login: as expected")
