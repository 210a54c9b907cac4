#!/usr/bin/python3
"""Multicast programs for tests/integration/multicast.sh (plain sockets,
run on the kernel or under accel-run).

  send GROUP PORT N RATE [--if ADDR] [--ttl T] [--src ADDR] [--tag X]
      N datagrams "TAG SEQ" at RATE per second (steady pacing).
  recv GROUP PORT N [--if ADDR] [--socks K] [--bind-group]
       [--source SRC] [--join-all] [--idle S] [--fork]
      K sockets (SO_REUSEADDR) on PORT joined to GROUP (the first one
      only, the others get copies by IP_MULTICAST_ALL; all of them with
      --join-all); --source: the first joins with
      IP_ADD_SOURCE_MEMBERSHIP. Prints "joined", then, once every
      socket has N datagrams from one sender or nothing came for S
      seconds, one line per socket: "sock I got G gaps P dups D
      reorder R from SRC:COUNT ...". --fork: a UDP socket bound first
      (under accel-run: the stack starts), then fork(); parent and child
      each make their own sockets and print their lines prefixed with
      "parent " or "child " (the parent exits after the child).
  loop GROUP PORT
      one process, a receiver (joined before its bind) and a sender: with
      IP_MULTICAST_LOOP on the receiver gets the sender's datagrams, with
      it off it does not.
  opts IFADDR IFNAME
      the values and errno of multicast socket options, one per line,
      with addresses written as names (same output on every host).
"""
import errno
import os
import select
import socket
import struct
import sys
import time

# <linux/in.h> values Python's socket module may lack.
IP_UNBLOCK_SOURCE = 37
IP_BLOCK_SOURCE = 38
IP_ADD_SOURCE_MEMBERSHIP = 39
IP_DROP_SOURCE_MEMBERSHIP = 40
MCAST_JOIN_GROUP = 42
MCAST_BLOCK_SOURCE = 43
MCAST_UNBLOCK_SOURCE = 44
MCAST_LEAVE_GROUP = 45
MCAST_JOIN_SOURCE_GROUP = 46
MCAST_LEAVE_SOURCE_GROUP = 47


