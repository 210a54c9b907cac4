#!/usr/bin/python3
"""IPv6 multicast programs for tests/integration/ipv6_mcast.sh (plain
sockets, run on the kernel or under accel-run).

  send IFNAME N RATE GROUP:PORT...
      N datagrams (payload(seq), see below) to each GROUP:PORT in turn,
      out of IFNAME (IPV6_MULTICAST_IF and the scope id), hop limit 1,
      at RATE per second (steady pacing).
  recv IFNAME N M G1 P1 G2 P2
      socket 1 bound to [::]:P1 joins G1 and socket 2 bound to
      [G2%IFNAME]:P2 joins G2, both with IPV6_JOIN_GROUP on IFNAME's
      index. Prints "joined"; once each socket has N datagrams (or
      nothing came for 5 s) prints "phase1 g1 ..." and "phase1 g2 ...",
      leaves G1 (IPV6_LEAVE_GROUP) and prints "left"; then, once socket 2
      has M more (or nothing came for 5 s), and 0.5 s later, prints
      "phase2 g1 ..." and "phase2 g2 ...". Each line: "got C bad B gaps G
      dups D from SRC:COUNT ..." (bad: a payload not payload(seq)).
"""
import select
import socket
import struct
import sys
import time


def payload(seq):
    """200 bytes: "m6 SEQ " then bytes that depend on SEQ."""
    head = ("m6 %d " % seq).encode()
    return head + bytes((seq * 7 + i) % 251 for i in range(200 - len(head)))


def parse(data):
    """SEQ of a datagram, and whether it is payload(SEQ) exactly."""
    try:
        seq = int(data.split(b" ")[1])
    except (IndexError, ValueError):
        return None, False
    return seq, data == payload(seq)


def send(ifname, n, rate, targets):
    ifindex = socket.if_nametoindex(ifname)
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, ifindex)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)
    for t in targets:
        group, port = t.rsplit(":", 1)
        t0 = time.monotonic()
        for i in range(n):
            delay = t0 + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            s.sendto(payload(i), (group, int(port), 0, ifindex))
    print("sent %d x %d" % (len(targets), n), flush=True)


class Counter:
    def __init__(self):
        self.seqs = {}  # source -> seqs
        self.bad = 0

    def add(self, data, src):
        seq, ok = parse(data)
        if not ok:
            self.bad += 1
        if seq is not None:
            self.seqs.setdefault(src, []).append(seq)

    def count(self):
        return sum(len(v) for v in self.seqs.values())

    def line(self):
        got = self.count()
        gaps = dups = 0
        for v in self.seqs.values():
            dups += len(v) - len(set(v))
            gaps += max(v) + 1 - len(set(v))
        srcs = " ".join("%s:%d" % (a, len(v)) for a, v in sorted(self.seqs.items())) or "-"
        return "got %d bad %d gaps %d dups %d from %s" % (got, self.bad, gaps, dups, srcs)


def drain(socks, counters, until, idle):
    """Read socks into counters until until() or idle seconds of silence."""
    while not until():
        r, _, _ = select.select(socks, [], [], idle)
        if not r:
            return
        for s in r:
            c = counters[socks.index(s)]
            while True:
                try:
                    data, addr = s.recvfrom(2048)
                except BlockingIOError:
                    break
                c.add(data, addr[0].split("%")[0])


def mreq(group, ifindex):
    return socket.inet_pton(socket.AF_INET6, group) + struct.pack("@I", ifindex)


def recv(ifname, n, m, g1, p1, g2, p2):
    ifindex = socket.if_nametoindex(ifname)
    s1 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s1.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s1.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s1.bind(("::", p1))
    s1.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, mreq(g1, ifindex))
    s2 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s2.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s2.bind((g2, p2, 0, ifindex))
    s2.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, mreq(g2, ifindex))
    socks = [s1, s2]
    for s in socks:
        s.setblocking(False)
    print("joined", flush=True)
    c = [Counter(), Counter()]
    drain(socks, c, lambda: c[0].count() >= n and c[1].count() >= n, 5.0)
    print("phase1 g1 " + c[0].line(), flush=True)
    print("phase1 g2 " + c[1].line(), flush=True)
    s1.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_LEAVE_GROUP, mreq(g1, ifindex))
    print("left", flush=True)
    c = [Counter(), Counter()]
    drain(socks, c, lambda: c[1].count() >= m, 5.0)
    end = time.monotonic() + 0.5
    drain(socks, c, lambda: time.monotonic() >= end, 0.5)
    print("phase2 g1 " + c[0].line(), flush=True)
    print("phase2 g2 " + c[1].line(), flush=True)


def main():
    a = sys.argv[1:]
    if a[0] == "send":
        send(a[1], int(a[2]), float(a[3]), a[4:])
    elif a[0] == "recv":
        recv(a[1], int(a[2]), int(a[3]), a[4], int(a[5]), a[6], int(a[7]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
