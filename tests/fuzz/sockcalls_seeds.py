#!/usr/bin/python3
"""Write the seed inputs of fuzz_sockcalls (tests/fuzz/fuzz_sockcalls.c).

usage: sockcalls_seeds.py OUTDIR

Each seed is a scenario in the harness's operation encoding: a passive
and an active TCP open with data both ways, close and reset, UDP with
control messages, ICMP errors and multicast joins, and a sweep of the
socket options. The fuzzer mutates them from there; keep this file in
step with the encoding in fuzz_sockcalls.c (step(), addr(), port()).
"""
import os
import struct
import sys

# Opcodes (op % 17 in step()).
SOCKET, BIND, LISTEN, CONNECT, ACCEPT, SEND, RECV, SHUTDOWN, CLOSE = range(9)
SETOPT, GETOPT, POLL, ADVANCE, PEER_SEG, PEER_SYN, PEER_UDP, PEER_ICMP = \
    range(9, 17)
# port(): index into {0, 80, 8080, 53, 5000, 40000, 1}.
P0, P80, P8080, P53, P5000, P40000 = range(6)
# addr(): the choices' order.
(ANY4, STACK4, PEER4, OTHER4, LO4, MC4, BCAST4, OFF4, ANY6, STACK6, PEER6,
 PEER_LL6, STACK_LL6, MAPPED_STACK, MAPPED_PEER, LO6, MC6, OFF6, UNSPEC) = \
    range(19)
# The option table of fuzz_sockcalls.c, in order.
OPTS = """SO_REUSEADDR SO_REUSEPORT SO_KEEPALIVE SO_LINGER SO_RCVBUF SO_SNDBUF
SO_ERROR SO_TYPE SO_BROADCAST SO_ACCEPTCONN SO_DOMAIN SO_PROTOCOL SO_RCVLOWAT
SO_OOBINLINE TCP_NODELAY TCP_MAXSEG TCP_KEEPIDLE TCP_KEEPINTVL TCP_KEEPCNT
TCP_INFO TCP_CONGESTION TCP_CORK TCP_QUICKACK TCP_USER_TIMEOUT IP_TOS IP_TTL
IP_PKTINFO IP_RECVTOS IP_RECVTTL IP_MULTICAST_IF IP_MULTICAST_TTL
IP_MULTICAST_LOOP IP_MULTICAST_ALL IP_ADD_MEMBERSHIP IP_DROP_MEMBERSHIP
IP_ADD_SOURCE_MEMBERSHIP IP_DROP_SOURCE_MEMBERSHIP IP_BLOCK_SOURCE
IP_UNBLOCK_SOURCE MCAST_JOIN_GROUP MCAST_LEAVE_GROUP MCAST_JOIN_SOURCE_GROUP
MCAST_LEAVE_SOURCE_GROUP MCAST_BLOCK_SOURCE MCAST_UNBLOCK_SOURCE IPV6_V6ONLY
IPV6_UNICAST_HOPS IPV6_MULTICAST_HOPS IPV6_MULTICAST_IF IPV6_MULTICAST_LOOP
IPV6_JOIN_GROUP IPV6_LEAVE_GROUP IPV6_RECVPKTINFO IPV6_RECVHOPLIMIT
IPV6_RECVTCLASS IPV6_TCLASS IPV6_2292PKTINFO IPV6_2292HOPLIMIT
MCAST6_JOIN_GROUP MCAST6_LEAVE_GROUP UDP_CORK""".split()
FIN, SYN, RST, PSH, ACK = 1, 2, 4, 8, 16


def opt(name):
    return OPTS.index(name)


def b(*v):
    return bytes(v)


def socket(slot, udp=False, family=0):  # family: 0 v4, 1 dual, 2 v6only
    return b(SOCKET, (1 if udp else 0) | family << 1, slot)


def addr(choice, port):
    return b(choice, port)


def bind(slot, a, p):
    return b(BIND, slot) + addr(a, p)


def connect(slot, a, p):
    return b(CONNECT, slot) + addr(a, p)


def setopt_int(slot, name, one=True):
    return b(SETOPT, slot, opt(name), 1 if one else 0)  # int 1 / 0


def setopt_raw(slot, name, raw):
    return b(SETOPT, slot, opt(name), 128 + len(raw)) + raw


def getopt(slot, name, length=64):
    return b(GETOPT, slot, opt(name), length)


def send(slot, n, flags=0, to=None):
    c = 4 if to else 0
    s = b(SEND, slot, c) + struct.pack(">H", n)
    if to:
        s += addr(*to)
    return s + b(flags)


def recv(slot, n, ctl=True, name=True, flags=0):
    c = (4 if ctl else 0) | (2 if name else 0)
    s = b(RECV, slot, c) + struct.pack(">H", n) + b(128)
    if name:
        s += b(128)
    return s + b(flags)


