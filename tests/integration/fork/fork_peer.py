#!/usr/bin/python3
"""Kernel-side peer and clients for the fork integration tests.

Runs on the kernel stack in the peer namespace. Every socket has a timeout,
so a connection nobody serves fails the test instead of hanging it.

echo-server IP PORT LOG
    Accept connections (one thread each) and echo them. The first line is
    special: "whoami\\n" is answered with "from CLIENT_IP\\n"; "delay\\n" is
    echoed after 1.5 s; any other line is echoed. Then everything is echoed
    until the client's EOF. One line per connection is appended to LOG:
    "conn from=IP result=eof|rst|timeout|error:... bytes=N" (bytes received).
echo-client IP PORT LOG
    Connect (retrying while refused, up to 30 s) and echo the same way; the
    exit status is 0 when the connection ended with EOF.
batches IP PORT NCHILD ROUNDS
    For a pre-forked server whose children greet with "PID\\n" and serve one
    connection at a time: ROUNDS times, open NCHILD connections together,
    read each greeting, then send a random payload on each, half-close, and
    check the echo. Prints "served PID N" per pid and "total N".
bulk IP PORT CONNS CONCURRENCY SIZE[,SIZE...]
    CONNS connections, CONCURRENCY at a time, payload sizes cycled from the
    list: each sends its payload (in a thread), half-closes and reads the
    echo to EOF; the sha256 must match. Prints "ok conns=N bytes=N".
kill IP PORT NCONN NNEW
    For a pre-forked server whose children greet with "PID\\n" and echo:
    open NCONN connections and check one round trip on each; SIGKILL the
    child holding the first; its connections must see EOF or RST on the
    next send/recv (not a timeout); the others must still echo; NNEW new
    connections must be served by surviving children.
stream IP PORT SECONDS
    Connect and send for SECONDS without reading (a 4 KB receive buffer:
    an echoing server soon cannot send), then close. Prints "sent N".
pair IP PORT1 PORT2 SIZE
    For a relay that starts a server on PORT2 for each connection to PORT1
    and joins the two: connect A to PORT1, then B to PORT2 (retrying while
    refused, up to 30 s), send SIZE random bytes A->B and B->A at once and
    check both sha256s. Prints "ok pair bytes=N".
udpflood IP PORT COUNT
    Send COUNT datagrams of 1000 bytes to IP:PORT as fast as the socket
    takes them. Prints "sent N".
Failures print "FAIL: ..." and exit 1.
"""
import hashlib
import os
import random
import signal
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

TIMEOUT = 10
LOG_LOCK = threading.Lock()


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def connect_retry(ip, port, wait=30):
    deadline = time.monotonic() + wait
    while True:
        try:
            return socket.create_connection((ip, port), timeout=TIMEOUT)
        except (ConnectionRefusedError, socket.timeout, OSError):
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


def recv_line(s):
    buf = b""
    while not buf.endswith(b"\n"):
        b = s.recv(1)
        if not b:
            break
        buf += b
    return buf


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            break
        buf += b
    return buf


# --- echo peer ---------------------------------------------------------------


def echo_conn(s, client_ip, log):
    total = 0
    try:
        s.settimeout(30)
        line = recv_line(s)
        total += len(line)
        if line == b"whoami\n":
            s.sendall(("from %s\n" % client_ip).encode())
        elif line:
            if line == b"delay\n":
                time.sleep(1.5)
            s.sendall(line)
        if line:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                total += len(b)
                s.sendall(b)
        result = "eof"
    except ConnectionResetError:
        result = "rst"
    except socket.timeout:
        result = "timeout"
    except OSError as e:
        result = "error:%s" % e.__class__.__name__
    with LOG_LOCK:
        with open(log, "a") as f:
            f.write("conn from=%s result=%s bytes=%d\n" % (client_ip, result, total))
    s.close()
    return result


def echo_server(ip, port, log):
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind((ip, int(port)))
    l.listen(64)
    print("listening", flush=True)
    while True:
        s, addr = l.accept()
        threading.Thread(target=echo_conn, args=(s, addr[0], log), daemon=True).start()


def echo_client(ip, port, log):
    s = connect_retry(ip, int(port))
    r = echo_conn(s, s.getsockname()[0], log)
    print("result=%s" % r, flush=True)
    sys.exit(0 if r == "eof" else 1)


# --- pre-forked server checks -------------------------------------------------


