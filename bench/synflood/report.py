#!/usr/bin/python3
"""Turn bench/synflood/run.sh's points into JSON, Markdown and a PNG plot.

usage: report.py POINTS_JSONL META_TSV BASE
writes BASE.json, BASE.md, BASE.png. Per series (kernel, accel) and point
(base, flood_max, flood_rate, after): the flood's frames/s, the legitimate
clients' req/s (= connections/s), its ratio to base, p50/p99, errors, the
server's RSS before and after, the SYN cookie and overflow counters; the
issue's target (flood_max >= 50 % of base) per series.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import (  # noqa: E402
    NGINX_SERIES, commit_note, fmt, load, machine, machine_line, save_fig, smoke_note,
    write_json, write_md as write_lines)

SERIES = NGINX_SERIES
POINTS = ["base", "flood_max", "flood_rate", "after"]
TARGET = 0.5
COLORS = {"kernel": "tab:blue", "accel": "tab:orange"}
COUNTERS = ["syncookies_sent", "syncookies_recv", "syncookies_failed", "listen_overflow"]


def find(points, series, name):
    return next((p for p in points if p["series"] == series and p["point"] == name), None)


def ratios(points):
    """Each point's req/s over its series' base, in place."""
    for p in points:
        b = find(points, p["series"], "base")
        ok = p["ok"] and b and b["ok"] and b["rps"]
        p["ratio_to_base"] = p["rps"] / b["rps"] if ok else None


def verdicts(points):
    out = []
    for series, _ in SERIES:
        p = find(points, series, "flood_max")
        if p is None:
            continue
        r = p["ratio_to_base"]
        rss = p["rss_kb"]
        out.append({"series": series, "flood_pps": p["flood_pps"], "ratio": r,
                    "met": r is not None and r >= TARGET,
                    "rss_growth_kb": rss[1] - rss[0] if None not in rss else None})
    return out


def rss_cell(p):
    r = p["rss_kb"]
    return "%s -> %s" % (fmt(r[0], "%d"), fmt(r[1], "%d"))


def errors_cell(p):
    e = p.get("errors") or {}
    bad = ["%s %d" % kv for kv in e.items() if kv[1]]
    return ", ".join(bad) or "0"


def write_md(path, meta, points, v):
    L = ["# SYN flood benchmark %s" % meta["stamp"], ""] + commit_note(meta) + smoke_note(meta)
    L += ["## Verdict (issue 24)", "",
          "Target: during a SYN flood at the sender's maximum, legitimate clients connect at "
          ">= %d %% of the unflooded rate (the *base* point of the same series), and the "
          "server's memory stays bounded." % (TARGET * 100), "",
          "| series | flood frames/s sent | legit req/s flooded / unflooded | target | "
          "server RSS growth during the flood |", "|---|---:|---:|---|---:|"]
    for x in v:
        L.append("| %s | %s | %s | %s | %s kB |" % (
            x["series"], fmt(x["flood_pps"], "%.0f"), fmt(x["ratio"], "%.3f"),
            "met" if x["met"] else "missed" + ("" if x["ratio"] is not None else
                                               " (the point failed: below)"),
            fmt(x["rss_growth_kb"], "%+d")))
    L += ["", "## Conditions", "", machine_line(meta),
          "* nginx (one process, `master_process off`, `return 200` from `location = /hello`) "
          "in netns accel-a, pinned to CPU %s. wrk 4.1 (`-t1 -c%s --latency -H 'Connection: "
          "close'`: a new connection per request, so req/s is the legitimate connection rate) "
          "and the flood sender both in netns accel-k, both pinned to CPU %s: the machine has "
          "%s vCPUs. The kernel's handling of the flood's frames on the veth (softirq) runs on "
          "the sender's CPU too." % (meta["cpu_server"], meta["conns"], meta["cpu_client"],
                                     meta.get("cpus")),
          "* Flood: `bench/synflood/synflood.c` on accel-k's veth (AF_PACKET, sendmmsg "
          "batches of 64): SYNs like Linux's (MSS, SACK permitted, timestamps, window scale), "
          "random source port, ISN and TSval, sources %s (addresses of accel-k's veth, so ARP "
          "is answered; an XDP program on accel-k's veth, bench/synflood/sink.bpf.c, drops "
          "TCP to them, so no RST answers a SYN-ACK). It starts 1 s before wrk and stops "
          "after it." % meta["sources"],
          "* Kernel: net.ipv4.tcp_syncookies=%s, tcp_max_syn_backlog=%s, somaxconn=%s in "
          "accel-a; nginx's listen backlog 511 (its default)." % (
              meta.get("kernel_syncookies"), meta.get("kernel_max_syn_backlog"),
              meta.get("kernel_somaxconn")),
          "* accel: env `%s`; SYN cookies when the listener's backlog fills with handshakes, "
          "answered by accel's XDP program while it stays full (docs/DESIGN.md 7b)." %
          meta.get("accel_env"),
          "* %s s of wrk per point; points in order: base (no flood), flood_max (the sender "
          "as fast as it goes), flood_rate (%s), after (no flood, right after)." % (
              meta["duration_s"], "%s frames/s" % meta["rate"] if meta["rate"] != "0"
              else "not run: --rate 0"), ""]
    for series, desc in SERIES:
        pts = [find(points, series, n) for n in POINTS]
        pts = [p for p in pts if p]
        if not pts:
            continue
        L += ["## %s: %s" % (series, desc), "",
              "| point | flood frames/s | legit req/s | / base | p50 us | p99 us | wrk errors | "
              "RSS kB before -> after | cookies sent | cookies recv | cookies failed | "
              "listen overflow |", "|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|"]
        for p in pts:
            c = p["counters"]
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                p["point"], fmt(p["flood_pps"], "%.0f"), fmt(p["rps"], "%.0f"),
                fmt(p["ratio_to_base"], "%.3f"), fmt(p["p50_us"], "%.0f"),
                fmt(p["p99_us"], "%.0f"), errors_cell(p), rss_cell(p),
                " | ".join(fmt(c.get(k), "%d") for k in COUNTERS)))
        if series == "kernel":
            L += ["", "Kernel counters (nstat in accel-a): cookies sent/recv/failed are "
                  "TcpExtSyncookies*, listen overflow TcpExtListenOverflows; also per point: " +
                  "; ".join("%s: listen drops %s, SYN queue full -> cookie %s, -> drop %s" % (
                      p["point"], fmt(p["counters"].get("listen_drops"), "%d"),
                      fmt(p["counters"].get("reqq_full_cookies"), "%d"),
                      fmt(p["counters"].get("reqq_full_drop"), "%d")) for p in pts) + "."]
        else:
            L += ["", "accel counters: `accel-stat --json` before and after each point "
                  "(tcp_syncookies_*, tcp_listen_overflow); cookies sent are the stack's and "
                  "its XDP program's (the latter counted at each of the stack's asks, so a "
                  "point may hold some of the one before); per point, XDP's share: " +
                  "; ".join("%s: %s of %s, %s asks" % (
                      p["point"], fmt(p["counters"].get("syncookies_xdp"), "%d"),
                      fmt(p["counters"].get("syncookies_sent"), "%d"),
                      fmt(p["counters"].get("syncookies_xdp_asks"), "%d")) for p in pts) + "."]
        L.append("")
    failed = [p for p in points if not p["ok"]]
    if failed:
        L += ["## Failed points", ""] + ["* %s %s: %s" % (p["series"], p["point"], p["reason"])
                                         for p in failed]
    write_lines(path, L)


def write_png(path, meta, points):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.38
    for i, (series, _) in enumerate(SERIES):
        xs, ys, fl = [], [], []
        for j, name in enumerate(POINTS):
            p = find(points, series, name)
            if p:
                xs.append(j + (i - 0.5) * width)
                ys.append(p["rps"] or 0)
                fl.append((j + (i - 0.5) * width, p["flood_pps"] or 0))
        ax.bar(xs, ys, width, color=COLORS[series], label=series)
        ax2.bar([x for x, _ in fl], [y for _, y in fl], width, color=COLORS[series],
                label=series)
    for a, title in ((ax, "legitimate req/s (Connection: close)"),
                     (ax2, "flood frames/s sent")):
        a.set_xticks(range(len(POINTS)))
        a.set_xticklabels(POINTS)
        a.set_title(title, fontsize=9)
        a.legend(fontsize=8)
    save_fig(fig, path, "SYN flood, %s" % meta["stamp"])


def main():
    points, meta, base = load(sys.argv)
    meta.update(machine(with_model=True))
    ratios(points)
    v = verdicts(points)
    write_json(base + ".json", {"meta": meta, "points": points, "verdicts": v})
    write_md(base + ".md", meta, points, v)
    write_png(base + ".png", meta, points)
    return 0


if __name__ == "__main__":
    sys.exit(main())
