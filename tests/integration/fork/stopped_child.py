#!/usr/bin/env python3
"""Server side of fork_stopped.sh, run under accel-run.

stopped_child.py IP UDP_PORT TCP_PORT
    Binds a UDP socket and a TCP listener, then forks. The child keeps the
    UDP socket and receives on it forever (it becomes the port's UDP
    server); the parent keeps the listener and echoes each TCP connection
    to EOF, one at a time. Prints "child PID" and "parent PID". SIGTERM
    ends either with exit status 0 (so ACCEL_STATS=2 dumps the counters).
"""
import os
import signal
import socket
import sys


def say(line):
    """One write(2) per line: parent and child share stdout's file, and
    lines from print() have reached it split, the other process's line in
    between ("parent 2073child 2082\\n\\n", CI 2026-11-27)."""
    os.write(1, (line + "\n").encode())


def main():
    ip, uport, tport = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind((ip, uport))
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind((ip, tport))
    lst.listen(8)
    pid = os.fork()
    if pid == 0:
        lst.close()
        say("child %d" % os.getpid())
        while True:
            u.recv(2048)
    u.close()
    say("parent %d" % os.getpid())
    while True:
        c, _ = lst.accept()
        while True:
            d = c.recv(65536)
            if not d:
                break
            c.sendall(d)
        c.close()


if __name__ == "__main__":
    main()