def greeting(s, what):
    try:
        line = recv_line(s)
    except socket.timeout:
        fail("%s: no greeting within %d s (no child accepted it)" % (what, TIMEOUT))
    except OSError as e:
        fail("%s: greeting: %s" % (what, e))
    if not line.endswith(b"\n") or not line[:-1].isdigit():
        fail("%s: bad greeting %r (connection closed?)" % (what, line))
    return int(line)


def batches(ip, port, nchild, rounds):
    port, nchild, rounds = int(port), int(nchild), int(rounds)
    rnd = random.Random(1)
    served = {}
    total = 0
    for r in range(rounds):
        socks = []
        for i in range(nchild):
            what = "round %d conn %d" % (r, i)
            try:
                s = connect_retry(ip, port) if r == 0 and i == 0 else \
                    socket.create_connection((ip, port), timeout=TIMEOUT)
            except OSError as e:
                fail("%s: connect: %s" % (what, e))
            socks.append(s)
        pids = [greeting(s, "round %d conn %d" % (r, i)) for i, s in enumerate(socks)]
        if len(set(pids)) != nchild:
            fail("round %d: greetings from %s, want %d different children" % (r, pids, nchild))
        payloads = [os.urandom(rnd.randint(1, 65536)) for _ in socks]
        for s, p in zip(socks, payloads):
            s.sendall(p)
            s.shutdown(socket.SHUT_WR)
        for i, (s, p, pid) in enumerate(zip(socks, payloads, pids)):
            got = b""
            try:
                while True:
                    b = s.recv(65536)
                    if not b:
                        break
                    got += b
            except OSError as e:
                fail("round %d conn %d (child %d): echo: %s" % (r, i, pid, e))
            if got != p:
                fail("round %d conn %d (child %d): echo of %d bytes came back as %d different bytes"
                     % (r, i, pid, len(p), len(got)))
            s.close()
            served[pid] = served.get(pid, 0) + 1
            total += 1
    for pid in sorted(served):
        print("served %d %d" % (pid, served[pid]))
    print("total %d" % total, flush=True)


def bulk(ip, port, conns, conc, sizes):
    port, conns, conc = int(port), int(conns), int(conc)
    sizes = [int(x) for x in sizes.split(",")]
    payloads = {n: os.urandom(n) for n in set(sizes)}
    digests = {n: hashlib.sha256(p).hexdigest() for n, p in payloads.items()}
    abort = threading.Event()
    failures = []

    def one(i):
        if abort.is_set():
            return 0
        n = sizes[i % len(sizes)]
        p = payloads[n]
        err = []
        try:
            s = socket.create_connection((ip, port), timeout=30)
        except OSError as e:
            failures.append("conn %d: connect: %s" % (i, e))
            abort.set()
            return 0

        def send():
            try:
                s.sendall(p)
                s.shutdown(socket.SHUT_WR)
            except OSError as e:
                err.append("send: %s" % e)

        t = threading.Thread(target=send)
        t.start()
        h = hashlib.sha256()
        got = 0
        try:
            while True:
                b = s.recv(262144)
                if not b:
                    break
                h.update(b)
                got += len(b)
        except OSError as e:
            err.append("recv after %d bytes: %s" % (got, e))
        t.join()
        s.close()
        if not err and (got != n or h.hexdigest() != digests[n]):
            err.append("echo of %d bytes: got %d bytes, sha256 %s" %
                       (n, got, "differs" if got == n else "-"))
        if err:
            failures.append("conn %d (%d bytes): %s" % (i, n, "; ".join(err)))
            abort.set()
            return 0
        return n

    with ThreadPoolExecutor(max_workers=conc) as ex:
        total = sum(ex.map(one, range(conns)))
    if failures:
        fail(failures[0] + (" (+%d more)" % (len(failures) - 1) if len(failures) > 1 else ""))
    print("ok conns=%d bytes=%d" % (conns, total), flush=True)


def roundtrip(s, msg, what):
    try:
        s.sendall(msg)
        got = recv_exact(s, len(msg))
    except OSError as e:
        fail("%s: %s" % (what, e))
    if got != msg:
        fail("%s: sent %r, got %r" % (what, msg, got))


def gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def kill_test(ip, port, nconn, nnew):
    port, nconn, nnew = int(port), int(nconn), int(nnew)
    conns = []
    for i in range(nconn):
        try:
            s = connect_retry(ip, port) if i == 0 else \
                socket.create_connection((ip, port), timeout=TIMEOUT)
        except OSError as e:
            fail("conn %d: connect: %s" % (i, e))
        pid = greeting(s, "conn %d" % i)
        roundtrip(s, b"ping-%d\n" % i, "conn %d (child %d) before the kill" % (i, pid))
        conns.append((s, pid))
    victim = conns[0][1]
    held = [c for c in conns if c[1] == victim]
    others = [c for c in conns if c[1] != victim]
    print("victim %d holds %d of %d connections; children seen: %s" %
          (victim, len(held), nconn, sorted({p for _, p in conns})), flush=True)
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not gone(victim):
        if time.monotonic() > deadline:
            fail("child %d still exists 10 s after SIGKILL" % victim)
        time.sleep(0.05)

    outcomes = []
    for i, (s, _) in enumerate(held):
        try:
            s.sendall(b"after-kill\n")
            b = s.recv(100)
            out = "eof" if not b else "data:%r" % b
        except (ConnectionResetError, BrokenPipeError):
            out = "rst"
        except socket.timeout:
            out = "timeout"
        except OSError as e:
            out = "error:%s" % e
        outcomes.append(out)
        print("killed child's conn %d: %s" % (i, out), flush=True)
        s.close()
    bad = [o for o in outcomes if o not in ("eof", "rst")]
    if bad:
        fail("connections of the killed child: %s (want eof or rst)" % outcomes)

    for i, (s, pid) in enumerate(others):
        roundtrip(s, b"still-%d\n" % i, "surviving child %d's connection after the kill" % pid)
    print("ok: %d connections of surviving children still echo" % len(others), flush=True)

    newpids = set()
    for i in range(nnew):
        try:
            s = socket.create_connection((ip, port), timeout=TIMEOUT)
        except OSError as e:
            fail("new conn %d: connect: %s" % (i, e))
        pid = greeting(s, "new conn %d after the kill" % i)
        if pid == victim:
            fail("new conn %d greeted by the killed child %d" % (i, pid))
        roundtrip(s, b"new-%d\n" % i, "new conn %d (child %d)" % (i, pid))
        newpids.add(pid)
        s.close()
    for s, _ in others:
        s.close()
    print("ok: %d new connections served by %s" % (nnew, sorted(newpids)), flush=True)


def stream(ip, port, seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(float(seconds))
    s.connect((ip, int(port)))
    end = time.time() + float(seconds)
    n = 0
    try:
        while time.time() < end:
            n += s.send(b"x" * 10000)
    except OSError:
        pass
    s.close()
    print("sent %d" % n, flush=True)


def pair(ip, port1, port2, size):
    size = int(size)
    a = connect_retry(ip, int(port1))
    b = connect_retry(ip, int(port2))
    a.settimeout(30)
    b.settimeout(30)
    data = {"a": os.urandom(size), "b": os.urandom(size)}
    got = {}
    errs = []

    def send(s, p):
        try:
            s.sendall(p)
        except OSError as e:
            errs.append("send: %s" % e)

    def recv(s, name):
        try:
            got[name] = recv_exact(s, size)
        except OSError as e:
            errs.append("recv %s: %s" % (name, e))

    ts = [threading.Thread(target=send, args=(a, data["a"])),
          threading.Thread(target=send, args=(b, data["b"])),
          threading.Thread(target=recv, args=(a, "a")),
          threading.Thread(target=recv, args=(b, "b"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    a.close()
    b.close()
    if errs:
        fail("pair: " + "; ".join(errs))
    for src, dst in (("a", "b"), ("b", "a")):
        g = got.get(dst, b"")
        if len(g) != size or hashlib.sha256(g).digest() != hashlib.sha256(data[src]).digest():
            fail("pair: %s -> %s: got %d of %d bytes%s" %
                 (src, dst, len(g), size, ", sha256 differs" if len(g) == size else ""))
    print("ok pair bytes=%d" % (2 * size), flush=True)


def udpflood(ip, port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = b"x" * 1000
    n = 0
    for _ in range(int(count)):
        try:
            s.sendto(payload, (ip, int(port)))
            n += 1
        except OSError:
            time.sleep(0.001)
    print("sent %d" % n, flush=True)


def main():
    cmds = {
        "udpflood": (udpflood, 3),
        "stream": (stream, 3),
        "echo-server": (echo_server, 3),
        "echo-client": (echo_client, 3),
        "batches": (batches, 4),
        "bulk": (bulk, 5),
        "kill": (kill_test, 4),
        "pair": (pair, 4),
    }
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) != 2 + cmds[sys.argv[1]][1]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmds[sys.argv[1]][0](*sys.argv[2:])


if __name__ == "__main__":
    main()
