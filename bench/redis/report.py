#!/usr/bin/python3
"""Turn bench/redis/run.sh's points into JSON, Markdown and a PNG plot.

usage: report.py POINTS_JSONL META_TSV BASE
writes BASE.json, BASE.md, BASE.png. POINTS_JSONL holds one rbparse.py
object per point; META_TSV key<TAB>value lines from run.sh (stats/<series>:
the accelerated server's stderr, with its ACCEL_STATS=2 dump). Ratios are
accel/kernel for the same point measured in the same run; both topologies
are compared with the one kernel series.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import (  # noqa: E402
    series_desc,
    accel_stats, failed_notes, fmt, load, machine, machine_line, ratio, read, save_fig,
    side_bars, commit_note, smoke_note, style_axes, table_row, topo_series, write_json, write_md)

KERNEL = "kernel"
TOPOLOGIES, KERNEL_DESC = series_desc("redis-benchmark", "redis-server")
METRICS = ("rps", "p50_us", "p99_us", "server_cpu_s_per_100k")


def key(p):
    return (p["test"], p["conns"], p["pipeline"])


def label(test, conns, pipeline):
    return "%s c=%d%s" % (test.upper(), conns, " P=%d" % pipeline if pipeline > 1 else "")


def name(p):
    return "%s %s" % (p["series"], label(*key(p)))


def main():
    points, meta, base = load(sys.argv)
    meta.update(machine(with_model=True))
    series = [KERNEL] + [s for _, s, _ in TOPOLOGIES if s in topo_series(meta, TOPOLOGIES)]
    by = {(p["series"],) + key(p): p for p in points}
    order = []
    for p in points:
        if p["series"] == KERNEL and key(p) not in order:
            order.append(key(p))
    rat = []
    for topo, s, _ in TOPOLOGIES:
        if s not in series:
            continue
        for k in order:
            a, kp = by.get((s,) + k), by.get((KERNEL,) + k)
            r = {"topology": topo, "point": label(*k)}
            r.update((m, ratio(a, kp, m)) for m in METRICS)
            rat.append(r)
    stats = {s: accel_stats(read(meta.get("stats/" + s, ""))) for s in series[1:]}
    write_json(base + ".json", {"meta": meta, "points": points, "ratios": rat,
                                "accel_stats": stats})

    L = ["# Redis benchmark %s" % meta["stamp"], ""] + commit_note(meta) + smoke_note(meta)
    L += ["## Conditions", "",
          "* %s" % meta.get("redis_version", "redis-server"),
          "* Kernel series: " + KERNEL_DESC + "."]
    L += ["* Topology %s: %s." % (t, d) for t, s, d in TOPOLOGIES if s in series]
    L += ["* Load: `redis-benchmark --csv -t TEST -c CONNS -P PIPELINE -n N`, 3-byte values "
          "(its default); N is the kernel's rate for the point times %s s, the same N in every "
          "series. redis-benchmark on CPU %s, redis-server on CPU %s; no persistence "
          "(`--save \"\" --appendonly no`). Latency: per request, as redis-benchmark "
          "measures it (with -P 16, a request's latency includes its batch)." % (
              meta["duration_s"], meta["cpu_client"], meta["cpu_server"]),
          "* CPU/100k: CPU seconds (user + system) per 100 000 requests of the server (/proc) "
          "and of redis-benchmark (getrusage); with the wall time (requests / req/s) they "
          "show which end was busy.",
          machine_line(meta), "* DPDK %s; accel env (topology A): `%s`." % (
              meta.get("dpdk") or "?", meta.get("accel_env", "")), ""]
    L += ["## Results", "",
          table_row(["point", "series", "req/s", "p50 us", "p99 us", "server CPU/100k (s)",
                     "client CPU/100k (s)"]),
          table_row(["---"] * 2 + ["---:"] * 5)]
    for k in order:
        for s in series:
            p = by.get((s,) + k)
            if p is None:
                continue
            if not p["ok"]:
                L.append(table_row([label(*k), s, "failed", "", "", "", ""]))
                continue
            L.append(table_row([label(*k), s, fmt(p["rps"], "%.0f"), fmt(p["p50_us"], "%.0f"),
                                fmt(p["p99_us"], "%.0f"),
                                fmt(p["server_cpu_s_per_100k"], "%.2f"),
                                fmt(p["client_cpu_s_per_100k"], "%.2f")]))
    L += ["", "## Ratios accel / kernel (same run)", "",
          table_row(["topology", "point", "req/s", "p50", "p99", "CPU/100k"]),
          table_row(["---"] * 2 + ["---:"] * 4)]
    for r in rat:
        L.append(table_row([r["topology"], r["point"]] +
                           [fmt(r[m], "%.2f") for m in METRICS]))
    L += [""]
    for s in series[1:]:
        for st in stats[s]:
            L.append("* %s server: data path %s, rx_frames %s, tx_frames %s (ACCEL_STATS=2)." % (
                s, st.get("data_path", "?"), st.get("rx_frames", "?"), st.get("tx_frames", "?")))
    L += [""] + failed_notes(points, name)
    write_md(base + ".md", L)

    labels = [label(*k) for k in order]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.8 / len(series)
    colors = {KERNEL: "#888888", "accel_a": "#1f77b4", "accel_b": "#ff7f0e"}
    for ax, m, title in ((axes[0], "rps", "requests/s (log)"),
                         (axes[1], "p50_us", "p50 latency, us (log)")):
        for i, s in enumerate(series):
            found = [by.get((s,) + k) for k in order]
            side_bars(ax, found, m, (i - (len(series) - 1) / 2) * width, width, 7,
                      zero=False, color=colors.get(s), label=s)
        style_axes(ax, labels, True, title)
        ax.legend(fontsize=8)
    save_fig(fig, base + ".png", "redis-server: kernel vs accel (%s)" % meta["stamp"])


if __name__ == "__main__":
    main()
