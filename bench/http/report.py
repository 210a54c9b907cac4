#!/usr/bin/python3
"""Turn bench/http/run.sh's points into JSON, Markdown and a PNG plot.

usage: report.py POINTS_JSONL META_TSV BASE
writes BASE.json, BASE.md, BASE.png. POINTS_JSONL holds one wrkparse.py
object per point; META_TSV key<TAB>value lines from run.sh (values that are
files: nginx_conf_<series>, stats/<series>/<n>, perf_<series>, perf_wrk_<series>).
Ratios are accel/kernel for the same point measured in the same run; both
topologies are compared with the one kernel series. Topology B over IPv6
(series accel_b6) is compared with topology B (over IPv4) instead: its
ratios are IPv6/IPv4.
"""
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import (  # noqa: E402
    series_desc,
    DISTURBED_PCT, accel_points, accel_stats, busy_note, c2c_cell, c2c_note, cmd, commit_note,
    failed_notes, failed_row, fmt, load, machine, machine_line, median,
    other_pct, placement_line, ratio, read, by_rounds, rounds_of, save_fig, side_bars, smoke_note,
    style_axes, topo_series as measured_series, write_json, write_md as write_lines)

KERNEL = "kernel"
# topology, accelerated series, what runs where
TOPOLOGIES, KERNEL_DESC = series_desc("wrk", "nginx")
TOPOLOGIES.insert(1, ("A", "accel_as", "kernel wrk in netns accel-k -> nginx under accel-run in "
                      "netns accel-a (af_xdp on the veth), the stack sharing the kernel's "
                      "address: 10.200.0.2/24 on the veth, ACCEL_IP unset"))
TOPOLOGIES.append(("B", "accel_bq", "wrk under accel-run -> nginx under accel-run, both in "
                   "netns accel-m, over memif, with ACCEL_STATS_LIVE=0 at both ends (nothing "
                   "published for accel-stat)"))
TOPOLOGIES.append(("B", "accel_b6", "wrk under accel-run -> nginx under accel-run, both in "
                   "netns accel-m, over memif, over IPv6: nginx `listen [fd00:201::1]:80`, wrk "
                   "to `http://[fd00:201::1]/`, both ends with ACCEL_IP6 (fd00:201::1/64 and "
                   "fd00:201::2/64) besides ACCEL_IP"))
# What a series is compared with (the kernel unless named here), and its
# name in the tables.
BASELINE = {"accel_b6": "accel_b", "accel_as": "accel_a", "accel_bq": "accel_b"}
SIDE = {KERNEL: "kernel", "accel_a": "accel", "accel_b": "accel", "accel_b6": "accel IPv6",
        "accel_as": "accel shared", "accel_bq": "accel quiet"}
# What a series with a baseline of its own is called in its section and plot.
VARIANT = {"accel_b6": " over IPv6", "accel_as": " with a shared address",
           "accel_bq": " without the live state region"}
# topology, target text, series, (conns, keepalive), metric, op, bound
TARGETS = [
    ("B", "req/s keep-alive c=32 >= 3x kernel", "accel_b", (32, True), "rps", ">=", 3.0),
    ("B", "conn/s (Connection: close c=32) >= 3x kernel", "accel_b", (32, False), "rps", ">=",
     3.0),
    ("A", "req/s keep-alive c=32 >= 1.3x kernel", "accel_a", (32, True), "rps", ">=", 1.3),
    ("A", "p50 keep-alive c=1 <= half the kernel's", "accel_a", (1, True), "p50_us", "<=", 0.5),
    ("B", "IPv6: req/s keep-alive c=32 >= 0.95x IPv4's (within 5 %; accel_b6 / accel_b)",
     "accel_b6", (32, True), "rps", ">=", 0.95),
    ("A", "shared address: req/s keep-alive c=32 >= 0.95x an own address's (accel_as / "
     "accel_a)", "accel_as", (32, True), "rps", ">=", 0.95),
    ("B", "live state costs under 2 %: req/s keep-alive c=32 without it <= 1.02x with it "
     "(accel_bq / accel_b)", "accel_bq", (32, True), "rps", "<=", 1.02),
    ("B", "live state costs under 2 %: p50 keep-alive c=32 without it >= 0.98x with it "
     "(accel_bq / accel_b)", "accel_bq", (32, True), "p50_us", ">=", 0.98),
]
METRICS = ("rps", "p50_us", "p99_us", "server_cpu_s_per_100k", "client_cpu_s_per_100k")


