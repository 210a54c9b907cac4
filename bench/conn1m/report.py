#!/usr/bin/python3
"""Turn bench/conn1m/run.sh's two series into JSON, Markdown and a PNG plot.

usage: report.py POINTS_JSONL META_TSV BASE
writes BASE.json, BASE.md, BASE.png. Per series (kernel, accel): the
connections held, the setup rate, the second requests answered, the close
time, and the memory per idle connection: nginx's RSS growth and the
kernel's slab growth; the issue's target (<= 4 KB per idle connection in
the stack) against the accelerated server's RSS growth, and the kernel
server end's cost (the kernel series' slab growth less the accel series':
the same client on the same kernel) beside it.
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
TARGET_B = 4096
COLORS = {"kernel": "tab:blue", "accel": "tab:orange"}
SOCK_CACHES = ("TCP", "sock_inode_cache", "filp", "dentry", "eventpoll_epi", "eventpoll_pwq")


def find(points, series):
    return next((p for p in points if p["series"] == series), None)


def kget(p, key):
    """A kernel memory figure of point p, or None."""
    return (p.get("kernel") or {}).get(key) if p else None


def derived(points):
    """Per-connection figures that take both series."""
    k, a = find(points, "kernel"), find(points, "accel")
    out = {"target_b": TARGET_B}
    for key in ("slab", "socket_caches"):
        ks, As = kget(k, key + "_per_conn_b"), kget(a, key + "_per_conn_b")
        out["kernel_server_%s_per_conn_b" % key] = ks - As if None not in (ks, As) else None
        out["client_%s_per_conn_b" % key] = As
    kr, ar = (k or {}).get("rss_per_conn_b"), (a or {}).get("rss_per_conn_b")
    out["accel_rss_per_conn_b"] = ar
    out["accel_over_kernel_rss_per_conn_b"] = ar - kr if None not in (ar, kr) else None
    over = out["accel_over_kernel_rss_per_conn_b"]
    out["met"] = over is not None and over <= TARGET_B
    return out


def caches_cell(p):
    c = kget(p, "slab_caches_grew") or []
    return ", ".join("%s %s" % (x["cache"], fmt(x["per_conn_b"], "%.0f")) for x in c[:6]) or "-"


def write_md(path, meta, points, d):
    L = ["# Idle connections benchmark %s" % meta["stamp"], ""] + commit_note(meta) + \
        smoke_note(meta)
    L += ["## Verdict (issue 24)", "",
          "Target: one accelerated nginx worker holds %s idle keep-alive connections, each "
          "answering a request at the end, at <= %d bytes per idle connection in the stack." %
          (meta["conns"], TARGET_B), "",
          "* What the accelerated side adds per held connection (libaccel and the stack: "
          "accel nginx's RSS growth less the kernel nginx's, nginx's own): **%s B** (%s); "
          "accel nginx's whole RSS growth %s B, the kernel nginx's %s B." % (
              fmt(d["accel_over_kernel_rss_per_conn_b"], "%.0f"), "met" if d["met"] else
              "missed" if d["accel_over_kernel_rss_per_conn_b"] is not None else "not measured",
              fmt(d["accel_rss_per_conn_b"], "%.0f"),
              fmt((find(points, "kernel") or {}).get("rss_per_conn_b"), "%.0f")),
          "* The kernel's per-socket cost, server end: **%s B** per connection in the socket's "
          "slab caches (%s: the kernel series' growth, both ends, %s B, less the accel "
          "series', the client's end alone, %s B); all of the slab: %s B (%s less %s)." % (
              fmt(d["kernel_server_socket_caches_per_conn_b"], "%.0f"),
              ", ".join(SOCK_CACHES),
              fmt(kget(find(points, "kernel"), "socket_caches_per_conn_b"), "%.0f"),
              fmt(d["client_socket_caches_per_conn_b"], "%.0f"),
              fmt(d["kernel_server_slab_per_conn_b"], "%.0f"),
              fmt(kget(find(points, "kernel"), "slab_per_conn_b"), "%.0f"),
              fmt(d["client_slab_per_conn_b"], "%.0f")), ""]
    L += ["## Conditions", "", machine_line(meta),
          "* nginx (one process, `master_process off`, worker_connections N + N/8 + 1024, "
          "keepalive_timeout 3600 s, keepalive_requests 1000000, `return 200 \"ok\"`, "
          "stub_status) in netns accel-a on CPU %s; `bench/conn1m/conn1m.c` in accel-k on "
          "CPU %s (%s vCPUs)." % (meta["cpu_server"], meta["cpu_client"], meta.get("cpus")),
          "* %s connections from %s source addresses (%s, on accel-k's veth; ports %s), %s "
          "connecting at a time, one GET each; held idle %s s; then a second GET on every "
          "one (as many at a time); then all closed (FIN) and nginx's stub_status polled "
          "until none is left." % (meta["conns"], meta["nsources"], meta["sources"],
                                    meta.get("port_range_k"), meta["inflight"],
                                    meta["hold_s"]),
          "* nginx CPU % idle: its CPU time (all threads) over the hold, in % of one CPU.",
          "* Memory: before the client started -> during the hold. RSS: nginx's VmRSS. "
          "Kernel: /proc/meminfo Slab (and SUnreclaim), /proc/slabinfo, sockstat `TCP: mem`: "
          "machine-wide, so both ends in the kernel series (the client's sockets live in the "
          "same kernel), the client's end (plus what the accelerated server keeps in the "
          "kernel: its fds are shown) in the accel series; other work on the machine adds "
          "noise. MemAvailable at the start: %s kB." % meta.get("mem_available_kb"),
          "* accel: env `%s`." % meta.get("accel_env"), ""]
    L += ["## Series", "",
          "| series | held | setup s | setup conn/s | 2nd answered | 2nd s | close s | "
          "RSS kB before -> held -> after | RSS B/conn | slab B/conn | SUnreclaim B/conn | "
          "TCP objs | TCP mem B/conn | nginx fds | nginx CPU % idle |",
          "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for series, _ in SERIES:
        p = find(points, series)
        if p is None:
            continue
        r = p["rss_kb"]
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s -> %s -> %s | %s | %s | %s | %s | "
                 "%s | %s | %s |" % (
                     series, fmt(p.get("established"), "%d"), fmt(p.get("setup_s"), "%.2f"),
                     fmt(p.get("setup_rate"), "%.0f"), fmt(p.get("second_ok"), "%d"),
                     fmt(p.get("second_s"), "%.2f"), fmt(p.get("close_s"), "%.2f"),
                     fmt(r[0], "%d"), fmt(r[1], "%d"), fmt(r[2], "%d"),
                     fmt(p.get("rss_per_conn_b"), "%.0f"),
                     fmt(kget(p, "slab_per_conn_b"), "%.0f"),
                     fmt(kget(p, "sunreclaim_per_conn_b"), "%.0f"),
                     fmt(kget(p, "tcp_sock_objs_delta"), "%+d"),
                     fmt(kget(p, "tcp_mem_per_conn_b"), "%.0f"),
                     fmt(p.get("server_fds_held"), "%d"), fmt(p.get("idle_cpu_pct"), "%.2f")))
    L += ["", "Slab caches that grew most (bytes per held connection): " + "; ".join(
        "%s: %s" % (s, caches_cell(find(points, s))) for s, _ in SERIES if find(points, s)),
        ""]
    for series, desc in SERIES:
        p = find(points, series)
        if p and (p.get("setup_failures") or p.get("second_failures")):
            L.append("* %s failures: setup %s, second request %s" % (
                series, p.get("setup_failures"), p.get("second_failures")))
    a = find(points, "accel")
    if a:
        c = a.get("accel_counters") or {}
        L.append("* accel server's counters at exit: " + (", ".join(
            "%s %d" % kv for kv in sorted(c.items()) if kv[1]) or "none"))
        if a.get("server_errors"):
            L.append("* accel server's errors: %d, the first: `%s`" % (
                a["server_errors"], a["server_first_error"]))
    failed = [p for p in points if not p["ok"]]
    if failed:
        L += ["", "## Failed series", ""] + ["* %s: %s" % (p["series"], p["reason"])
                                             for p in failed]
    write_lines(path, L)


def write_png(path, meta, points):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    names = [s for s, _ in SERIES if find(points, s)]
    ax.bar(names, [find(points, s).get("setup_rate") or 0 for s in names],
           color=[COLORS[s] for s in names])
    ax.set_title("connection setup rate (conn/s)", fontsize=9)
    width = 0.38
    for i, s in enumerate(names):
        p = find(points, s)
        vals = [p.get("rss_per_conn_b") or 0, kget(p, "slab_per_conn_b") or 0]
        ax2.bar([j + (i - 0.5) * width for j in range(2)], vals, width, color=COLORS[s],
                label=s)
    ax2.axhline(TARGET_B, color="gray", linestyle="--", linewidth=1, label="4 KB target")
    ax2.set_xticks(range(2))
    ax2.set_xticklabels(["nginx RSS", "kernel slab (machine)"])
    ax2.set_title("bytes per idle connection", fontsize=9)
    ax2.legend(fontsize=8)
    save_fig(fig, path, "%s idle connections, %s" % (meta["conns"], meta["stamp"]))


def main():
    points, meta, base = load(sys.argv)
    meta.update(machine(with_model=True))
    d = derived(points)
    write_json(base + ".json", {"meta": meta, "points": points, "derived": d})
    write_md(base + ".md", meta, points, d)
    write_png(base + ".png", meta, points)
    return 0


if __name__ == "__main__":
    sys.exit(main())
