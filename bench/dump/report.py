#!/usr/bin/python3
"""Turn bench/dump/run.sh's downloads into JSON, Markdown and a PNG plot.

usage: report.py POINTS_JSONL META_TSV BASE
writes BASE.json, BASE.md, BASE.png. Per series (none, fast, slow): the
download speeds (median, min, max, Mbit/s), the median's ratio to none's,
the frames accel-dump wrote and the ring dropped, and the data path's own
drops (which must stay 0) and retransmissions.
"""
import os
import statistics
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
    ("none", "no capture"),
    ("fast", "`accel-dump -w /dev/null PID tcp port 80` (CPU 0, with curl)"),
    ("slow", "`accel-dump -w - PID tcp port 80` into a reader of ~6 MB/s: the ring fills"),
]
COLORS = {"none": "tab:blue", "fast": "tab:orange", "slow": "tab:red"}


def summary(points):
    out = {}
    for name, _ in SERIES:
        pts = [p for p in points if p["series"] == name]
        ok = [p for p in pts if p["ok"]]
        sp = [p["mbit_s"] for p in ok]
        out[name] = {
            "runs": len(pts), "ok": len(ok),
            "median": statistics.median(sp) if sp else None,
            "min": min(sp) if sp else None, "max": max(sp) if sp else None,
            "captured": sum(p["captured"] or 0 for p in ok),
            "ring_drops": sum(p["ring_drops"] or 0 for p in ok),
            "dp_drops": sum(p["dp_drops"] for p in pts),
            "retrans": sum(p["retrans"] for p in pts),
        }
    base = out["none"]["median"]
    for name, _ in SERIES:
        m = out[name]["median"]
        out[name]["ratio"] = m / base if m and base else None
    return out


def verdicts(s):
    """The issue's two conditions, as measured."""
    none = s["none"]
    spread = (none["max"] - none["min"]) / none["median"] if none["median"] else None
    out = []
    for name in ("fast", "slow"):
        r = s[name]["ratio"]
        within = (r is not None and spread is not None and abs(1 - r) <= spread)
        out.append({"series": name, "ratio": r, "none_spread": spread,
                    "speed": "within the noise" if within else "outside the noise",
                    "data_path_drops": s[name]["dp_drops"],
                    "ring_drops": s[name]["ring_drops"]})
    return out


def write_md(path, meta, points, s, v):
    L = ["# Capture benchmark %s" % meta["stamp"], ""] + commit_note(meta)
    if meta.get("smoke") == "1":
        L += ["**Smoke run (CI): the figures are not meaningful.**", ""]
    L += ["## Verdict (issue 23)", "",
          "A capture by a slow reader drops in the ring, never in the data path, and the "
          "transfer's speed does not change by more than the noise (the spread, max - min "
          "over the median, of the downloads without capture).", "",
          "| series | speed / none (medians) | none's spread | speed | ring drops | "
          "data path drops |", "|---|---:|---:|---|---:|---:|"]
    for x in v:
        L.append("| %s | %s | %s | %s | %d | %d |" % (
            x["series"], fmt(x["ratio"], "%.3f"), fmt(x["none_spread"], "%.3f"),
            x["speed"], x["ring_drops"], x["data_path_drops"]))
    L += ["", "## Conditions", "", machine_line(meta),
          "* Stock nginx (one process, `master_process off`) under accel-run in netns accel-a "
          "(af_xdp on the veth), pinned to CPU %s, serves a %s MB file; `curl` in netns "
          "accel-k (the kernel) downloads it, pinned to CPU %s; %s downloads per series, the "
          "series interleaved; the file is checked by sha256 after each." % (
              meta["cpu_server"], meta["size_mb"], meta["cpu_client"], meta["runs"])]
    L += ["* %s: %s." % (n, d) for n, d in SERIES]
    L += ["", "## Downloads (Mbit/s)", "",
          "| series | ok | median | min | max | / none | frames written | ring drops | "
          "data path drops | retransmissions |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, _ in SERIES:
        x = s[name]
        L.append("| %s | %d of %d | %s | %s | %s | %s | %d | %d | %d | %d |" % (
            name, x["ok"], x["runs"], fmt(x["median"], "%.0f"), fmt(x["min"], "%.0f"),
            fmt(x["max"], "%.0f"), fmt(x["ratio"], "%.3f"), x["captured"], x["ring_drops"],
            x["dp_drops"], x["retrans"]))
    L += ["", "*data path drops*: the server's tx_drop_nombuf + tx_drop_full + rx_drop_nobuf "
          "(accel-stat --json before and after each download).", ""]
    failed = [p for p in points if not p["ok"]]
    if failed:
        L += ["## Failed downloads", ""] + ["* %s run %d: %s" % (p["series"], p["run"],
                                                                 p["reason"]) for p in failed]
    write_lines(path, L)


def write_png(path, meta, points):
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, (name, _) in enumerate(SERIES):
        sp = [p["mbit_s"] for p in points if p["series"] == name and p["ok"]]
        ax.scatter([i] * len(sp), sp, color=COLORS[name], label=name)
        if sp:
            ax.hlines(statistics.median(sp), i - 0.25, i + 0.25, color=COLORS[name])
    ax.set_xticks(range(len(SERIES)))
    ax.set_xticklabels([n for n, _ in SERIES])
    ax.set_ylabel("download Mbit/s")
    ax.set_ylim(bottom=0)
    save_fig(fig, path, "capture: download speed per run, %s" % meta["stamp"])


def main():
    points, meta, base = load(sys.argv)
    meta.update(machine(with_model=True))
    s = summary(points)
    v = verdicts(s)
    write_json(base + ".json", {"meta": meta, "points": points, "summary": s, "verdicts": v})
    write_md(base + ".md", meta, points, s, v)
    write_png(base + ".png", meta, points)
    return 0


if __name__ == "__main__":
    sys.exit(main())
