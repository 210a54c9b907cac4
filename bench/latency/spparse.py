#!/usr/bin/python3
"""Turn one sockperf or pingpong point (client and server output) into a
JSON line for bench/latency/report.py.

usage: spparse.py --series S --profile P --case CASE [--round N]
                  [--client FILE] [--server FILE] [--client-cpu FILE]
                  [--server-ticks T] [--machine-ticks T --steal-ticks T
                  --wall-ms MS] [--c2c-ns BEFORE,AFTER] [--failed REASON]
                  [--note TEXT] [--log-prefix TEXT]

CASE is MODE-PROTO-SIZE: pp (sockperf ping-pong), tp (sockperf
throughput), p4 or p6 (bench/latency/pingpong.c's ping-pong over IPv4 or
IPv6), tcp or udp, the message size in bytes. Prints one JSON object on
stdout and a one-line summary on stderr. A p4/p6 point is a ping-pong point
("mode": "pp", "tool": "pingpong", "family": 4 or 6) with the same fields
as sockperf's, from the JSON line pingpong prints; pingpong's warm-up is
not recorded either.

ping-pong: sockperf's latency is half the round trip (its default without
--full-rtt): avg, min, max and the p50/p90/p99/p99.9/p99.99 of the valid
period (after warm-up), in microseconds.
throughput: msg_rate is what the client sent ("Summary: Message Rate"),
rx_msg_rate what the server received and handled (its "Total N messages
received" at SIGINT) over the client's sending time: UDP that the receiver
cannot keep up with is dropped, so rx_msg_rate is the rate that counts.
A point fails (ok=false, reason) when --failed is given, when sockperf gave
no result, or (tp) when the server received nothing. The reason carries the
tail of the failing side's output.
other_cpu_s: busy CPU time of the whole machine during the point (without
softirq) minus the server's and the client's (other work that competed with
the benchmark).
c2c_ns: [before, after], bench/lib/c2c.c's ns per cache-line round trip
between the client's and the server's CPU right before and right after the
point (None where not measured; null without --c2c-ns). round: which of
run.sh's --rounds the point belongs to (1 by default).
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import benchlib  # noqa: E402
from benchlib import (  # noqa: E402
    add_cpu_args, accel_stats, c2c_pair, client_cpu, cpu_accounting, wall_s)

ANSI = re.compile(r"\x1b\[[0-9;]*m")
PCTS = {"50.000": "p50_us", "90.000": "p90_us", "99.000": "p99_us", "99.900": "p999_us",
        "99.990": "p9999_us"}


def read(path):
    """The text of a sockperf output file without its colour codes ("" without one)."""
    return ANSI.sub("", benchlib.read(path))


def tail(text):
    """The last lines of sockperf's output, without ACCEL_STATS and warm-up lines."""
    return benchlib.tail(text, 4, ("stats:", "Warmup"))[-500:]


def parse_case(case):
    """CASE as (mode, tool, family, proto, size): p4/p6 are pingpong's
    ping-pong ("pp") over IPv4/IPv6, pp/tp sockperf's over IPv4."""
    m = re.fullmatch(r"(pp|tp|p4|p6)-(tcp|udp)-(\d+)", case)
    if not m:
        raise SystemExit("spparse.py: bad case %r" % case)
    kind = m.group(1)
    if kind in ("p4", "p6"):
        return "pp", "pingpong", int(kind[1]), m.group(2), int(m.group(3))
    return kind, "sockperf", 4, m.group(2), int(m.group(3))