def label(conns, keepalive):
    return "%s c=%d" % ("keep-alive" if keepalive else "close", conns)


def row_label(conns, keepalive):
    """label() in the tables: the close point's req/s are connections/s."""
    return label(conns, keepalive) + ("" if keepalive else " (conn/s)")


def point_keys(points):
    """The (conns, keepalive) points measured: keep-alive by connections,
    then Connection: close."""
    return sorted({(p["conns"], p["keepalive"]) for p in points}, key=lambda k: (not k[1], k[0]))


def baseline(series):
    """The series a series' ratios are taken against."""
    return BASELINE.get(series, KERNEL)


# A baseline's name next to the series compared with it.
RIVAL_NAME = {"accel_b": "accel IPv4", "accel_a": "accel own address"}


def side_name(series, base):
    """A series' name in a table comparing it with base."""
    if base in BASELINE.values() and series == base:
        return RIVAL_NAME.get(base, "accel")
    return SIDE[series]


def section_name(topo, series):
    """A series' topology as the report names it."""
    return "Topology %s%s" % (topo, VARIANT.get(series, ""))


def find(points, series, conns, keepalive):
    for p in points:
        if p["series"] == series and p["conns"] == conns and p["keepalive"] == keepalive:
            return p
    return None


def ratios(points, topo_series):
    """accel / kernel of every metric, for every accelerated point (accel_b6:
    IPv6 / IPv4, against accel_b)."""
    out = []
    for topo, a in accel_points(points, TOPOLOGIES, topo_series):
        k = find(points, baseline(a["series"]), a["conns"], a["keepalive"])
        r = {"topology": topo, "series": a["series"], "baseline": baseline(a["series"]),
             "point": label(a["conns"], a["keepalive"]),
             "conns": a["conns"], "keepalive": a["keepalive"]}
        r.update((key, ratio(a, k, key)) for key in METRICS)
        out.append(r)
    return out


def targets(points, rat, topo_series, meta, round_rat=None):
    """The issue's targets, from the ratios of the run (one round), or with
    several rounds the median of the per-round ratios (round_rat: one
    ratios() list per round), each round's ratio kept in per_round."""
    out = []
    for topo, text, series, (conns, ka), metric, op, bound in TARGETS:
        if series not in topo_series:
            continue

        def pick(rs):
            r = next((x for x in rs if x["series"] == series and x["conns"] == conns
                      and x["keepalive"] == ka), None)
            return r[metric] if r else None
        per_round = [pick(rs) for rs in round_rat] if round_rat else None
        v = median(per_round) if round_rat else pick(rat)
        if v is None:
            why = []
            for s in (series, baseline(series)):
                p = find(points, s, conns, ka)
                if p and not p["ok"]:
                    why.append("%s failed" % s)
            status = "not measured (%s)" % (", ".join(why) or "no data")
        else:
            status = "met" if (v >= bound if op == ">=" else v <= bound) else "missed"
            busy = [other_pct(find(points, s, conns, ka), meta) or 0.0
                    for s in (series, baseline(series))]
            if max(busy) > DISTURBED_PCT:
                status += " (disturbed: other work took %.0f %% of the machine)" % max(busy)
        t = {"topology": topo, "target": text, "ratio": v, "status": status}
        if per_round is not None:
            t["per_round"] = per_round
        out.append(t)
    return out


def server_stats(meta):
    """ACCEL_STATS dumps of the accelerated servers, by series."""
    out = {}
    for key, path in meta.items():
        if key.startswith("stats/") and not key.startswith("stats/kernel/"):
            out.setdefault(key.split("/")[1], []).extend(accel_stats(read(path)))
    return out


def client_paths(points, series):
    paths = sorted({s["data_path"] for p in points if p["series"] == series
                    for s in p["client_accel"]})
    return paths


def perf_section(meta, series):
    text = read(meta.get("perf_" + series, ""))
    if not text:
        return []
    wrk = read(meta.get("perf_wrk_" + series, ""))
    m = re.search(r"Requests/sec:\s+([0-9.]+)", wrk)
    return ["### Profile of the %s nginx worker (c=32 keep-alive)" % series, "",
            "`perf record -g` on the worker during an extra %d s c=32 keep-alive run "
            "right after the measured one (%s req/s under perf; not counted above); "
            "`perf report --no-children -g none`:" % (
                int(meta["duration_s"]), m.group(1) if m else "no result"),
            "", "```", text.rstrip(), "```", ""] + ([
                "In topology A the worker's `[kernel.kallsyms]` share includes the kernel "
                "client's TCP receive work: a veth transmit (here af_xdp's tx kick, a "
                "sendmsg) delivers the frame to the peer in softirq on the sending CPU, so "
                "wrk's tcp_v4_rcv/tcp_ack run on nginx's CPU. The kernel series pays the "
                "same way.", ""] if series == "accel_a" else [])


