#!/usr/bin/python3
"""Turn one `wrk --latency` run into a JSON line for bench/http/report.py.

usage: wrkparse.py --series S --conns N --keepalive 0|1 [--round N] [--wrk FILE]
                   [--server-ticks T] [--client-cpu FILE] [--failed REASON]
                   [--note TEXT] [--machine-ticks T --steal-ticks T --wall-ms MS]
                   [--c2c-ns BEFORE,AFTER] [--log-prefix TEXT]

Prints one JSON object on stdout and a one-line summary on stderr. A point
fails (ok=false, with the reason) when --failed is given, when the wrk
output has no result, or when no request completed. errors: wrk's socket
error counters (connect, read, write, timeout) plus non-2xx/3xx responses.
other_cpu_s: busy CPU time of the whole machine during the point (from
--machine-ticks, /proc/stat) minus the server's and wrk's: other work that
competed with the benchmark, over wall_s (how long the point took);
steal_s: time the hypervisor took.
c2c_ns: [before, after], bench/lib/c2c.c's ns per cache-line round trip
between wrk's and nginx's CPU right before and right after the wrk run (None
where not measured; null without --c2c-ns).
An accelerated wrk run with ACCEL_STATS=2 also leaves its data path and
frame counters in the same output; they are kept as "client_accel".
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import (  # noqa: E402
    add_cpu_args, accel_stats, c2c_pair, client_cpu, cpu_accounting, tail, wall_s)

UNITS = {"us": 1.0, "ms": 1000.0, "s": 1e6, "m": 60e6}


def to_us(text):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text)
    if not m:
        raise ValueError("bad latency %r" % text)
    return float(m.group(1)) * UNITS[m.group(2)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", required=True)
    ap.add_argument("--conns", type=int, required=True)
    ap.add_argument("--keepalive", type=int, required=True)
    ap.add_argument("--wrk")
    ap.add_argument("--round", type=int, default=1)
    add_cpu_args(ap)
    a = ap.parse_args()

    p = {"series": a.series, "conns": a.conns, "keepalive": bool(a.keepalive),
         "round": a.round, "ok": True,
         "reason": None, "note": a.note, "rps": None, "p50_us": None, "p99_us": None, "max_us": None,
         "requests": 0, "errors": None, "server_cpu_s": None, "client_cpu_s": None,
         "server_cpu_s_per_100k": None, "client_cpu_s_per_100k": None, "other_cpu_s": None,
         "steal_s": None, "wall_s": wall_s(a),
         "c2c_ns": c2c_pair(a),
         "client_accel": []}
    text = ""
    if a.wrk and os.path.exists(a.wrk):
        text = open(a.wrk, errors="replace").read()
        p["client_accel"] = accel_stats(text)
    reasons = [a.failed] if a.failed else []
    m = re.search(r"Requests/sec:\s+([0-9.]+)", text)
    if m:
        p["rps"] = float(m.group(1))
        p["requests"] = int(re.search(r"(\d+) requests in", text).group(1))
        pct = dict(re.findall(r"^\s+(\d+)%\s+(\S+)\s*$", text, re.M))
        errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 0}
        m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                      text)
        if m:
            for k, v in zip(("connect", "read", "write", "timeout"), m.groups()):
                errors[k] = int(v)
        m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
        if m:
            errors["status"] = int(m.group(1))
        p["errors"] = errors
        if p["requests"] > 0:
            p["p50_us"] = to_us(pct["50"])
            p["p99_us"] = to_us(pct["99"])
            m = re.search(r"^\s+Latency\s+\S+\s+\S+\s+(\S+)", text, re.M)
            if m:
                p["max_us"] = to_us(m.group(1))
        else:
            bad = ", ".join("%s %d" % kv for kv in errors.items() if kv[1])
            reasons.append("no request completed (wrk errors: %s)" % (bad or "none"))
    elif a.wrk:
        reasons.append("wrk gave no result: %s" % (tail(text, 3) or "no output"))
    cpu = client_cpu(p, a.client_cpu)
    if cpu:
        if cpu["timed_out"]:
            reasons.append("wrk did not exit in time (killed)")
        elif cpu["rc"] != 0 and p["rps"] is None:
            reasons.append("wrk exit status %d" % cpu["rc"])
        elif cpu["rc"] != 0:
            p["note"] = "; ".join(filter(None, [p["note"], "wrk exit status %d after its results"
                                                % cpu["rc"]]))
    cpu_accounting(p, a)
    if p["requests"]:
        for side in ("server", "client"):
            if p[side + "_cpu_s"] is not None:
                p[side + "_cpu_s_per_100k"] = p[side + "_cpu_s"] / p["requests"] * 1e5
    if reasons:
        p["ok"] = False
        p["reason"] = "; ".join(reasons + ([p["note"]] if p["note"] else []))
    print(json.dumps(p))
    what = "%s%s c=%d %s" % (a.log_prefix, a.series, a.conns,
                             "keep-alive" if a.keepalive else "close")
    if p["ok"]:
        print("%s: %.0f req/s, p50 %.0f us, p99 %.0f us, %d errors" % (
            what, p["rps"], p["p50_us"], p["p99_us"], sum(p["errors"].values())), file=sys.stderr)
    else:
        print("%s: FAILED: %s" % (what, p["reason"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
