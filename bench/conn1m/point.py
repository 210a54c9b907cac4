#!/usr/bin/python3
"""One series of bench/conn1m/run.sh as a JSON line for report.py.

usage: point.py --series S --client FILE --client-err FILE
                --rss KB_BEFORE KB_HELD KB_AFTER --mem BEFORE HELD
                [--server-fds N] [--server-log FILE] [--idle-cpu TICKS MS]
                [--failed WHY]

--client: conn1m's JSON; --rss: nginx's RSS before the client started,
during the hold and after the close (empty when not measured); --mem:
run.sh's snapshots (meminfo, slabinfo, sockstat of accel-k and accel-a,
conntrack counts) before the client started and during the hold;
--server-fds: nginx's open fds during the hold; --idle-cpu: nginx's CPU
ticks over (part of) the hold and how long that was. Prints conn1m's figures
with the memory per held connection: nginx's RSS growth, the kernel's slab
growth (Slab, SUnreclaim, the caches that grew most), `TCP: mem` growth,
and the TCP slab cache's objects (sockets) added. The point is ok when
every connection was established, answered its second request and the
server saw them all closed.
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import accel_stats, read, tail  # noqa: E402

TOP_CACHES = 8
# What one kernel TCP socket fd costs in the slab: the socket, its inode,
# file and dentry, and an epoll registration.
SOCK_CACHES = ("TCP", "sock_inode_cache", "filp", "dentry", "eventpoll_epi", "eventpoll_pwq")
# The accelerated server's exit counters (ACCEL_STATS=2) worth showing.
ACCEL_KEEP = ("tcp_accept", "tcp_syncookies_sent", "tcp_syncookies_recv",
              "tcp_syncookies_failed", "tcp_listen_overflow", "tcp_rst_sent", "rx_drop_nobuf",
              "rx_drop_stack", "tx_drop_full", "tx_drop_nombuf", "xsk0_rx_dropped")


def sections(path):
    """A snapshot's sections: name -> list of lines."""
    out, cur = {}, None
    for ln in read(path).splitlines():
        if ln.startswith("## "):
            cur = out.setdefault(ln[3:].strip(), [])
        elif cur is not None:
            cur.append(ln)
    return out


def meminfo(lines):
    out = {}
    for ln in lines:
        k, _, v = ln.partition(":")
        if v.split():
            out[k.strip()] = int(v.split()[0])
    return out


def slabinfo(lines):
    """cache -> (objects in use, bytes allocated)."""
    out = {}
    for ln in lines:
        f = ln.split()
        if len(f) < 6 or ln.startswith(("slabinfo", "#")):
            continue
        try:
            out[f[0]] = (int(f[1]), int(f[2]) * int(f[3]))
        except ValueError:
            continue
    return out


def sockstat_tcp(lines):
    for ln in lines:
        if ln.startswith("TCP:"):
            f = ln.split()[1:]
            return {f[i]: int(f[i + 1]) for i in range(0, len(f) - 1, 2)}
    return {}