def write_md(path, meta, points, rat, tg, stats, topo_series, all_points=None):
    dur = int(meta["duration_s"])
    L = ["# HTTP benchmark %s" % meta["stamp"], ""] + commit_note(meta) + smoke_note(meta)
    nr = int(meta.get("rounds", "1"))
    L += ["## Targets (issues 3, 21 and 22)", "",
          "Ratios accel / kernel, and for IPv6 (topology B over IPv6) IPv6 / IPv4: "
          "B over IPv6 against B in the same round; for A with a shared address "
          "against A with the stack's own address, in the same round.", ""]
    if nr > 1:
        L += ["%d rounds (kernel, A, A shared, B, B quiet, B over IPv6, then again): each ratio is the median "
              "of the rounds' ratios, each round's accel against that round's kernel (or "
              "B)." % nr, "",
              "| topology | target | ratio (median) | per round | status |",
              "|---|---|---:|---|---|"]
        for t in tg:
            L.append("| %s | %s | %s | %s | %s |" % (
                t["topology"], t["target"], fmt(t["ratio"], "%.2f"),
                ", ".join(fmt(x, "%.2f") for x in t.get("per_round", [])), t["status"]))
        for series in ("accel_b", "accel_bq", "accel_b6"):
            if series in topo_series:
                L += ["", placement_line(all_points or points, series,
                                         rounds_of(all_points or points)).replace(
                    "Topology B's", section_name("B", series) + "'s", 1)]
    else:
        L += ["| topology | target | ratio | status |", "|---|---|---:|---|"]
        for t in tg:
            L.append("| %s | %s | %s | %s |" % (t["topology"], t["target"],
                                                fmt(t["ratio"], "%.2f"), t["status"]))
    model = ("master + `worker_processes 1` (stock process model)"
             if meta["master_process"] == "on" else "`master_process off` (one process)")
    L += ["", "## Conditions", "", machine_line(meta),
          "* Pinning: wrk (`taskset -c %s`) on CPU %s, nginx (`taskset -c %s`: master and "
          "worker) on CPU %s." % (meta["cpu_client"], meta["cpu_client"], meta["cpu_server"],
                                  meta["cpu_server"]),
          "* Load: `%s`, `wrk -t1 -cN -d%ds --latency URL`, plus `-H \"Connection: close\"` for "
          "the close point (a new TCP connection per request: req/s = conn/s). %d s per "
          "point, points run one after the other." % (meta["wrk"], dur, dur),
          "* Percentiles are wrk's, which include its coordinated-omission correction: "
          "for every response slower than twice the mean interval per connection "
          "(duration / (requests / connections)), wrk adds a sample at every interval "
          "below it. The faster the server, the shorter that interval and the more "
          "samples one stall adds: at c=1 a 5 ms stall of the VM adds about 1,000 "
          "samples to a 5 us series and 50 to a 90 us one. So p99 at c=1 can read in "
          "milliseconds while p50 reads 5 us; compare p50 there, and the max column.",
          "* Server: %s, %s, pinned as above." % (meta["nginx"], model),
          "* Kernel baseline: %s. It is the kernel side of both topologies: the kernel ends "
          "of A and B are the same processes, namespaces, veth, pinning, config and "
          "duration, so it is measured once and both A and B are compared with it." %
          KERNEL_DESC]
    for topo, series, desc in TOPOLOGIES:
        if series not in topo_series:
            continue
        srv = sorted({s["data_path"] for s in stats.get(series, [])})
        line = "* %s: %s. Server data path (ACCEL_STATS): %s." % (
            section_name(topo, series), desc, "; ".join(srv) or "none reported")
        cli = client_paths(points, series)
        if topo == "B":
            line += " Client data path: %s." % ("; ".join(cli) or "none reported")
        if stats.get(series):
            line += " Frames through DPDK, per server process: %s." % ", ".join(
                "rx %s / tx %s" % (s.get("rx_frames"), s.get("tx_frames"))
                for s in stats[series])
        L.append(line)
    L += ["* DPDK %s; accel env (topology A): `%s`; ACCEL_STATS=2 on every accelerated "
          "process." % (meta["dpdk"], meta["accel_env"]),
          "* Other work: busy CPU time of the whole machine during the point "
          "(/proc/stat, without steal) minus nginx's and wrk's, in %% of %d CPUs over the "
          "point's wall time%s. "
          "Both ends of B busy-poll, so B suffers most when other work shares their CPUs." % (
              meta["cpus"], busy_note(points, meta, "absolute figures are low and the ratios "
                                      "less reliable")),
          "* CPU seconds per 100k requests: utime+stime from /proc of the nginx master and "
          "worker (a reaped worker counts through the master's cutime/cstime), and "
          "getrusage of wrk. Kernel TCP work done in softirq is charged to whichever "
          "process the CPU was running, so on a veth part of the kernel server's receive "
          "work lands on the client's CPU."] + c2c_note(
              meta, all_points or points, "right before and right after each wrk run (nginx "
              "idle between the points: an accelerated one sleeps too)") + [
          "", "nginx configuration (kernel series; the accelerated series differ only in "
          "the listen address, %s for topology B and %s for B over IPv6, and in the file "
          "paths):" % ("10.201.0.1:80", "[fd00:201::1]:80"),
          "", "```nginx", read(meta.get("nginx_conf_kernel", "")).rstrip(), "```", ""]

    for topo, series, desc in TOPOLOGIES:
        if series not in topo_series:
            continue
        base = baseline(series)
        L += ["## %s" % section_name(topo, series), "", desc + ", against %s." % (
            "the kernel baseline" if base == KERNEL else
            "topology B (live state on) of the same round" if series == "accel_bq" else
            "topology B (IPv4) of the same round" if base == "accel_b" else
            "topology A with the stack's own address, of the same round") + (
            " Each row is the point's median round (by req/s); *rounds* lists every "
            "round's req/s." if nr > 1 else ""), "",
              "| point | side | req/s | p50 us | p99 us | max us | wrk errors | server CPU s / 100k "
              "| client CPU s / 100k | client busy % | other work % | line RTT ns |" + (
                  " rounds |" if nr > 1 else ""),
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + (
                  "---|" if nr > 1 else "")]
        for conns, ka in point_keys([p for p in points if p["series"] == series]):
            for s in (base, series):
                p = find(points, s, conns, ka)
                side = side_name(s, base)
                if p is None:
                    continue
                if not p["ok"]:
                    L.append(failed_row(12 + (nr > 1), row_label(conns, ka), side))
                    continue
                L.append("| %s | %s | %.0f | %s | %s | %s | %d | %s | %s | %s | %s | %s |" % (
                    row_label(conns, ka), side, p["rps"], fmt(p["p50_us"], "%.0f"),
                    fmt(p["p99_us"], "%.0f"), fmt(p.get("max_us"), "%.0f"),
                    sum(p["errors"].values()),
                    fmt(p["server_cpu_s_per_100k"], "%.3f"),
                    fmt(p["client_cpu_s_per_100k"], "%.3f"), fmt(client_busy(p), "%.0f"),
                    fmt(other_pct(p, meta), "%.0f"), c2c_cell(p)) + (
                        " %s |" % ", ".join(fmt(x, "%.0f") for x in p["round_figures"])
                        if nr > 1 else ""))
        L += ["", "Client busy %: the load generator's CPU time over the point's wall time "
              "(one wrk thread on its own CPU). Near 100 %, the point measures the client as "
              "much as the server: a faster server cannot raise its req/s.",
              "", "Ratios %s:" % ("accel / kernel" if base == KERNEL else
                                  "without / with the live state" if series == "accel_bq"
                                  else "IPv6 / IPv4" if base == "accel_b" else
                                  "shared address / own address"), "",
              "| point | req/s | p50 | p99 | server CPU / 100k | client CPU / 100k |",
              "|---|---:|---:|---:|---:|---:|"]
        for r in rat:
            if r["series"] == series:
                L.append("| %s | %s | %s | %s | %s | %s |" % (
                    row_label(r["conns"], r["keepalive"]), fmt(r["rps"], "%.2f"), fmt(r["p50_us"], "%.2f"),
                    fmt(r["p99_us"], "%.2f"), fmt(r["server_cpu_s_per_100k"], "%.2f"),
                    fmt(r["client_cpu_s_per_100k"], "%.2f")))
        L.append("")

    L += failed_notes(all_points or points, lambda p: "%s %s%s" % (
        p["series"], label(p["conns"], p["keepalive"]),
        " (round %d)" % p["round"] if nr > 1 else ""))
    perf = []
    for _, series, _ in TOPOLOGIES:
        perf += perf_section(meta, series)
    if perf:
        L += ["## Where the time goes", ""] + perf
    write_lines(path, L)


