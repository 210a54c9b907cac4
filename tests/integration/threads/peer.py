#!/usr/bin/python3
"""Kernel-side peer of the thread tests (tests/integration/threads.sh).

server IP PORT
    Accept connections (one thread each). The first line of a connection
    says what it is:
      "echo\\n"            echo everything until EOF, then close.
      "hold NAME\\n"       keep the connection as NAME; read and discard
                           until it ends (EOF or RST), remembered.
      "send NAME DATA\\n"  (control) write DATA to NAME; answers "sent\\n".
      "end NAME\\n"        (control) wait until NAME ended; answers
                           "eof\\n", "rst\\n" or "timeout\\n".
      "udp IP PORT DATA\\n"  (control) send DATA in one datagram to
                           IP:PORT; answers "sent\\n".
      "connect NAME IP PORT\\n"  (control) connect to IP:PORT and hold the
                           connection as NAME; answers "connected\\n" or
                           "error ERRNO-NAME\\n".
Every wait is bounded (TIMEOUT s) so a stuck subject fails, not hangs.
"""
import socket
import sys
import threading

TIMEOUT = 20
HELD = {}
ENDED = {}
COND = threading.Condition()


def recv_line(s):
    buf = b""
    while not buf.endswith(b"\n"):
        b = s.recv(1)
        if not b:
            break
        buf += b
    return buf.decode().strip()


def hold(name, c):
    with COND:
        HELD[name] = c
        COND.notify_all()
    result = "eof"
    c.settimeout(None)
    try:
        while c.recv(65536):
            pass
    except ConnectionResetError:
        result = "rst"
    except OSError:
        result = "error"
    with COND:
        ENDED[name] = result
        COND.notify_all()


def control(c, words):
    if words[0] == "send":
        with COND:
            COND.wait_for(lambda: words[1] in HELD, TIMEOUT)
            h = HELD.get(words[1])
        try:
            h.sendall(words[2].encode())
            c.sendall(b"sent\n")
        except OSError as e:
            c.sendall(("error %s\n" % e.__class__.__name__).encode())
    elif words[0] == "end":
        with COND:
            COND.wait_for(lambda: words[1] in ENDED, TIMEOUT)
            r = ENDED.get(words[1], "timeout")
        c.sendall((r + "\n").encode())
    elif words[0] == "udp":
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.sendto(words[3].encode(), (words[1], int(words[2])))
        u.close()
        c.sendall(b"sent\n")
    elif words[0] == "connect":
        try:
            h = socket.create_connection((words[2], int(words[3])), timeout=TIMEOUT)
        except OSError as e:
            c.sendall(("error %s\n" % e.__class__.__name__).encode())
            return
        c.sendall(b"connected\n")
        hold(words[1], h)


def serve(c):
    c.settimeout(TIMEOUT)
    try:
        words = recv_line(c).split()
        if not words:
            return
        if words[0] == "echo":
            c.settimeout(None)
            while True:
                b = c.recv(65536)
                if not b:
                    break
                c.sendall(b)
        elif words[0] == "hold":
            hold(words[1], c)
            return
        else:
            control(c, words)
    except OSError:
        pass
    finally:
        c.close()


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "server":
        print(__doc__)
        sys.exit(2)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((sys.argv[2], int(sys.argv[3])))
    ls.listen(512)
    print("listening", flush=True)
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


main()