def memory(before, held, conns):
    """The kernel's growth between two snapshots, per held connection too."""
    a, b = sections(before), sections(held)
    if not a or not b:
        return None
    m0, m1 = meminfo(a.get("meminfo", [])), meminfo(b.get("meminfo", []))
    s0, s1 = slabinfo(a.get("slabinfo", [])), slabinfo(b.get("slabinfo", []))
    k0, k1 = sockstat_tcp(a.get("sockstat_k", [])), sockstat_tcp(b.get("sockstat_k", []))
    a0, a1 = sockstat_tcp(a.get("sockstat_a", [])), sockstat_tcp(b.get("sockstat_a", []))
    per = (lambda v: v / conns if conns else None)
    out = {}
    for key in ("Slab", "SUnreclaim", "MemAvailable"):
        if key in m0 and key in m1:
            d = (m1[key] - m0[key]) * 1024
            out[key.lower() + "_delta_b"] = d
            out[key.lower() + "_per_conn_b"] = per(d)
    grew = sorted(((s1[c][1] - s0.get(c, (0, 0))[1], c) for c in s1), reverse=True)
    out["slab_caches_grew"] = [
        {"cache": c, "delta_b": d, "objs_delta": s1[c][0] - s0.get(c, (0, 0))[0],
         "per_conn_b": per(d)} for d, c in grew[:TOP_CACHES] if d > 0]
    d = sum(s1.get(c, (0, 0))[1] - s0.get(c, (0, 0))[1] for c in SOCK_CACHES)
    out["socket_caches_delta_b"] = d
    out["socket_caches_per_conn_b"] = per(d)
    if "TCP" in s0 and "TCP" in s1:
        out["tcp_sock_objs_delta"] = s1["TCP"][0] - s0["TCP"][0]
    if "mem" in k0 and "mem" in k1:  # pages, the machine's (tcp_memory_allocated)
        d = (k1["mem"] - k0["mem"]) * os.sysconf("SC_PAGE_SIZE")
        out["tcp_mem_delta_b"] = d
        out["tcp_mem_per_conn_b"] = per(d)
    out["tcp_inuse_k"] = [k0.get("inuse"), k1.get("inuse")]
    out["tcp_inuse_a"] = [a0.get("inuse"), a1.get("inuse")]
    out["conntrack"] = b.get("conntrack", [])
    return out


def server_log(text):
    """The accelerated server's exit counters (ACCEL_KEEP) and its errors:
    count (suppressed repeats included) and the first one."""
    counters = {name: int(v) for name, v in
                re.findall(r"accel\[\d+\] stats: (\w+)\s+(\d+)$", text, re.M)
                if name in ACCEL_KEEP}
    errors = [ln for ln in text.splitlines() if re.match(r"accel\[[\d:]+\] error", ln)]
    n = len(errors) + sum(int(x) for x in re.findall(r"\((\d+) similar lines suppressed", text))
    return counters, n, errors[0] if errors else None


def num(s):
    return int(s) if s not in (None, "") else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--client-err", required=True)
    ap.add_argument("--rss", nargs=3, required=True)
    ap.add_argument("--mem", nargs=2, required=True)
    ap.add_argument("--server-fds")
    ap.add_argument("--server-log")
    ap.add_argument("--idle-cpu", nargs=2, type=int, metavar=("TICKS", "MS"))
    ap.add_argument("--failed")
    a = ap.parse_args()
    p = {"series": a.series, "ok": False, "reason": None}
    try:
        c = json.loads(read(a.client))
    except ValueError:
        c = None
    reasons = [a.failed] if a.failed else []
    if c is None:
        reasons.append("no result from conn1m: %s" % tail(read(a.client_err), 2))
        c = {}
    p.update(c)
    p.setdefault("conns", None)
    rss = [num(x) for x in a.rss]
    p["rss_kb"] = rss
    held = c.get("established") or 0
    p["rss_per_conn_b"] = ((rss[1] - rss[0]) * 1024 / held
                           if held and None not in rss[:2] else None)
    p["kernel"] = memory(a.mem[0], a.mem[1], held) if held else None
    p["server_fds_held"] = num(a.server_fds)
    p["idle_cpu_pct"] = (100.0 * a.idle_cpu[0] / os.sysconf("SC_CLK_TCK") /
                         (a.idle_cpu[1] / 1000.0) if a.idle_cpu and a.idle_cpu[1] else None)
    log = read(a.server_log)
    p["accel"] = accel_stats(log)
    p["accel_counters"], p["server_errors"], p["server_first_error"] = server_log(log)
    if c:
        n = c["conns"]
        if c["established"] != n:
            reasons.append("%d of %d connections established (%s)" % (
                c["established"], n, c["setup_failures"]))
        if c["second_ok"] != n:
            reasons.append("%d of %d answered the second request (%s)" % (
                c["second_ok"], n, c["second_failures"]))
        if c["close_s"] is None:
            reasons.append("the server still had %s connections after the close limit" %
                           c["server_active_after"])
    p["ok"] = not reasons
    p["reason"] = "; ".join(reasons) or None
    print(json.dumps(p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
