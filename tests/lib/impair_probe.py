#!/usr/bin/python3
"""Numbered UDP stream for the impairment tests (tests/integration/impair.sh).

send HOST PORT COUNT [--size N] [--pps R]
    send COUNT datagrams of N bytes (default 64) numbered 0..COUNT-1 (the
    first 8 bytes, big-endian), paced at R per second (default 1000; 0: as
    fast as possible). Prints "sent=COUNT seconds=T".
recv HOST PORT [--idle S] [--wait S]
    receive numbered datagrams on HOST:PORT until S seconds (default 1) pass
    without one after the first, or --wait seconds (default 10) pass with
    none at all. Prints one key=value line: received (datagrams, copies
    included), unique, dups (copies beyond the first), out_of_order
    (datagrams whose number is below the highest seen before them), bytes,
    seconds (first to last arrival) and mbit (the rate over that time).
    Prints "ready" on stderr once bound.
"""
import socket
import struct
import sys
import time


def opt(args, name, default, conv):
    if name in args:
        i = args.index(name)
        value = conv(args[i + 1])
        del args[i:i + 2]
        return value
    return default


def send(host, port, count, args):
    size = max(8, opt(args, "--size", 64, int))
    pps = opt(args, "--pps", 1000.0, float)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    pad = b"\0" * (size - 8)
    start = time.monotonic()
    for seq in range(count):
        if pps > 0:
            due = start + seq / pps
            while True:
                left = due - time.monotonic()
                if left <= 0:
                    break
                if left > 0.002:
                    time.sleep(left - 0.001)
        while True:
            try:
                sock.sendto(struct.pack("!Q", seq) + pad, (host, port))
                break
            except BlockingIOError:
                time.sleep(0.0005)
    print("sent=%d seconds=%.3f" % (count, time.monotonic() - start), flush=True)
    return 0


def recv(host, port, args):
    idle = opt(args, "--idle", 1.0, float)
    wait = opt(args, "--wait", 10.0, float)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind((host, port))
    print("ready", file=sys.stderr, flush=True)
    seen = set()
    received = dups = out_of_order = nbytes = 0
    highest = -1
    first = last = None
    sock.settimeout(wait)
    while True:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            break
        now = time.monotonic()
        if first is None:
            first = now
            sock.settimeout(idle)
        last = now
        if len(data) < 8:
            continue
        seq = struct.unpack("!Q", data[:8])[0]
        received += 1
        nbytes += len(data)
        if seq in seen:
            dups += 1
            continue
        seen.add(seq)
        if seq < highest:
            out_of_order += 1
        highest = max(highest, seq)
    seconds = (last - first) if first is not None else 0.0
    mbit = nbytes * 8 / seconds / 1e6 if seconds > 0 else 0.0
    print("received=%d unique=%d dups=%d out_of_order=%d bytes=%d "
          "seconds=%.3f mbit=%.1f" % (received, len(seen), dups, out_of_order,
                                      nbytes, seconds, mbit), flush=True)
    return 0


def main():
    args = sys.argv[1:]
    if len(args) >= 4 and args[0] == "send":
        return send(args[1], int(args[2]), int(args[3]), args[4:])
    if len(args) >= 3 and args[0] == "recv":
        return recv(args[1], int(args[2]), args[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
