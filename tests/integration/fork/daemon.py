#!/usr/bin/python3
"""A classic forking daemon, and its client (tests/integration/fork_daemon.sh).

serve IP PORT EXIT
    Listen on IP:PORT (under accel-run: the process that starts the data
    path), then daemonize as nginx, sshd or any SysV daemon does: fork and
    let the parent leave at once, before the child has had a chance to run
    (EXIT is how: "_exit" for os._exit, "exit" for sys.exit, which runs the
    atexit handlers and library destructors). The daemon calls setsid,
    forks two workers that accept from the inherited listener through epoll
    (non-blocking, as nginx's workers do), closes its own copy, waits for
    them, prints "workers done: <status> <status>", stays 4 s more (alive,
    no listener, never polling the port itself) and prints "daemon done".
    A worker answers each connection's line "hello N" with "worker PID
    hello N"; a line "stop" makes it answer "stopping" and exit 0.
client IP PORT N
    N connections, each "hello i", checking every answer; then "stop"
    twice, each answered "stopping". Prints "clients ok: N answers from K
    workers, 2 stopped" or "FAIL: ..." (exit 1).
refused IP PORT
    A connection must be refused: prints "refused" or "FAIL: ...".
"""
import os
import select
import socket
import sys
import time


def worker(ls):
    ep = select.epoll()
    ep.register(ls.fileno(), select.EPOLLIN)
    ls.setblocking(False)
    while True:
        ep.poll(1.0)
        try:
            c, _ = ls.accept()
        except BlockingIOError:
            continue
        c.setblocking(True)
        c.settimeout(10)
        line = b""
        while not line.endswith(b"\n"):
            got = c.recv(100)
            if not got:
                break
            line += got
        line = line.strip()
        if line == b"stop":
            c.sendall(b"stopping\n")
            c.close()
            os._exit(0)
        c.sendall(b"worker %d %s\n" % (os.getpid(), line))
        c.close()


def serve(ip, port, how):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((ip, int(port)))
    ls.listen(128)
    sys.stdout.flush()
    if os.fork() > 0:
        if how == "exit":
            sys.exit(0)
        os._exit(0)
    os.setsid()
    pids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            worker(ls)
        pids.append(pid)
    ls.close()
    sts = []
    for pid in pids:
        _, st = os.waitpid(pid, 0)
        sts.append(str(st))
    print("workers done: %s" % " ".join(sts), flush=True)
    # Alive, holding no listener, never polling the port itself.
    time.sleep(4)
    print("daemon done", flush=True)


def ask(ip, port, line):
    s = socket.create_connection((ip, int(port)), timeout=10)
    s.sendall(line + b"\n")
    got = b""
    while True:
        b = s.recv(200)
        if not b:
            break
        got += b
    s.close()
    return got.strip()


def client(ip, port, n):
    workers = set()
    for i in range(int(n)):
        want = b"hello %d" % i
        got = ask(ip, port, want)
        parts = got.split(b" ", 2)
        if len(parts) != 3 or parts[0] != b"worker" or parts[2] != want:
            print("FAIL: connection %d: answer %r" % (i, got))
            sys.exit(1)
        workers.add(parts[1])
    # A worker that stops accepts nothing more: each stop reaches the
    # other one, even when it lands on the first one's queue (it moves).
    for k in range(2):
        try:
            got = ask(ip, port, b"stop")
        except OSError as e:
            print("FAIL: stop %d: %s" % (k + 1, e))
            sys.exit(1)
        if got != b"stopping":
            print("FAIL: stop %d: answer %r" % (k + 1, got))
            sys.exit(1)
    print("clients ok: %s answers from %d workers, 2 stopped" % (n, len(workers)))


def refused(ip, port):
    try:
        ask(ip, port, b"hello")
    except ConnectionRefusedError:
        print("refused")
        return
    except OSError as e:
        print("FAIL: %s" % e)
        sys.exit(1)
    print("FAIL: accepted")
    sys.exit(1)


if __name__ == "__main__":
    {"serve": serve, "client": client, "refused": refused}[sys.argv[1]](*sys.argv[2:])
