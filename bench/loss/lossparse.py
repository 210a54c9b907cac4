#!/usr/bin/python3
"""Turn one transfer of bench/loss/run.sh into a JSON line for report.py.

usage: lossparse.py --direction sender|receiver --series kernel|accel
                    --point SPEC --round N --size BYTES --want-sha HEX
                    [--fetch FILE] [--server-log FILE]
                    [--nstat-k BEFORE,AFTER] [--nstat-a BEFORE,AFTER]
                    [--impair BEFORE,AFTER] [--impaird-ticks T]
                    [--client-cpu FILE]
                    [--server-ticks T] [--machine-ticks T --steal-ticks T
                    --wall-ms MS] [--failed REASON] [--note TEXT]
                    [--log-prefix TEXT]

FILE of --fetch is the client's output: fetch.py's JSON line, and for an
accelerated client its ACCEL_STATS=2 dump. --server-log holds an
accelerated nginx's dump (master and worker: summed). --nstat-* are two
`nstat -asz --json` snapshots of netns accel-k and accel-a taken right
before and right after the transfer, --impair two `accel-lab impair --show`
ones: their differences are the transfer's.

The point fails (ok false, with the reason) when --failed is given, when
the client did not complete, or when the data that arrived is not the
file (size or sha256). The sender's and the receiver's counters are taken
from where each ran: an accelerated end's ACCEL_STATS, a kernel end's nstat
in its namespace (sender direction: the server in accel-a; receiver
direction: the server in accel-k), under common names (SENDER_KEYS,
RECEIVER_KEYS).
Prints one JSON object on stdout and a one-line summary on stderr.
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import (  # noqa: E402
    CLK_TCK, add_cpu_args, client_cpu, cpu_accounting, read, tail, wall_s)

# name: (accel's counter(s), the kernel's nstat counter(s)); sums of each.
SENDER_KEYS = {
    "retrans": (("tcp_retrans_segs",), ("TcpRetransSegs",)),
    "fast_retrans": (("tcp_fast_retrans",), ("TcpExtTCPFastRetrans",)),
    "rto": (("tcp_rto",), ("TcpExtTCPTimeouts",)),
    "tlp": (("tcp_tlp",), ("TcpExtTCPLossProbes",)),
    "recoveries": (("tcp_recovery_sack", "tcp_recovery_reno"),
                   ("TcpExtTCPSackRecovery", "TcpExtTCPRenoRecovery")),
    "lost_retrans": (("tcp_lost_retrans",), ("TcpExtTCPLostRetransmit",)),
    "undo": (("tcp_undo_recovery", "tcp_undo_rto"),
             ("TcpExtTCPFullUndo", "TcpExtTCPPartialUndo", "TcpExtTCPDSACKUndo",
              "TcpExtTCPLossUndo")),
    "dsack_rcvd": (("tcp_dsack_rcvd",), ("TcpExtTCPDSACKRecv",)),
    "segs_out": (("tx_frames",), ("TcpOutSegs",)),
}
RECEIVER_KEYS = {
    "ofo_queued": (("tcp_ofo_queued",), ("TcpExtTCPOFOQueue",)),
    "ofo_drop": (("tcp_ofo_drop",), ("TcpExtTCPOFODrop",)),
    "dsack_sent": (("tcp_dsack_sent",), ("TcpExtTCPDSACKOldSent", "TcpExtTCPDSACKOfoSent")),
    "csum_drop": (("rx_drop_csum",), ("TcpInCsumErrors",)),
}
# --show keys that are settings, not counters
IMPAIR_SETTINGS = ("impair", "dir", "loss", "dup", "reorder", "delay_ms", "jitter_ms", "corrupt",
                   "rate_mbit", "seed", "cpu", "daemon", "daemon_pid")


def accel_counters(text):
    """The ACCEL_STATS counters in text that are not 0, summed over the
    processes that dumped; None without a dump."""
    out = {}
    for name, val in re.findall(r"accel\[\d+\] stats: (\w+)\s+(\d+)$", text, re.M):
        out[name] = out.get(name, 0) + int(val)
    return {k: v for k, v in out.items() if v} if out else None


def data_paths(text):
    return sorted(set(re.findall(r"accel\[\d+\] stats: data path: (.*)", text)))


def nstat_delta(pair):
    """The TCP counters that moved between two nstat --json snapshots
    ("BEFORE,AFTER")."""
    if not pair:
        return None
    snaps = []
    for path in pair.split(","):
        try:
            snaps.append(json.loads(read(path)).get("kernel", {}))
        except ValueError:
            return None
    d = {k: v - snaps[0].get(k, 0) for k, v in snaps[1].items() if k.startswith("Tcp")}
    return {k: v for k, v in d.items() if v}


def impair_delta(pair):
    """(settings, counter differences) of two `impair --show` outputs."""
    if not pair:
        return None, None
    kv = []
    for path in pair.split(","):
        kv.append(dict(ln.split("=", 1) for ln in read(path).splitlines() if "=" in ln))
    settings = {k: kv[1].get(k) for k in IMPAIR_SETTINGS if k in kv[1]}
    d = {}
    for k, v in kv[1].items():
        if k in IMPAIR_SETTINGS or not re.fullmatch(r"-?\d+", v):
            continue
        before = kv[0].get(k, "0")
        d[k] = int(v) - (int(before) if re.fullmatch(r"-?\d+", before) else 0)
    return settings, {k: v for k, v in d.items() if v}


def pick(keys, accel, nst, is_accel):
    """The counters of keys from an accelerated end's dump or a kernel end's nstat."""
    src = accel if is_accel else nst
    if src is None:
        return None
    return {name: sum(src.get(c, 0) for c in (a if is_accel else k))
            for name, (a, k) in keys.items()}


def measured_loss(imp):
    """Loss the impairment applied during the transfer, % of each direction's packets."""
    if not imp:
        return None
    out = {}
    for d in ("in", "out"):
        n = imp.get(d + "_packets", 0) + imp.get(d + "_duplicated", 0)
        out[d] = 100.0 * imp.get(d + "_lost", 0) / n if n else None
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--direction", required=True, choices=("sender", "receiver"))
    ap.add_argument("--series", required=True, choices=("kernel", "accel"))
    ap.add_argument("--point", required=True)
    ap.add_argument("--round", type=int, default=1)
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--want-sha", required=True)
    ap.add_argument("--fetch")
    ap.add_argument("--server-log")
    ap.add_argument("--nstat-k")
    ap.add_argument("--nstat-a")
    ap.add_argument("--impair")
    ap.add_argument("--impaird-ticks", type=int, help="accel-impaird's CPU ticks in the transfer")
    add_cpu_args(ap)
    a = ap.parse_args()

    p = {"direction": a.direction, "series": a.series, "point": a.point, "round": a.round,
         "ok": True, "reason": None, "note": a.note, "size": a.size, "time_s": None,
         "goodput_mbit": None, "connect_s": None, "max_gap_s": None, "fetch": None, "sha_ok": None,
         "server_cpu_s": None, "client_cpu_s": None, "other_cpu_s": None, "steal_s": None,
         "wall_s": wall_s(a)}
    reasons = [a.failed] if a.failed else []
    text = read(a.fetch)
    m = re.search(r"^\{.*\}$", text, re.M)
    if m:
        f = json.loads(m.group(0))
        p["fetch"] = f
        p["time_s"], p["goodput_mbit"] = f["transfer_s"], f["goodput_mbit"]
        p["connect_s"] = f["connect_s"]
        p["max_gap_s"] = f["max_gap_s"]
        if not f["ok"]:
            reasons.append("the client did not complete: %s" % f["error"])
        else:
            p["sha_ok"] = f["bytes"] == a.size and f["sha256"] == a.want_sha
            if not p["sha_ok"]:
                reasons.append("the data that arrived differs from the file (%d of %d bytes, "
                               "sha256 %s)" % (f["bytes"], a.size, f["sha256"][:16]))
    elif a.fetch and not a.failed:
        reasons.append("the client gave no result: %s" % (tail(text, 3) or "no output"))
    cpu = client_cpu(p, a.client_cpu)
    if cpu and cpu["timed_out"]:
        reasons.append("the client did not exit in time (killed)")
    cpu_accounting(p, a)
    # The impairment's daemon is part of the setup, not other work.
    p["impaird_cpu_s"] = None if a.impaird_ticks is None else a.impaird_ticks / CLK_TCK
    if p["impaird_cpu_s"] is not None and p["other_cpu_s"] is not None:
        p["other_cpu_s"] = max(0.0, p["other_cpu_s"] - p["impaird_cpu_s"])

    accel_side = "server" if a.direction == "sender" else "client"
    dump = read(a.server_log) if accel_side == "server" else text
    acc = accel_counters(dump) if a.series == "accel" else None
    p["accel_stats"] = acc
    p["data_path"] = data_paths(dump) if a.series == "accel" else None
    p["nstat_k"], p["nstat_a"] = nstat_delta(a.nstat_k), nstat_delta(a.nstat_a)
    p["impair"], p["impair_counters"] = impair_delta(a.impair)
    p["measured_loss_pct"] = measured_loss(p["impair_counters"])
    # Who sends: sender direction: the server in accel-a (accel, or the
    # kernel's nginx there); receiver direction: the kernel nginx in accel-k.
    if a.direction == "sender":
        p["sender"] = pick(SENDER_KEYS, acc, p["nstat_a"], a.series == "accel")
        p["receiver"] = pick(RECEIVER_KEYS, None, p["nstat_k"], False)
    else:
        p["sender"] = pick(SENDER_KEYS, None, p["nstat_k"], False)
        p["receiver"] = pick(RECEIVER_KEYS, acc, p["nstat_a"], a.series == "accel")
    if a.series == "accel" and not (acc or {}).get("tx_frames") and not reasons:
        reasons.append("no ACCEL_STATS dump with frames from the accelerated %s" % accel_side)
    if reasons:
        p["ok"] = False
        p["reason"] = "; ".join(reasons)
    print(json.dumps(p))
    what = "%s%s %s %s round %d" % (a.log_prefix, a.direction, a.series, a.point, a.round)
    if p["ok"]:
        s = p["sender"] or {}
        print("%s: %.2f s, %.0f Mbit/s, longest stall %.3f s, sender retrans %s (rto %s, "
              "tlp %s)" % (what, p["time_s"], p["goodput_mbit"], p["max_gap_s"],
                           s.get("retrans"), s.get("rto"), s.get("tlp")), file=sys.stderr)
    else:
        print("%s: FAILED: %s" % (what, p["reason"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
