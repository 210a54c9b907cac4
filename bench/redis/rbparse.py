#!/usr/bin/python3
"""One point of bench/redis/run.sh as a JSON line, from redis-benchmark --csv.

usage: rbparse.py --series S --test T --conns N --pipeline P
                  [--requests N --csv FILE --client-cpu FILE
                   --server-ticks N --clk-tck N] [--failed REASON]
                  [--log-prefix TEXT]
Prints {"series", "test", "conns", "pipeline", "ok", "reason", "requests",
"rps", "p50_us", "p99_us", "server_cpu_s_per_100k", "client_cpu_s_per_100k"}.
A point without its CSV row (the client failed or timed out) is not ok,
with the client's last output as the reason.
"""
import argparse
import csv
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import read, tail  # noqa: E402


def csv_row(text, test):
    """The row of TEST in redis-benchmark's --csv output, or None."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    for row in csv.DictReader(lines):
        if row.get("test", "").upper() == test.upper():
            return row
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--conns", type=int, required=True)
    ap.add_argument("--pipeline", type=int, required=True)
    ap.add_argument("--requests", type=int)
    ap.add_argument("--csv")
    ap.add_argument("--client-cpu")
    ap.add_argument("--server-ticks", type=int)
    ap.add_argument("--clk-tck", type=int, default=100)
    ap.add_argument("--failed")
    ap.add_argument("--log-prefix", default="")
    a = ap.parse_args()
    p = {"series": a.series, "test": a.test, "conns": a.conns, "pipeline": a.pipeline,
         "ok": False, "reason": a.failed, "requests": a.requests, "rps": None,
         "p50_us": None, "p99_us": None, "server_cpu_s_per_100k": None,
         "client_cpu_s_per_100k": None}
    if a.failed is None:
        text = read(a.csv) if a.csv else ""
        row = csv_row(text, a.test)
        cpu = json.loads(read(a.client_cpu) or "{}") if a.client_cpu else {}
        if row is None:
            why = "timed out" if cpu.get("timed_out") else "exit status %s" % cpu.get("rc")
            p["reason"] = "redis-benchmark gave no result (%s): %s" % (why, tail(text, 2))
        else:
            p["ok"] = True
            p["rps"] = float(row["rps"])
            p["p50_us"] = float(row["p50_latency_ms"]) * 1000
            p["p99_us"] = float(row["p99_latency_ms"]) * 1000
            if a.requests and a.server_ticks is not None:
                p["server_cpu_s_per_100k"] = (a.server_ticks / a.clk_tck) * 1e5 / a.requests
            if a.requests and "user_s" in cpu:
                p["client_cpu_s_per_100k"] = (cpu["user_s"] + cpu["sys_s"]) * 1e5 / a.requests
    print(json.dumps(p))
    what = "%s %s c=%d P=%d" % (a.series, a.test, a.conns, a.pipeline)
    if p["ok"]:
        print("%s%s: %.0f req/s, p50 %.0f us, p99 %.0f us" %
              (a.log_prefix, what, p["rps"], p["p50_us"], p["p99_us"]), file=sys.stderr)
    else:
        print("%s%s: FAILED: %s" % (a.log_prefix, what, p["reason"]), file=sys.stderr)


if __name__ == "__main__":
    main()
