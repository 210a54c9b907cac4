#!/usr/bin/python3
"""Fetch one URL over HTTP/1.1 with a plain socket and say how it went.

usage: fetch.py URL [--timeout S]

The client of bench/loss/run.sh and tests/integration/faults.sh: an
unmodified, dynamically linked program (the system python), so under
accel-run its socket calls go to the accelerated stack. It sends one GET,
reads the response's header and exactly Content-Length bytes of body into
one preallocated buffer (recv_into: no copy besides the socket's), and
prints one JSON object on stdout:

  ok, error        false and why when the transfer did not complete
  status, bytes    the HTTP status and the body bytes received
  connect_s        connect() alone (for an accelerated program's first
                   connection it includes starting its data path)
  transfer_s       from the request sent to the body's last byte: the
                   transfer time
  total_s          from before connect() to the body's last byte (what
                   curl calls time_total)
  goodput_mbit     body bits / transfer_s, in Mbit/s
  ttfb_s           from the request sent to the first byte of the response
  max_gap_s        the longest stall: the largest gap between two
                   successive receives of data, counting from the request
                   sent (a lost first segment stalls the transfer too)
  max_gap_at       how many bytes (header included) had arrived when it
                   began, and max_gap_t_s how long after connect() began
  gaps_over_1s     how many gaps were 1 s or longer
  recvs            recv calls that returned data
  sha256           of the body, computed after the last byte (outside the
                   timed part)

A transfer that does not complete within --timeout seconds (default 300)
ends with ok false ("timed out"), the stall it ended in counted as a gap;
an external time limit should back this up. Exit status: 0 when ok, 1 otherwise, 2 on bad arguments.
"""
import argparse
import hashlib
import json
import signal
import socket
import sys
import time
import urllib.parse

CHUNK = 1 << 20  # at most this much per recv_into


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def fetch(url, r):
    """Do the transfer, filling r; raise on a failure."""
    u = urllib.parse.urlsplit(url)
    if u.scheme != "http" or not u.hostname:
        raise ValueError("not an http:// URL: %s" % url)
    port = u.port or 80
    path = (u.path or "/") + ("?" + u.query if u.query else "")
    req = ("GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: accel-bench-fetch\r\n"
           "Connection: close\r\n\r\n" % (path, u.netloc)).encode()
    now = time.monotonic
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        t0 = now()
        s.connect((u.hostname, port))
        r["connect_s"] = now() - t0
        s.sendall(req)
        last = sent = r["_last"] = now()
        # The header: read until its end; what follows it is body.
        head = bytearray()
        first = None
        while b"\r\n\r\n" not in head:
            chunk = s.recv(65536)
            t = now()
            if not chunk:
                raise ConnectionError("closed before the end of the response header "
                                      "(%d bytes)" % len(head))
            gap(r, t - last, len(head), t - t0)
            last = r["_last"] = t
            first = first or t
            head += chunk
        r["ttfb_s"] = first - sent
        hdr, _, rest = bytes(head).partition(b"\r\n\r\n")
        lines = hdr.decode("latin-1").split("\r\n")
        r["status"] = int(lines[0].split()[1])
        fields = dict((k.strip().lower(), v.strip()) for k, _, v in
                      (ln.partition(":") for ln in lines[1:]))
        if "content-length" not in fields:
            raise ValueError("no Content-Length in the response (%s)" % lines[0])
        length = int(fields["content-length"])
        r["content_length"] = length
        body = bytearray(length)
        view = memoryview(body)
        got = min(len(rest), length)
        view[:got] = rest[:got]
        r["bytes"] = got
        hlen = len(hdr) + 4
        while got < length:
            n = s.recv_into(view[got:got + CHUNK])
            t = now()
            if n == 0:
                raise ConnectionError("closed after %d of %d body bytes" % (got, length))
            gap(r, t - last, hlen + got, t - t0)
            last = r["_last"] = t
            got += n
            r["bytes"] = got
        r["transfer_s"] = last - sent
        r["total_s"] = last - t0
    finally:
        s.close()
    r["goodput_mbit"] = r["bytes"] * 8 / r["transfer_s"] / 1e6 if r["transfer_s"] > 0 else None
    r["sha256"] = hashlib.sha256(body).hexdigest()


def gap(r, g, at, t):
    """Account one receive that came g s after the previous one (at: bytes
    before it, t: its time since connect(); None when it never came)."""
    r["recvs"] += 1
    if g > r["max_gap_s"]:
        r["max_gap_s"], r["max_gap_at"] = g, at
        r["max_gap_t_s"] = None if t is None else t - g
    if g >= 1.0:
        r["gaps_over_1s"] += 1


def main():
    ap = argparse.ArgumentParser(description="fetch one URL, report time, stalls, sha256")
    ap.add_argument("url")
    ap.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args()
    r = {"ok": False, "error": None, "url": a.url, "status": None, "content_length": None,
         "bytes": 0, "connect_s": None, "ttfb_s": None, "transfer_s": None, "total_s": None,
         "goodput_mbit": None,
         "max_gap_s": 0.0, "max_gap_at": None, "max_gap_t_s": None, "gaps_over_1s": 0,
         "recvs": 0, "sha256": None}
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, a.timeout)
    try:
        fetch(a.url, r)
        r["ok"] = r["status"] == 200
        if not r["ok"]:
            r["error"] = "HTTP status %d" % r["status"]
    except Timeout:
        r["error"] = "timed out after %g s (%d bytes of body)" % (a.timeout, r["bytes"])
        if "_last" in r:  # the stall it ended in
            gap(r, time.monotonic() - r["_last"], None, None)
            r["recvs"] -= 1
    except (OSError, ValueError, IndexError) as e:
        r["error"] = "%s: %s" % (type(e).__name__, e)
    signal.setitimer(signal.ITIMER_REAL, 0)
    r.pop("_last", None)
    print(json.dumps(r), flush=True)
    return 0 if r["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
