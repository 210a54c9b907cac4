#!/usr/bin/python3
"""Upstream for the nginx integration tests: a small HTTP/1.1 server.

usage: backend.py IP PORT LOGFILE    serve
       backend.py --body N          print the body GET /up/N returns

  GET  /up/<n>[?...]  200, a body of n bytes derived from n (see body_for)
  POST /echo[?...]    200, the request body echoed back
  anything else       404

Every response carries X-Backend-Pid; every request is appended to LOGFILE
as one line "METHOD PATH BODY_LEN BODY_SHA256 X-REQ-ID CLIENT_PORT" (PATH
with its query, X-Req-Id header or "-"), so a test can prove the backend
saw a given request and count the connections nginx opened to it.
Keep-alive (HTTP/1.1) is supported, so nginx's upstream keepalive can be
exercised. Runs on the kernel stack in the peer namespace.
"""
import hashlib
import http.server
import os
import sys
import threading

LOCK = threading.Lock()


def body_for(n):
    """n bytes: the decimal n followed by a repeating pattern."""
    head = ("%d:" % n).encode()
    pat = b"0123456789abcdefghijklmnopqrstuvwxyz\n"
    return (head + pat * (n // len(pat) + 1))[:n]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body are separate writes: without TCP_NODELAY every
    # keep-alive response waits for nginx's delayed ACK (~40 ms).
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):  # no stderr line per request
        pass

    def note(self, body):
        line = "%s %s %d %s %s %d\n" % (
            self.command,
            self.path,
            len(body),
            hashlib.sha256(body).hexdigest(),
            self.headers.get("X-Req-Id", "-"),
            self.client_address[1],
        )
        with LOCK:
            LOG.write(line)
            LOG.flush()

    def reply(self, code, body):
        self.send_response(code)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Backend-Pid", str(os.getpid()))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        n = int(self.headers.get("Content-Length", "0"))
        chunks = []
        while n > 0:
            c = self.rfile.read(min(n, 1 << 20))
            if not c:
                break
            chunks.append(c)
            n -= len(c)
        return b"".join(chunks)

    def do_GET(self):
        self.note(b"")
        path = self.path.split("?")[0]
        if path.startswith("/up/") and path[4:].isdigit():
            self.reply(200, body_for(int(path[4:])))
        else:
            self.reply(404, b"not found\n")

    def do_POST(self):
        body = self.read_body()
        self.note(body)
        if self.path.split("?")[0] == "/echo":
            self.reply(200, body)
        else:
            self.reply(404, b"not found\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--body":
        sys.stdout.buffer.write(body_for(int(sys.argv[2])))
        sys.exit(0)
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    LOG = open(sys.argv[3], "a")
    Server((sys.argv[1], int(sys.argv[2])), Handler).serve_forever()
