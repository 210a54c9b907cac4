#!/usr/bin/python3
"""A server that spawns a child which outlives it (tests/integration/fork_exec_join.sh).

parent LISTEN_IP PORT PEER_IP PEER_PORT
    Listen on LISTEN_IP:PORT (under accel-run: the process that drives the
    interface), start "child" with subprocess (posix_spawn, no fork
    handler), print the child's first line and exit without waiting.
child PEER_IP PEER_PORT
    Connect to the echo peer, echo a line, print "child echoed", then sleep
    4 s (outliving the parent) and print "child done" on stderr.
"""
import socket
import subprocess
import sys
import time


def parent(ip, port, peer_ip, peer_port):
    ls = socket.socket()
    ls.bind((ip, int(port)))
    ls.listen()
    c = subprocess.Popen([sys.executable, __file__, "child", peer_ip, peer_port],
                         stdout=subprocess.PIPE)
    print(c.stdout.readline().decode().strip(), flush=True)


def child(peer_ip, peer_port):
    s = socket.create_connection((peer_ip, int(peer_port)), timeout=10)
    s.sendall(b"orphan\n")
    got = b""
    while len(got) < 7:
        b = s.recv(7 - len(got))
        if not b:
            break
        got += b
    print("child echoed" if got == b"orphan\n" else "child got %r" % got, flush=True)
    time.sleep(4)
    print("child done", file=sys.stderr, flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "parent":
        parent(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "child":
        child(*sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
