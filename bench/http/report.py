#!/usr/bin/python3
"""Turn bench/http/run.sh's points into JSON, Markdown and a PNG plot.

usage: report.py POINTS_TSV BASE DURATION STAMP MEMIF_NOTE ACCEL_ENV
writes BASE.json, BASE.md, BASE.png. Ratios are accel/kernel for the same
point measured in the same run (req/s, p50, p99, CPU per 100k requests);
topology B compares accel-memif with kernel-loopback.
"""
import json
import os
import platform
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAIRS = [("accel", "kernel"), ("accel-memif", "kernel-loopback")]


def num(s):
    try:
        v = float(s)
    except ValueError:
        return None
    return None if v != v else v  # NaN: a failed point


def load(path):
    points = []
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) != 9:
            continue
        mode, conns, ka, rps, p50, p99, reqs, errors, ticks = f
        reqs = int(reqs)
        cpu_s = int(ticks) / CLK_TCK
        points.append({
            "mode": mode, "conns": int(conns), "keepalive": ka == "1",
            "ok": errors != "failed", "rps": num(rps), "p50_us": num(p50), "p99_us": num(p99),
            "requests": reqs, "errors": None if errors == "failed" else int(errors),
            "server_cpu_s": cpu_s,
            "cpu_s_per_100k": (cpu_s / reqs * 1e5) if reqs else None,
        })
    return points


def label(p):
    return "%s c=%d" % ("keep-alive" if p["keepalive"] else "close", p["conns"])


def ratios(points):
    out = []
    for a_mode, k_mode in PAIRS:
        for a in points:
            if a["mode"] != a_mode:
                continue
            for k in points:
                if (k["mode"] == k_mode and k["conns"] == a["conns"]
                        and k["keepalive"] == a["keepalive"]):
                    r = {"point": label(a), "accel": a_mode, "kernel": k_mode}
                    for key in ("rps", "p50_us", "p99_us", "cpu_s_per_100k"):
                        r[key] = (a[key] / k[key]) if a[key] and k[key] else None
                    out.append(r)
    return out


def cmd(*argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def fmt(v, spec="%.1f"):
    return "-" if v is None else spec % v


def write_md(path, meta, points, rat):
    lines = ["# HTTP benchmark %s" % meta["stamp"], "",
             "nginx 1 process `return 200` small body; wrk -t1 --latency, %d s per point; "
             "wrk on CPU 0 (netns accel-k), nginx on CPU 1 (netns accel-a, same veth for both "
             "runs)." % meta["duration_s"], "",
             "| mode | point | req/s | p50 us | p99 us | errors | server CPU s / 100k req |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for p in points:
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            p["mode"], label(p), fmt(p["rps"], "%.0f"), fmt(p["p50_us"]), fmt(p["p99_us"]),
            "failed" if p["errors"] is None else p["errors"], fmt(p["cpu_s_per_100k"], "%.3f")))
    lines += ["", "Ratios accel / kernel (same run):", "",
              "| pair | point | req/s | p50 | p99 | CPU / 100k req |", "|---|---|---:|---:|---:|---:|"]
    for r in rat:
        lines.append("| %s / %s | %s | %s | %s | %s | %s |" % (
            r["accel"], r["kernel"], r["point"], fmt(r["rps"], "%.2f"), fmt(r["p50_us"], "%.2f"),
            fmt(r["p99_us"], "%.2f"), fmt(r["cpu_s_per_100k"], "%.2f")))
    lines += ["", "Topology B (memif): %s" % meta["memif_note"], "",
              "Environment: kernel %s, DPDK %s, %s; accel env: `%s`" % (
                  meta["kernel"], meta["dpdk"], meta["nginx"], meta["accel_env"]), ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def write_png(path, points, meta):
    labels = []
    for p in points:
        if p["mode"] in ("kernel", "accel") and label(p) not in labels:
            labels.append(label(p))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    width = 0.38
    for ax, key, title in ((axes[0], "rps", "requests/s"), (axes[1], "p99_us", "p99 latency (us)")):
        for i, mode in enumerate(("kernel", "accel")):
            vals = []
            for lab in labels:
                v = [p[key] for p in points if p["mode"] == mode and label(p) == lab]
                vals.append(v[0] if v and v[0] is not None else 0)
            xs = [x + (i - 0.5) * width for x in range(len(labels))]
            ax.bar(xs, vals, width, label=mode)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=15)
        ax.set_title(title)
        ax.legend()
    fig.suptitle("nginx, kernel vs accel (%s, %d s per point)" % (meta["stamp"], meta["duration_s"]))
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    raw, base, duration, stamp, memif_note, accel_env = sys.argv[1:7]
    points = load(raw)
    rat = ratios(points)
    meta = {
        "stamp": stamp, "duration_s": int(duration), "memif_note": memif_note,
        "accel_env": accel_env, "kernel": platform.release(),
        "dpdk": cmd("pkg-config", "--modversion", "libdpdk"),
        "nginx": cmd("sh", "-c", "nginx -v 2>&1"), "wrk": cmd("sh", "-c", "wrk -v 2>&1 | head -1"),
        "cpus": os.cpu_count(),
    }
    with open(base + ".json", "w") as f:
        json.dump({"meta": meta, "points": points, "ratios": rat}, f, indent=2)
    write_md(base + ".md", meta, points, rat)
    write_png(base + ".png", points, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
