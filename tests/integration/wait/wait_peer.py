#!/usr/bin/python3
"""Kernel-side peer for the wait tests (tests/integration/wait_*.sh).

Runs on the kernel stack in the peer namespace. Every blocking call has a
timeout, so a stack that stops answering fails the test instead of hanging.

serve IP PORT
    Accept connections (one thread each) and echo every line, except
    "connect PORT", which connects back to the client's address:PORT (and
    keeps that connection open), and "sink", after which the connection is
    never read again. Prints "listening".
hold IP PORT N BYTES
    Open N connections (each connect must complete: the handshake is done
    by the other side's stack), send BYTES on each, then wait until every
    byte is acknowledged (SIOCOUTQ reaches 0). Prints "connected N", then
    "acked N", then sleeps until killed.
keepalive IP PORT SECS
    Connect with keep-alive probes after 1 s idle, every 1 s, 2 unanswered
    ones fatal; stay idle SECS seconds, then print "alive probes=P" (P: the
    probes this namespace sent, TcpExt TCPKeepAlive) or "dead ERRNO".
recvconn IP PORT BYTES
    Connect twice, one after the other (the server accepts them in that
    order), print "connected", receive BYTES on the first (60 s at most),
    print "got N", then keep both open until killed.
Failures print "FAIL: ..." and exit 1.
"""
import errno
import fcntl
import socket
import struct
import sys
import termios
import threading
import time

TIMEOUT = 20


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def say(msg):
    print(msg, flush=True)


def serve_conn(c, addr):
    c.settimeout(600)
    keep = []
    buf = b""
    try:
        while True:
            b = c.recv(4096)
            if not b:
                return
            buf += b
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.startswith(b"connect "):
                    port = int(line.split()[1])
                    keep.append(socket.create_connection((addr[0], port),
                                                         timeout=TIMEOUT))
                elif line == b"sink":
                    time.sleep(3600)
                else:
                    c.sendall(line + b"\n")
    except OSError:
        return
    finally:
        c.close()


def serve(ip, port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((ip, int(port)))
    ls.listen(16)
    say("listening")
    while True:
        c, addr = ls.accept()
        threading.Thread(target=serve_conn, args=(c, addr), daemon=True).start()


def outq(s):
    return struct.unpack("i", fcntl.ioctl(s.fileno(), termios.TIOCOUTQ,
                                          b"\0" * 4))[0]


def hold(ip, port, n, nbytes):
    socks = []
    for i in range(int(n)):
        try:
            socks.append(socket.create_connection((ip, int(port)),
                                                  timeout=TIMEOUT))
        except OSError as e:
            fail(f"connection {i}: {e}")
    say(f"connected {len(socks)}")
    data = b"d" * int(nbytes)
    for s in socks:
        s.sendall(data)
    deadline = time.monotonic() + 30
    while any(outq(s) for s in socks):
        if time.monotonic() > deadline:
            fail("unacknowledged bytes: " + " ".join(str(outq(s)) for s in socks))
        time.sleep(0.05)
    say(f"acked {len(socks)}")
    time.sleep(3600)


def keepalive_probes():
    with open("/proc/net/netstat") as f:
        lines = f.read().splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            d = dict(zip(names.split()[1:], values.split()[1:]))
            return int(d["TCPKeepAlive"])
    fail("no TcpExt TCPKeepAlive in /proc/net/netstat")


def keepalive(ip, port, secs):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 2)
    s.settimeout(TIMEOUT)
    s.connect((ip, int(port)))
    p0 = keepalive_probes()
    say("connected")
    time.sleep(float(secs))
    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    what = errno.errorcode.get(err, str(err))
    if err == 0:
        s.setblocking(False)
        try:
            d = s.recv(1)
            what = "data" if d else "eof"  # not what an idle server sends
        except BlockingIOError:
            what = ""
        except OSError as e:
            what = errno.errorcode.get(e.errno, str(e.errno))
    if not what:
        say(f"alive probes={keepalive_probes() - p0}")
    else:
        say(f"dead {what}")
    time.sleep(3600)


def recvconn(ip, port, nbytes):
    a = socket.create_connection((ip, int(port)), timeout=TIMEOUT)
    b = socket.create_connection((ip, int(port)), timeout=TIMEOUT)
    say("connected")
    a.settimeout(60)
    got = 0
    try:
        while got < int(nbytes):
            d = a.recv(65536)
            if not d:
                break
            got += len(d)
    except OSError as e:
        say(f"recv error {e}")
    say(f"got {got}")
    time.sleep(3600)
    b.close()


def main():
    cmds = {"serve": serve, "hold": hold, "keepalive": keepalive,
            "recvconn": recvconn}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        fail("usage: wait_peer.py serve|hold|keepalive|recvconn ARGS")
    cmds[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