def say(line):
    """One line in one write(2): with --fork, parent and child share the
    output, and print's separate writes of text and newline interleaved
    (CI saw "child sock ... parent sock ..." on one line)."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (line + "\n").encode())

def arg(name, default=None, conv=str):
    if name in sys.argv:
        return conv(sys.argv[sys.argv.index(name) + 1])
    return default


def mreq(group, ifaddr):
    return socket.inet_aton(group) + socket.inet_aton(ifaddr)


def mreq_source(group, ifaddr, src):
    return socket.inet_aton(group) + socket.inet_aton(ifaddr) + socket.inet_aton(src)


def send(group, port, n, rate):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if arg("--if"):
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(arg("--if")))
    if arg("--src"):
        s.bind((arg("--src"), 0))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, arg("--ttl", 1, int))
    tag = arg("--tag", "d")
    t0 = time.monotonic()
    for i in range(n):
        # Steady pacing: datagram i leaves at t0 + i / rate.
        delay = t0 + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        s.sendto(("%s %d " % (tag, i)).encode().ljust(64, b"."), (group, port))
    print("sent %d" % n, flush=True)


def recv(group, port, n):
    if "--fork" in sys.argv:
        pre = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        pre.bind(("0.0.0.0", port + 1000))
        pid = os.fork()
        recv_socks(group, port, n, "child " if pid == 0 else "parent ")
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    else:
        recv_socks(group, port, n, "")


def recv_socks(group, port, n, who):
    ifaddr = arg("--if", "0.0.0.0")
    k = arg("--socks", 1, int)
    idle = arg("--idle", 5.0, float)
    socks = []
    for i in range(k):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Room for a few seconds of the feed if the machine stalls us.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        bind_to = group if ("--bind-group" in sys.argv and i == 0) else "0.0.0.0"
        s.bind((bind_to, port))
        s.setblocking(False)
        socks.append(s)
    if arg("--source"):
        socks[0].setsockopt(socket.IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP,
                            mreq_source(group, ifaddr, arg("--source")))
    else:
        socks[0].setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq(group, ifaddr))
    if "--join-all" in sys.argv:
        for s in socks[1:]:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq(group, ifaddr))
    say(who + "joined")
    seqs = [dict() for _ in socks]  # per socket: source -> list of seqs
    got = [0] * k
    last = None
    while True:
        timeout = idle if last is None else max(0.0, last + idle - time.monotonic())
        if all(any(len(v) >= n for v in d.values()) for d in seqs):
            break
        r, _, _ = select.select(socks, [], [], timeout)
        if not r:
            break
        last = time.monotonic()
        for s in r:
            i = socks.index(s)
            while True:
                try:
                    data, (src, _) = s.recvfrom(2048)
                except BlockingIOError:
                    break
                seqs[i].setdefault(src, []).append(int(data.split()[1]))
                got[i] += 1
    for i, d in enumerate(seqs):
        gaps = dups = reorder = 0
        for v in d.values():
            dups += len(v) - len(set(v))
            gaps += max(v) + 1 - len(set(v))  # sequence numbers start at 0
            reorder += sum(1 for a, b in zip(v, v[1:]) if b < a)
        srcs = " ".join("%s:%d" % (a, len(v)) for a, v in sorted(d.items()))
        say("%ssock %d got %d gaps %d dups %d reorder %d from %s"
            % (who, i, got[i], gaps, dups, reorder, srcs or "-"))


def loop(group, port):
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # Joined before its bind (allowed on Linux): the join decides.
    r.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq(group, "0.0.0.0"))
    r.bind(("0.0.0.0", port))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(10):
        s.sendto(b"on %d" % i, (group, port))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
    for i in range(10):
        s.sendto(b"off %d" % i, (group, port))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    s.sendto(b"end", (group, port))
    out = []
    r.settimeout(10)  # a bound on a hang, not a timing check
    while True:
        data = r.recv(100)
        if data == b"end":
            break
        out.append(data.split()[0].decode())
    print("loop on %d off %d" % (out.count("on"), out.count("off")), flush=True)


def opts(ifaddr, ifname):
    names = {ifaddr: "ours", "0.0.0.0": "any", "10.99.99.99": "other"}
    idx = socket.if_nametoindex(ifname)
    g, g2 = "239.7.7.7", "239.7.7.8"

    def show(v):
        if isinstance(v, bytes) and len(v) == 4:
            return names.get(socket.inet_ntoa(v), socket.inet_ntoa(v))
        if isinstance(v, bytes):
            return v.hex()
        return str(v)

    def t(label, fn):
        try:
            v = fn()
            print("%s -> %s" % (label, "ok" if v is None else show(v)))
        except OSError as e:
            print("%s -> %s" % (label, errno.errorcode.get(e.errno, e.errno)))

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 5999))
    so, go, IP = s.setsockopt, s.getsockopt, socket.IPPROTO_IP
    mreqn = lambda grp, a, i: socket.inet_aton(grp) + socket.inet_aton(a) + struct.pack("i", i)
    t("get ttl", lambda: go(IP, socket.IP_MULTICAST_TTL))
    t("get ttl 1 byte", lambda: go(IP, socket.IP_MULTICAST_TTL, 1))
    t("get loop", lambda: go(IP, socket.IP_MULTICAST_LOOP))
    t("get if", lambda: go(IP, socket.IP_MULTICAST_IF, 4))
    t("set ttl 300", lambda: so(IP, socket.IP_MULTICAST_TTL, 300))
    t("set ttl 7", lambda: so(IP, socket.IP_MULTICAST_TTL, 7))
    t("get ttl", lambda: go(IP, socket.IP_MULTICAST_TTL))
    t("set loop 0 byte", lambda: so(IP, socket.IP_MULTICAST_LOOP, b"\0"))
    t("get loop", lambda: go(IP, socket.IP_MULTICAST_LOOP))
    t("set if ours", lambda: so(IP, socket.IP_MULTICAST_IF, socket.inet_aton(ifaddr)))
    t("get if", lambda: go(IP, socket.IP_MULTICAST_IF, 4))
    t("set if other", lambda: so(IP, socket.IP_MULTICAST_IF, socket.inet_aton("10.99.99.99")))
    t("set if short", lambda: so(IP, socket.IP_MULTICAST_IF, b"\0\0\0"))
    t("set if index", lambda: so(IP, socket.IP_MULTICAST_IF, mreqn("0.0.0.0", "0.0.0.0", idx)))
    t("get if", lambda: go(IP, socket.IP_MULTICAST_IF, 4))
    t("set if bad index", lambda: so(IP, socket.IP_MULTICAST_IF, mreqn("0.0.0.0", "0.0.0.0", 9999)))
    t("set if any", lambda: so(IP, socket.IP_MULTICAST_IF, socket.inet_aton("0.0.0.0")))
    t("join short", lambda: so(IP, socket.IP_ADD_MEMBERSHIP, mreq(g, ifaddr)[:7]))
    t("join unicast", lambda: so(IP, socket.IP_ADD_MEMBERSHIP, mreq("10.1.2.3", ifaddr)))
    t("join other if", lambda: so(IP, socket.IP_ADD_MEMBERSHIP, mreq(g, "10.99.99.99")))
    t("join bad index", lambda: so(IP, socket.IP_ADD_MEMBERSHIP, mreqn(g, "0.0.0.0", 9999)))
    t("drop not joined", lambda: so(IP, socket.IP_DROP_MEMBERSHIP, mreq(g, ifaddr)))
    t("block not joined", lambda: so(IP, IP_BLOCK_SOURCE, mreq_source(g, ifaddr, "10.1.1.1")))
    t("join", lambda: so(IP, socket.IP_ADD_MEMBERSHIP, mreq(g, ifaddr)))
    t("join again", lambda: so(IP, socket.IP_ADD_MEMBERSHIP, mreq(g, ifaddr)))
    t("join again by index", lambda: so(IP, socket.IP_ADD_MEMBERSHIP, mreqn(g, "0.0.0.0", idx)))
    t("block", lambda: so(IP, IP_BLOCK_SOURCE, mreq_source(g, ifaddr, "10.1.1.1")))
    t("block again", lambda: so(IP, IP_BLOCK_SOURCE, mreq_source(g, ifaddr, "10.1.1.1")))
    t("block short", lambda: so(IP, IP_BLOCK_SOURCE, mreq_source(g, ifaddr, "10.1.1.1")[:11]))
    t("unblock unknown", lambda: so(IP, IP_UNBLOCK_SOURCE, mreq_source(g, ifaddr, "10.1.1.2")))
    t("add source on exclude", lambda: so(IP, IP_ADD_SOURCE_MEMBERSHIP, mreq_source(g, ifaddr, "10.1.1.3")))
    t("unblock", lambda: so(IP, IP_UNBLOCK_SOURCE, mreq_source(g, ifaddr, "10.1.1.1")))
    t("drop", lambda: so(IP, socket.IP_DROP_MEMBERSHIP, mreq(g, ifaddr)))
    t("drop again", lambda: so(IP, socket.IP_DROP_MEMBERSHIP, mreq(g, ifaddr)))
    t("add source", lambda: so(IP, IP_ADD_SOURCE_MEMBERSHIP, mreq_source(g2, ifaddr, "10.1.1.1")))
    t("add source again", lambda: so(IP, IP_ADD_SOURCE_MEMBERSHIP, mreq_source(g2, ifaddr, "10.1.1.1")))
    t("add source 2", lambda: so(IP, IP_ADD_SOURCE_MEMBERSHIP, mreq_source(g2, ifaddr, "10.1.1.2")))
    t("block on include", lambda: so(IP, IP_BLOCK_SOURCE, mreq_source(g2, ifaddr, "10.1.1.9")))
    t("drop source", lambda: so(IP, IP_DROP_SOURCE_MEMBERSHIP, mreq_source(g2, ifaddr, "10.1.1.1")))
    t("drop source 2 (leaves)", lambda: so(IP, IP_DROP_SOURCE_MEMBERSHIP, mreq_source(g2, ifaddr, "10.1.1.2")))
    t("drop after leave", lambda: so(IP, socket.IP_DROP_MEMBERSHIP, mreq(g2, ifaddr)))
    # The protocol-independent API (RFC 3678) on another socket.
    s2 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s2.bind(("0.0.0.0", 5998))
    so2 = s2.setsockopt
    sa = lambda a, fam=socket.AF_INET: struct.pack("=H2s4s", fam, b"\0\0",
                                                   socket.inet_aton(a)).ljust(128, b"\0")
    greq = lambda i, grp: struct.pack("I4x", i) + sa(grp)
    gsreq = lambda i, grp, src, fam=socket.AF_INET: struct.pack("I4x", i) + sa(grp) + sa(src, fam)
    t("mcast join short", lambda: so2(IP, MCAST_JOIN_GROUP, greq(idx, g)[:-1]))
    t("mcast join bad index", lambda: so2(IP, MCAST_JOIN_GROUP, greq(9999, g)))
    t("mcast join", lambda: so2(IP, MCAST_JOIN_GROUP, greq(idx, g)))
    t("mcast join again", lambda: so2(IP, MCAST_JOIN_GROUP, greq(idx, g)))
    t("mcast block", lambda: so2(IP, MCAST_BLOCK_SOURCE, gsreq(idx, g, "10.1.1.1")))
    t("mcast block again", lambda: so2(IP, MCAST_BLOCK_SOURCE, gsreq(idx, g, "10.1.1.1")))
    t("mcast unblock", lambda: so2(IP, MCAST_UNBLOCK_SOURCE, gsreq(idx, g, "10.1.1.1")))
    t("mcast leave", lambda: so2(IP, MCAST_LEAVE_GROUP, greq(idx, g)))
    t("mcast leave again", lambda: so2(IP, MCAST_LEAVE_GROUP, greq(idx, g)))
    t("mcast join source", lambda: so2(IP, MCAST_JOIN_SOURCE_GROUP, gsreq(idx, g2, "10.1.1.1")))
    t("mcast join source v6", lambda: so2(IP, MCAST_JOIN_SOURCE_GROUP,
                                          gsreq(idx, g2, "10.1.1.2", socket.AF_INET6)))
    t("mcast leave source", lambda: so2(IP, MCAST_LEAVE_SOURCE_GROUP, gsreq(idx, g2, "10.1.1.1")))
    t("mcast leave after", lambda: so2(IP, MCAST_LEAVE_GROUP, greq(idx, g2)))
    n = 0
    for i in range(25):
        try:
            so(IP, socket.IP_ADD_MEMBERSHIP, mreq("239.8.0.%d" % i, ifaddr))
            n += 1
        except OSError as e:
            print("join %d groups, then %s" % (n, errno.errorcode[e.errno]))
            break


def main():
    mode = sys.argv[1]
    if mode == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    elif mode == "recv":
        recv(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif mode == "loop":
        loop(sys.argv[2], int(sys.argv[3]))
    elif mode == "opts":
        opts(sys.argv[2], sys.argv[3])
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