def client_busy(p):
    """The load generator's CPU use during the point, in % of one CPU."""
    if p.get("client_cpu_s") is None or not p.get("wall_s"):
        return None
    return 100.0 * p["client_cpu_s"] / p["wall_s"]


def write_png(path, meta, points, topo_series):
    cols = [("rps", "req/s (close: conn/s)", False), ("p50_us", "p50 latency (us)", True),
            ("p99_us", "p99 latency (us)", True),
            ("server_cpu_s_per_100k", "server CPU s / 100k req", False),
            ("client_cpu_s_per_100k", "client CPU s / 100k req", False)]
    rows = [t for t in TOPOLOGIES if t[1] in topo_series]
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(4.2 * len(cols), 3.9 * len(rows)),
                             squeeze=False)
    width = 0.38
    for ri, (topo, series, _) in enumerate(rows):
        base = baseline(series)
        pts = point_keys([p for p in points if p["series"] == series])
        labels = [label(c, k) for c, k in pts]
        sides = ((base, side_name(base, base), "tab:blue" if base == KERNEL else "tab:orange"),
                 (series, side_name(series, base),
                  "tab:orange" if base == KERNEL else "tab:purple"))
        for ci, (key, title, logy) in enumerate(cols):
            ax = axes[ri][ci]
            for i, (s, name, color) in enumerate(sides):
                side_bars(ax, [find(points, s, c, k) for c, k in pts], key, (i - 0.5) * width,
                          width, 8, label=name, color=color)
            if key == "rps":  # the ratio over each pair
                for x, (c, k) in enumerate(pts):
                    a, kp = find(points, series, c, k), find(points, base, c, k)
                    if a and kp and a["ok"] and kp["ok"] and a["rps"] and kp["rps"]:
                        ax.annotate("%.2fx" % (a["rps"] / kp["rps"]),
                                    (x, max(a["rps"], kp["rps"])), ha="center",
                                    va="bottom", fontsize=8)
                ax.margins(y=0.12)
            style_axes(ax, labels, logy, "%s: %s" % (
                topo + VARIANT.get(series, ""), title))
            if ci == 0:
                ax.legend(handles=[Patch(color=color, label=name) for _, name, color in sides],
                          fontsize=8)
    save_fig(fig, path, "nginx, kernel vs accel: A = kernel wrk -> accel nginx (af_xdp), "
             "B = accel wrk -> accel nginx (memif), B IPv6 = B over IPv6 against B; "
             "%s, %s s per point%s" % (
                 meta["stamp"], meta["duration_s"],
                 ", median of %s rounds" % meta["rounds"] if meta.get("rounds", "1") != "1"
                 else ""))


