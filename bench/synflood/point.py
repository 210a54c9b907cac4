#!/usr/bin/python3
"""One point of bench/synflood/run.sh as a JSON line for report.py.

usage: point.py --wrk-point FILE --point NAME --rate none|max|PPS
                [--flood FILE] --rss KB_BEFORE KB_AFTER --counters BEFORE AFTER

--wrk-point: bench/http/wrkparse.py's JSON line for the point's wrk run;
--flood: synflood's output (one JSON object), for a point with a flood;
--counters: the server's counters before and after, each either
`accel-stat --json PID` or `nstat -asz` (the kernel's) output. Prints the
wrk point with the flood's figures (flood_pps: frames/s actually sent),
rss_kb [before, after] and the counters' increase under common names
(syncookies_sent, syncookies_recv, syncookies_failed, listen_overflow; the
kernel's also listen_drops, reqq_full_cookies, reqq_full_drop; accel's also
syncookies_stack and syncookies_xdp, the two parts of syncookies_sent, and
syncookies_xdp_asks, syncookies_xdp_lost). A flood
point without the sender's result fails; one where wrk ran its time and
exited without completing a request is a measured 0 req/s, not a failure
(the flood denied service).
"""
import argparse
import json
import re
import sys

ACCEL = {"tcp_syncookies_sent": "syncookies_stack", "tcp_syncookies_recv": "syncookies_recv",
         "tcp_syncookies_failed": "syncookies_failed",
         "tcp_listen_overflow": "listen_overflow",
         "tcp_syncookies_xdp": "syncookies_xdp", "tcp_syncookies_xdp_asks": "syncookies_xdp_asks",
         "tcp_syncookies_xdp_lost": "syncookies_xdp_lost"}
KERNEL = {"TcpExtSyncookiesSent": "syncookies_sent", "TcpExtSyncookiesRecv": "syncookies_recv",
          "TcpExtSyncookiesFailed": "syncookies_failed",
          "TcpExtListenOverflows": "listen_overflow", "TcpExtListenDrops": "listen_drops",
          "TcpExtTCPReqQFullDoCookies": "reqq_full_cookies",
          "TcpExtTCPReqQFullDrop": "reqq_full_drop"}


def counters(path):
    """The counters in an accel-stat --json or nstat file, by common name; {} when none."""
    text = open(path, errors="replace").read()
    try:
        procs = json.loads(text)["processes"]
        c = procs[0]["counters"] if procs else {}
        out = {ACCEL[k]: int(v) for k, v in c.items() if k in ACCEL}
        if out:  # sent by the stack and by its XDP program (sampled each second)
            out["syncookies_sent"] = out.get("syncookies_stack", 0) + out.get("syncookies_xdp", 0)
        return out
    except (ValueError, KeyError, IndexError, TypeError):
        pass
    out = {}
    for name, val in re.findall(r"^(\w+)\s+(\d+)", text, re.M):
        if name in KERNEL:
            out[KERNEL[name]] = int(val)
    if out:  # nstat omits what the kernel does not have; the rest is 0
        for name in KERNEL.values():
            out.setdefault(name, 0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wrk-point", required=True)
    ap.add_argument("--point", required=True)
    ap.add_argument("--rate", required=True)
    ap.add_argument("--flood")
    ap.add_argument("--rss", nargs=2, required=True)
    ap.add_argument("--counters", nargs=2, required=True)
    a = ap.parse_args()
    with open(a.wrk_point) as f:
        p = json.loads(f.readline())
    p["point"] = a.point
    p["rate_target"] = a.rate
    p["rss_kb"] = [int(v) if v.isdigit() else None for v in a.rss]
    c0, c1 = counters(a.counters[0]), counters(a.counters[1])
    p["counters"] = {k: c1[k] - c0[k] for k in c1 if k in c0}
    p["flood"] = None
    p["flood_pps"] = 0.0 if a.rate == "none" else None
    if (a.rate != "none" and p["errors"] is not None and p["requests"] == 0
            and p["reason"].startswith("no request completed") and ";" not in p["reason"]):
        # wrk ran its time and exited: nobody got through the flood, a
        # measured 0 (denial of service), not a broken point
        p["ok"], p["rps"], p["reason"] = True, 0.0, None
        p["note"] = "no request completed during the flood"
    reasons = [p["reason"]] if p["reason"] else []
    if not p["counters"]:
        reasons.append("no server counters: %s" % open(a.counters[1]).read()[-200:])
    if a.flood:
        text = open(a.flood, errors="replace").read()
        m = re.search(r"^\{.*\}$", text, re.M)
        if m:
            p["flood"] = json.loads(m.group(0))
            p["flood_pps"] = p["flood"]["pps"]
        else:
            reasons.append("the flood sender gave no result: %s" % text[-200:])
    if reasons:
        p["ok"] = False
        p["reason"] = "; ".join(reasons)
    print(json.dumps(p))
    print("%s flood %s frames/s sent, cookies %s, rss %s kB" % (
        a.point, p["flood_pps"], p["counters"].get("syncookies_sent"), p["rss_kb"]),
        file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
