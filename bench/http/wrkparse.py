#!/usr/bin/python3
"""Turn one `wrk --latency` run into a JSON line for bench/http/report.py.

usage: wrkparse.py --series S --conns N --keepalive 0|1 [--wrk FILE]
                   [--server-ticks T] [--client-cpu FILE] [--failed REASON]
                   [--note TEXT] [--machine-ticks T --steal-ticks T --wall-ms MS]
                   [--log-prefix TEXT]

Prints one JSON object on stdout and a one-line summary on stderr. A point
fails (ok=false, with the reason) when --failed is given, when the wrk
output has no result, or when no request completed. errors: wrk's socket
error counters (connect, read, write, timeout) plus non-2xx/3xx responses.
other_cpu_s: busy CPU time of the whole machine during the point (from
--machine-ticks, /proc/stat) minus the server's and wrk's: other work that
competed with the benchmark, over wall_s (how long the point took);
steal_s: time the hypervisor took.
An accelerated wrk run with ACCEL_STATS=1 also leaves its data path and
frame counters in the same output; they are kept as "client_accel".
"""
import argparse
import json
import os
import re
import sys

UNITS = {"us": 1.0, "ms": 1000.0, "s": 1e6, "m": 60e6}
CLK_TCK = os.sysconf("SC_CLK_TCK")


def to_us(text):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text)
    if not m:
        raise ValueError("bad latency %r" % text)
    return float(m.group(1)) * UNITS[m.group(2)]


def accel_stats(text):
    """The ACCEL_STATS=1 dump(s) in text: data path and a few counters."""
    out = {}
    for pid, path in re.findall(r"accel\[(\d+)\] stats: data path: (.*)", text):
        out[pid] = {"data_path": path.strip()}
    for pid, name, val in re.findall(r"accel\[(\d+)\] stats: (\w+)\s+(\d+)$", text, re.M):
        if pid in out and name in ("rx_frames", "tx_frames", "tcp_connect", "tcp_accept",
                                   "tx_drop_full", "tx_drop_nombuf", "rx_drop_nobuf"):
            out[pid][name] = int(val)
    return list(out.values())


def tail(text, n=3):
    lines = [ln.strip() for ln in text.splitlines()
             if ln.strip() and "stats:" not in ln]
    return " | ".join(lines[-n:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", required=True)
    ap.add_argument("--conns", type=int, required=True)
    ap.add_argument("--keepalive", type=int, required=True)
    ap.add_argument("--wrk")
    ap.add_argument("--server-ticks", type=int)
    ap.add_argument("--client-cpu")
    ap.add_argument("--failed")
    ap.add_argument("--note")
    ap.add_argument("--machine-ticks", type=int)
    ap.add_argument("--steal-ticks", type=int)
    ap.add_argument("--wall-ms", type=int)
    ap.add_argument("--log-prefix", default="")
    a = ap.parse_args()

    p = {"series": a.series, "conns": a.conns, "keepalive": bool(a.keepalive), "ok": True,
         "reason": None, "note": a.note, "rps": None, "p50_us": None, "p99_us": None,
         "requests": 0, "errors": None, "server_cpu_s": None, "client_cpu_s": None,
         "server_cpu_s_per_100k": None, "client_cpu_s_per_100k": None, "other_cpu_s": None,
         "steal_s": None, "wall_s": None if a.wall_ms is None else a.wall_ms / 1000.0,
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
        pct = dict(re.findall(r"^\s+(\d+)%\s+(\S+)$", text, re.M))
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
        else:
            bad = ", ".join("%s %d" % kv for kv in errors.items() if kv[1])
            reasons.append("no request completed (wrk errors: %s)" % (bad or "none"))
    elif a.wrk:
        reasons.append("wrk gave no result: %s" % (tail(text) or "no output"))
    if a.client_cpu and os.path.exists(a.client_cpu):
        cpu = json.load(open(a.client_cpu))
        p["client_cpu_s"] = cpu["user_s"] + cpu["sys_s"]
        if cpu["timed_out"]:
            reasons.append("wrk did not exit in time (killed)")
        elif cpu["rc"] != 0 and p["rps"] is None:
            reasons.append("wrk exit status %d" % cpu["rc"])
        elif cpu["rc"] != 0:
            p["note"] = "; ".join(filter(None, [p["note"], "wrk exit status %d after its results"
                                                % cpu["rc"]]))
    if a.server_ticks is not None:
        p["server_cpu_s"] = a.server_ticks / CLK_TCK
    if a.machine_ticks is not None and None not in (p["server_cpu_s"], p["client_cpu_s"]):
        p["other_cpu_s"] = max(0.0, a.machine_ticks / CLK_TCK - p["server_cpu_s"]
                               - p["client_cpu_s"])
        p["steal_s"] = a.steal_ticks / CLK_TCK
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
