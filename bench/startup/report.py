#!/usr/bin/python3
"""Turn bench/startup/run.sh's runs into JSON, Markdown and a PNG plot.

usage: report.py POINTS_JSONL META_TSV BASE
writes BASE.json, BASE.md, BASE.png. Each point is one fresh process
(suparse.py); the tables give p50, p90 and max per series of the time from
the first socket call to a connected socket (the issue's "ready for
traffic"), to the echoed byte, from the process's start to main and of the
whole process, the accel/kernel ratios of the p50s, and accel's own account
of where its start-up went (the median of each phase).
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import (  # noqa: E402
    commit_note, fmt, load, machine, machine_line, save_fig, write_json,
    write_md as write_lines)

SERIES = [
    ("kernel", "kernel: the client on the kernel in netns accel-a (the veth holds the "
     "kernel IP for this series only)"),
    ("accel_cold", "accel_cold: the client under accel-run in accel-a (af_xdp on the "
     "veth), alone on the interface, no XDP program attached before it (the first "
     "accelerated process after the interface came up): its first socket brings the "
     "data path up and loads and attaches accel's XDP program"),
    ("accel_prepared", "accel_prepared: the same, the program removed and attached again "
     "by `accel-run --prepare` before each run (not timed): the first process after the "
     "interface came up when the program is attached at boot or in the service's "
     "ExecStartPre"),
    ("accel", "accel: the same with the XDP program the run before left attached (what "
     "every later process finds; ACCEL_XDP_KEEP=1, the default)"),
    ("accel_join", "accel_join: the same while an idle accelerated process drives the "
     "interface: the client joins its port"),
]
METRICS = [("connect_us", "first socket call to connected (ms)", 1e-3),
           ("reply_us", "first socket call to echo received (ms)", 1e-3),
           ("main_us", "process start to main (ms, 10 ms resolution)", 1e-3),
           ("wall_ms", "whole process (ms)", 1.0)]
PHASES = ["start_ms", "eal_ms", "port_ms", "stack_ms", "other_ms"]
PORT_PARTS = [("prog_ms", "XDP program"), ("probe_ms", "probe"), ("pool_ms", "mbuf pool"),
              ("queues_ms", "queues (XSK, UMEM)"), ("pstart_ms", "start")]
ACCEL_SERIES = ("accel_cold", "accel_prepared", "accel", "accel_join")
PORT_SERIES = ("accel_cold", "accel_prepared", "accel")
TARGET_MS = 20.0
COLORS = {"kernel": "tab:blue", "accel_cold": "tab:red", "accel_prepared": "tab:cyan",
          "accel": "tab:orange", "accel_join": "tab:green"}


def pct(values, q):
    """The q-th percentile (nearest rank) of values, None without any."""
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    k = max(0, min(len(v) - 1, int(round(q / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def summary(points):
    """Per series: the ok runs' count and, per metric and phase, p50/p90/max
    (in ms)."""
    out = {}
    for name, _ in SERIES:
        runs = [p for p in points if p["series"] == name and p["ok"]]
        s = {"runs": len([p for p in points if p["series"] == name]), "ok": len(runs)}
        for key, _, scale in METRICS:
            vals = [p[key] * scale for p in runs if p[key] is not None]
            s[key] = {"p50": pct(vals, 50), "p90": pct(vals, 90),
                      "max": max(vals) if vals else None}
        for ph in PHASES + [k for k, _ in PORT_PARTS]:
            vals = [p[ph] for p in runs if p.get(ph) is not None]
            s[ph] = pct(vals, 50)
        paths = sorted({p["data_path"] for p in runs if p.get("data_path")})
        s["data_path"] = "; ".join(paths)
        out[name] = s
    return out


def targets(summ):
    out = []
    for name in ACCEL_SERIES:
        s = summ.get(name)
        v = s["connect_us"]["p50"] if s else None
        if v is None:
            status = "not measured (every run failed)" if s and s["runs"] else "not measured"
        else:
            status = "met" if v <= TARGET_MS else "missed"
            if s["ok"] < s["runs"]:
                status += "; %d of %d runs failed" % (s["runs"] - s["ok"], s["runs"])
        out.append({"series": name, "target": "first socket ready for traffic (connected) "
                    "within %.0f ms, p50" % TARGET_MS, "value_ms": v, "status": status})
    return out


def write_md(path, meta, points, summ, tg):
    k = summ["kernel"]
    L = ["# Start-up benchmark %s" % meta["stamp"], ""] + commit_note(meta)
    if meta.get("smoke") == "1":
        L += ["**Smoke run (CI): %s runs per series; the figures are not meaningful.**"
              % meta["runs"], ""]
    L += ["## Targets (issue 22)", "", "| series | target | p50 | status |", "|---|---|---:|---|"]
    for t in tg:
        L.append("| %s | %s | %s ms | %s |" % (t["series"], t["target"],
                                               fmt(t["value_ms"], "%.2f"), t["status"]))
    L += ["", "## Conditions", "", machine_line(meta),
          "* Each run is a fresh process: `firstconn connect 10.200.0.1 PORT` "
          "(bench/startup/firstconn.c: socket, connect, one byte out and back) pinned to "
          "CPU %s, against a kernel `firstconn serve` in netns accel-k on CPU %s; %s runs "
          "per series, one after the other." % (meta["cpu_client"], meta["cpu_server"],
                                                 meta["runs"]),
          "* Hugepages at start: %s. accel env: `%s`; DPDK %s; library `%s`." % (
              meta.get("hugepages", "?"), meta.get("accel_env", ""), meta.get("dpdk", "?"),
              meta.get("accel_library", "?"))]
    L += ["* %s. Data path: %s." % (desc, summ[name]["data_path"] or "none")
          if name != "kernel" else "* %s." % desc for name, desc in SERIES]
    L += ["", "## Times (ms)", "",
          "| series | runs ok | " + " | ".join("%s p50 / p90 / max" % t for _, t, _ in METRICS)
          + " |", "|---|---:|" + "---:|" * len(METRICS)]
    for name, _ in SERIES:
        s = summ[name]
        L.append("| %s | %d of %d | %s |" % (name, s["ok"], s["runs"], " | ".join(
            "%s / %s / %s" % (fmt(s[key]["p50"], "%.2f"), fmt(s[key]["p90"], "%.2f"),
                              fmt(s[key]["max"], "%.2f")) for key, _, _ in METRICS)))
    L += ["", "Ratios accel / kernel of the p50s:", "",
          "| series | " + " | ".join(t for _, t, _ in METRICS) + " |",
          "|---|" + "---:|" * len(METRICS)]
    for name in ACCEL_SERIES:
        s = summ[name]
        L.append("| %s | %s |" % (name, " | ".join(
            fmt(s[key]["p50"] / k[key]["p50"] if s[key]["p50"] and k[key]["p50"] else None,
                "%.1f") for key, _, _ in METRICS)))
    L += ["", "## Where accel's start-up goes (median ms, its info log line)", "",
          "| series | start-up | EAL | port | stack | other |",
          "|---|---:|---:|---:|---:|---:|"]
    for name in ACCEL_SERIES:
        s = summ[name]
        L.append("| %s | %s |" % (name, " | ".join(fmt(s[ph], "%.2f") for ph in PHASES)))
    L += ["", "*other*: the configuration, the interface lock and what follows the stack "
          "(the progress thread); a joining process has no EAL or port of its own.", "",
          "The port's part (median ms):", "",
          "| series | " + " | ".join(t for _, t in PORT_PARTS) + " |",
          "|---|" + "---:|" * len(PORT_PARTS)]
    for name in PORT_SERIES:
        s = summ[name]
        L.append("| %s | %s |" % (name, " | ".join(fmt(s[k2], "%.2f") for k2, _ in PORT_PARTS)))
    L.append("")
    failed = [p for p in points if not p["ok"]]
    if failed:
        L += ["## Failed runs", ""] + ["* %s run %d: %s" % (p["series"], p["run"], p["reason"])
                                       for p in failed] + [""]
    write_lines(path, L)


def write_png(path, meta, points):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    for name, _ in SERIES:
        vals = sorted(p["connect_us"] / 1000.0 for p in points
                      if p["series"] == name and p["ok"] and p["connect_us"] is not None)
        if vals:
            ax.plot(vals, [(i + 1) / len(vals) for i in range(len(vals))], marker=".",
                    label=name, color=COLORS[name])
    ax.axvline(TARGET_MS, color="red", linestyle="--", linewidth=1, label="target 20 ms")
    ax.set_xscale("log")
    ax.set_xlabel("first socket call to connected (ms, log)")
    ax.set_ylabel("share of runs")
    ax.set_title("ready for traffic, per run (CDF)", fontsize=10)
    ax.legend(fontsize=8)
    ax = axes[1]
    runs = [p for name in PORT_SERIES for p in points
            if p["series"] == name and p["ok"] and p["eal_ms"] is not None]
    bottom = [0.0] * len(runs)
    parts = [("eal_ms", "EAL", "tab:purple")]
    if all(p.get("prog_ms") is not None for p in runs):
        parts += [("prog_ms", "XDP program", "tab:red"), ("probe_ms", "probe", "tab:brown"),
                  ("pool_ms", "mbuf pool", "tab:orange"), ("queues_ms", "queues", "tab:olive")]
    else:
        parts += [("port_ms", "port", "tab:orange")]
    parts += [("stack_ms", "stack", "tab:green"), ("other_ms", "other", "tab:gray")]
    for ph, label, color in parts:
        vals = [max(0.0, p[ph]) for p in runs]
        ax.bar(range(len(runs)), vals, bottom=bottom, color=color, label=label)
        bottom = [b + v for b, v in zip(bottom, vals)]
    edge = 0
    for name in PORT_SERIES[:-1]:
        edge += len([p for p in runs if p["series"] == name])
        if 0 < edge < len(runs):
            ax.axvline(edge - 0.5, color="black", linewidth=1)
    ax.set_xlabel("run: accel_cold | accel_prepared | accel (program kept)")
    ax.set_ylabel("ms")
    ax.set_title("accel's start-up by phase, per run", fontsize=10)
    ax.legend(fontsize=8)
    save_fig(fig, path, "start-up: kernel vs accel, %s, %s runs per series" % (
        meta["stamp"], meta["runs"]))


def main():
    points, meta, base = load(sys.argv)
    meta.update(machine(with_model=True))
    summ = summary(points)
    tg = targets(summ)
    write_json(base + ".json", {"meta": meta, "points": points, "summary": summ,
                                "targets": tg})
    write_md(base + ".md", meta, points, summ, tg)
    write_png(base + ".png", meta, points)
    return 0


if __name__ == "__main__":
    sys.exit(main())