def seg(flow, flags, data=0, win=None):
    mode = (0x80 if data else 0) | (0x10 if win is not None else 0)
    s = b(PEER_SEG, flow, mode, flags)
    if win is not None:
        s += struct.pack(">H", win)
    if data:
        s += struct.pack(">H", data)
    return s


def syn(v6, sport, port, seq=1000):
    c = (1 if v6 else 0) | 2 | 4 | 8 | 16  # MSS, wscale, SACK, timestamps
    return b(PEER_SYN, c, sport, port) + struct.pack(">I", seq) + b(0x05, 7)


def advance(dt):
    return b(ADVANCE, dt)


SEEDS = {
    "tcp-passive-v4": (
        socket(0) + setopt_int(0, "SO_REUSEADDR") + bind(0, ANY4, P80) +
        b(LISTEN, 0, 8) + syn(False, 1, P80) + seg(0, ACK) +
        b(ACCEPT, 0, 1, 128) + seg(0, PSH | ACK, data=100) +
        recv(1, 4096) + send(1, 3000) + advance(5) + seg(0, ACK) +
        b(POLL, 0, 0) + getopt(1, "TCP_INFO", 232) +
        b(SHUTDOWN, 1, 1) + seg(0, FIN | ACK) + recv(1, 100) +
        advance(50) + b(CLOSE, 1) + b(CLOSE, 0)),
    "tcp-active-v6": (
        socket(2, family=1) + setopt_int(2, "TCP_NODELAY") +
        connect(2, PEER6, P8080) + seg(0, SYN | ACK) + b(POLL, 0) +
        send(2, 3000) + advance(50) + seg(0, ACK, data=500) +
        recv(2, 1000) + seg(0, RST) + recv(2, 10) +
        getopt(2, "SO_ERROR", 4) + b(CLOSE, 2)),
    "tcp-active-v4-loss": (
        socket(3) + connect(3, PEER4, P80) + seg(0, SYN | ACK) +
        send(3, 19999) + advance(210) + advance(230) +
        seg(0, ACK, win=2000) + advance(201) + send(3, 5000, flags=2) +
        seg(0, FIN | ACK) + recv(3, 10) + b(CLOSE, 3) + advance(220)),
    "tcp-listen-v6-many": (
        socket(0, family=2) + bind(0, STACK6, P8080) + b(LISTEN, 0, 2) +
        syn(True, 2, P8080) + syn(True, 3, P8080) + syn(True, 4, P8080) +
        seg(0, ACK) + seg(1, ACK) + seg(2, ACK) + b(ACCEPT, 0, 1, 28) +
        b(ACCEPT, 0, 2, 28) + b(POLL, 0, 0, 0) + send(1, 100) +
        setopt_raw(1, "SO_LINGER", struct.pack("<ii", 1, 0)) +
        b(CLOSE, 1) + b(CLOSE, 0) + advance(100)),
    "udp-v4-cmsg-icmp": (
        socket(4, udp=True) + setopt_int(4, "IP_PKTINFO") +
        setopt_int(4, "IP_RECVTTL") + setopt_int(4, "IP_RECVTOS") +
        bind(4, ANY4, P5000) + b(PEER_UDP, 0, P5000, 0, 100) +
        recv(4, 2000) + send(4, 100, to=(PEER4, P53)) +
        connect(4, PEER4, P53) + send(4, 10) +
        b(PEER_ICMP, 0, 3, 3, 0, P5000, P53) + recv(4, 100) +
        getopt(4, "SO_ERROR", 4) + b(CLOSE, 4)),
    "udp-v6-mcast": (
        socket(5, udp=True, family=1) + setopt_int(5, "IPV6_RECVPKTINFO") +
        setopt_raw(5, "IPV6_JOIN_GROUP",
                   b(0xff, 2, *([0] * 13), 0xfb) + struct.pack("<I", 0)) +
        setopt_raw(5, "IP_ADD_MEMBERSHIP", b(224, 0, 0, 251, 0, 0, 0, 0)) +
        bind(5, ANY6, P53) + b(PEER_UDP, 1, P53, 0, 200) +
        b(PEER_UDP, 0, P53, 0, 50) + recv(5, 1000) + recv(5, 1000) +
        send(5, 50, to=(MC6, P53)) + send(5, 50, to=(MC4, P53)) +
        setopt_raw(5, "IPV6_LEAVE_GROUP",
                   b(0xff, 2, *([0] * 13), 0xfb) + struct.pack("<I", 0)) +
        b(CLOSE, 5)),
}
sweep = bytearray(socket(6) + socket(7, udp=True, family=1))
for name in OPTS:
    for s in (6, 7):
        sweep += setopt_int(s, name) + getopt(s, name)
SEEDS["options-sweep"] = bytes(sweep + b(CLOSE, 6, CLOSE, 7))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(sys.argv[1], name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