def main():
    points, meta, base = load(sys.argv)
    meta.update(machine())
    meta.update({
        "nginx": cmd("sh", "-c", "nginx -v 2>&1"),
        "wrk": cmd("sh", "-c", "wrk -v 2>&1 | head -1").split(" Copyright")[0],
    })
    topo_series = measured_series(meta, TOPOLOGIES)
    all_points = points
    points, round_rat = by_rounds(points, ratios, topo_series,
                                  lambda p: (p["series"], p["conns"], p["keepalive"]),
                                  lambda p: p["rps"])
    rat = ratios(points, topo_series)
    tg = targets(points, rat, topo_series, meta, round_rat)
    stats = server_stats(meta)
    doc_meta = {k: v for k, v in meta.items()
                if not k.startswith(("stats/", "perf_", "nginx_conf_"))}
    doc_meta["nginx_conf"] = {k[len("nginx_conf_"):]: read(v) for k, v in meta.items()
                              if k.startswith("nginx_conf_")}
    doc_meta["server_accel_stats"] = stats
    doc_meta["perf"] = {s: read(meta["perf_" + s]) for _, s, _ in TOPOLOGIES
                        if "perf_" + s in meta}
    write_json(base + ".json", {"meta": doc_meta, "points": all_points, "ratios": rat,
                                "targets": tg})
    write_md(base + ".md", meta, points, rat, tg, stats, topo_series, all_points)
    write_png(base + ".png", meta, points, topo_series)
    return 0


if __name__ == "__main__":
    sys.exit(main())
