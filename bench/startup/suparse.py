#!/usr/bin/python3
"""Turn one run of bench/startup/run.sh (firstconn's output and stderr) into a
JSON line for bench/startup/report.py.

usage: suparse.py --series S --run N [--out FILE] [--err FILE] [--rc RC]
                  [--wall-us US] [--failed REASON] [--log-prefix TEXT]

The point: socket_us, connect_us, reply_us, main_us from firstconn's JSON
line; wall_ms, the whole process as the shell timed it; from accel's info
log (stderr), the start-up line "start-up took T ms (eal E, port P
[program, probe, pool, queues, start], stack S, other O)" or "(joined)" as
start_ms and the phases, and the data path.
A run fails (ok=false, reason) when --failed is given, when the process
exited non-zero or printed no figures, or, for an accelerated series, when
the data path did not come up (the connection went through the kernel).
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import benchlib  # noqa: E402

START = re.compile(r"start-up took ([0-9.]+) ms \((?:eal ([0-9.]+), port ([0-9.]+)"
                   r"(?: \[program ([0-9.]+), probe ([0-9.]+), pool ([0-9.]+), "
                   r"queues ([0-9.]+), start ([0-9.]+)\])?, "
                   r"stack ([0-9.]+), other (-?[0-9.]+)|(joined))\)")
PORT_PARTS = ["prog_ms", "probe_ms", "pool_ms", "queues_ms", "pstart_ms"]
DATA_PATH = re.compile(r"data path up: ([^,]+)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", required=True)
    ap.add_argument("--run", type=int, required=True)
    ap.add_argument("--out")
    ap.add_argument("--err")
    ap.add_argument("--rc", type=int, default=0)
    ap.add_argument("--wall-us", type=int)
    ap.add_argument("--failed")
    ap.add_argument("--log-prefix", default="")
    a = ap.parse_args()
    p = {"series": a.series, "run": a.run, "ok": True, "reason": None,
         "socket_us": None, "connect_us": None, "reply_us": None, "main_us": None,
         "wall_ms": a.wall_us / 1000.0 if a.wall_us else None,
         "start_ms": None, "eal_ms": None, "port_ms": None, "stack_ms": None,
         "other_ms": None, "joined": False, "data_path": None}
    p.update((k, None) for k in PORT_PARTS)
    out, err = benchlib.read(a.out), benchlib.read(a.err)
    reasons = [a.failed] if a.failed else []
    for line in out.splitlines():
        if line.startswith("{"):
            try:
                p.update((k, v) for k, v in json.loads(line).items() if k in p)
            except ValueError:
                pass
    m = START.search(err)
    if m:
        p["start_ms"] = float(m.group(1))
        if m.group(11):
            p["joined"] = True
        else:
            p["eal_ms"], p["port_ms"], p["stack_ms"], p["other_ms"] = (
                float(m.group(i)) for i in (2, 3, 9, 10))
            if m.group(4) is not None:
                for i, k in enumerate(PORT_PARTS):
                    p[k] = float(m.group(4 + i))
    m = DATA_PATH.search(err)
    if m:
        p["data_path"] = m.group(1)
    if not reasons:
        if a.rc != 0:
            reasons.append("exit status %d: %s" % (a.rc, benchlib.tail(err, 2) or "no output"))
        elif p["connect_us"] is None:
            reasons.append("no figures: %s" % (benchlib.tail(out + err, 2) or "no output"))
        elif a.series != "kernel" and p["start_ms"] is None:
            reasons.append("the data path did not come up (on the kernel): %s" %
                           benchlib.tail(err, 2))
    if reasons:
        p["ok"] = False
        p["reason"] = "; ".join(reasons)
    print(json.dumps(p))
    what = "%s%s run %d" % (a.log_prefix, a.series, a.run)
    if p["ok"]:
        print("%s: connected in %.2f ms%s" % (
            what, p["connect_us"] / 1000.0,
            "" if p["start_ms"] is None else " (start-up %.1f ms)" % p["start_ms"]),
            file=sys.stderr)
    else:
        print("%s: FAILED: %s" % (what, p["reason"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
