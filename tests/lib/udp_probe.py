#!/usr/bin/python3
"""UDP echo probe for the integration tests.

client HOST PORT [--wait S] SIZE...: from one socket, send a random payload
of each size to HOST:PORT and wait (2 s, 3 tries) for the same bytes back.
--wait S first retries a 1-byte probe for up to S seconds (the server's
port may still be coming up; one socket keeps one source port, which a
connected server such as socat UDP-LISTEN needs). Prints
"size N ok" or "size N FAIL <why>" per size; the exit status is the number
of failures. Under accel-run this exercises sendto/recvfrom/poll on an
accelerated UDP socket.
"""
import os
import socket
import sys
import time


def probe(sock, addr, size):
    payload = os.urandom(size)
    why = "no reply"
    for _ in range(3):
        sock.sendto(payload, addr)
        try:
            while True:
                data, src = sock.recvfrom(65536)
                if src != addr:
                    why = "reply from %s" % (src,)
                    continue
                if data == payload:
                    return None
                why = "reply differs (%d bytes back)" % len(data)
        except socket.timeout:
            continue
    return why


def main():
    if len(sys.argv) < 5 or sys.argv[1] != "client":
        print(__doc__, file=sys.stderr)
        return 2
    addr = (sys.argv[2], int(sys.argv[3]))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(2.0)
    args = sys.argv[4:]
    if args[:1] == ["--wait"]:
        deadline = time.monotonic() + float(args[1])
        args = args[2:]
        while probe(sock, addr, 1) is not None:
            if time.monotonic() > deadline:
                print("server never answered", flush=True)
                return 100
    failures = 0
    for size in (int(s) for s in args):
        why = probe(sock, addr, size)
        if why is None:
            print("size %d ok" % size, flush=True)
        else:
            print("size %d FAIL %s" % (size, why), flush=True)
            failures += 1
    sock.close()
    return failures


if __name__ == "__main__":
    sys.exit(main())