def pingpong_result(text):
    """The JSON object pingpong's client printed in text, or None."""
    for line in reversed(text.splitlines()):
        if line.startswith('{"tool": "pingpong"'):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def pingpong_point(p, cli, reasons):
    """Fill ping-pong point p from pingpong's client output cli."""
    r = pingpong_result(cli)
    if r is None:
        if not reasons:
            reasons.append("pingpong gave no result: %s" % (tail(cli) or "no output"))
        return
    for k in ("avg_us", "min_us", "max_us", "observations", "dropped") + tuple(PCTS.values()):
        p[k] = r[k]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", required=True)
    ap.add_argument("--profile", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--client")
    ap.add_argument("--server")
    ap.add_argument("--round", type=int, default=1)
    add_cpu_args(ap)
    a = ap.parse_args()
    mode, tool, family, proto, size = parse_case(a.case)

    p = {"series": a.series, "profile": a.profile, "case": a.case, "round": a.round,
         "mode": mode, "tool": tool, "family": family,
         "proto": proto, "size": size, "ok": True, "reason": None, "note": a.note,
         "avg_us": None, "min_us": None, "max_us": None, "observations": None,
         "dropped": None, "msg_rate": None, "rx_msg_rate": None, "sent": None,
         "received": None, "send_s": None, "client_cpu_s": None, "server_cpu_s": None,
         "other_cpu_s": None, "steal_s": None,
         "wall_s": wall_s(a),
         "c2c_ns": c2c_pair(a),
         "client_accel": [], "server_accel": []}
    for k in PCTS.values():
        p[k] = None
    cli, srv = read(a.client), read(a.server)
    p["client_accel"] = accel_stats(cli)
    p["server_accel"] = accel_stats(srv)
    reasons = [a.failed] if a.failed else []
    cpu = client_cpu(p, a.client_cpu)
    if cpu:
        if cpu["timed_out"]:
            reasons.append("the %s client did not exit in time (killed): %s" % (
                tool, tail(cli) or "no output"))

    if tool == "pingpong" and a.client:
        pingpong_point(p, cli, reasons)
    elif mode == "pp" and a.client:
        m = re.search(r"avg-latency=([0-9.]+)", cli)
        if m:
            p["avg_us"] = float(m.group(1))
            for q, v in re.findall(r"percentile (\d+\.\d+) =\s*([0-9.]+)", cli):
                if q in PCTS:
                    p[PCTS[q]] = float(v)
            m = re.search(r"<MAX> observation =\s*([0-9.]+)", cli)
            p["max_us"] = float(m.group(1)) if m else None
            m = re.search(r"<MIN> observation =\s*([0-9.]+)", cli)
            p["min_us"] = float(m.group(1)) if m else None
            m = re.search(r"Total (\d+) observations", cli)
            p["observations"] = int(m.group(1)) if m else None
            m = re.search(r"# dropped messages = (\d+)", cli)
            p["dropped"] = int(m.group(1)) if m else None
            if p["p50_us"] is None:
                reasons.append("sockperf printed no percentiles: %s" % tail(cli))
        elif not reasons:
            reasons.append("sockperf ping-pong gave no result: %s" % (tail(cli) or "no output"))
    elif mode == "tp" and a.client:
        m = re.search(r"Total of (\d+) messages sent in ([0-9.]+) sec", cli)
        r = re.search(r"Message Rate is (\d+)", cli)
        if m and r:
            p["sent"], p["send_s"] = int(m.group(1)), float(m.group(2))
            p["msg_rate"] = float(r.group(1))
            m = re.search(r"Total (\d+) messages received", srv)
            if m:
                p["received"] = int(m.group(1))
            elif "No messages were received" in srv:
                p["received"] = 0
            if p["received"] and p["send_s"]:
                p["rx_msg_rate"] = p["received"] / p["send_s"]
            elif not reasons:
                reasons.append("the server received nothing: %s" % (tail(srv) or "no output"))
        elif not reasons:
            reasons.append("sockperf throughput gave no result: %s" % (tail(cli) or "no output"))

    if cpu and not cpu["timed_out"] and cpu["rc"] != 0 and not reasons:
        p["note"] = "; ".join(filter(None, [p["note"], "client exit status %d" % cpu["rc"]]))
    cpu_accounting(p, a)
    if reasons:
        p["ok"] = False
        p["reason"] = "; ".join(reasons)
    print(json.dumps(p))
    what = "%s%s/%s %s" % (a.log_prefix, a.series, a.profile, a.case)
    if not p["ok"]:
        print("%s: FAILED: %s" % (what, p["reason"]), file=sys.stderr)
    elif mode == "pp":
        print("%s: p50 %.2f us, p99 %.2f us, p99.9 %s us" % (
            what, p["p50_us"], p["p99_us"] or 0,
            "-" if p["p999_us"] is None else "%.2f" % p["p999_us"]), file=sys.stderr)
    else:
        print("%s: sent %.0f msg/s, received %s msg/s" % (
            what, p["msg_rate"], "-" if p["rx_msg_rate"] is None else "%.0f" % p["rx_msg_rate"]),
            file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
