#!/usr/bin/python3
"""Turn bench/loss/run.sh's transfers into JSON, Markdown and a PNG plot.

usage: report.py POINTS_JSONL META_TSV BASE
writes BASE.json, BASE.md, BASE.png. POINTS_JSONL holds one lossparse.py
object per transfer (direction, series, point, round); META_TSV key<TAB>value
lines from run.sh (nginx_conf: a file). With several rounds each table row
is the point's median round (by transfer time) and the ratios are the
medians of the per-round ratios, each round's accel against that round's
kernel, as in bench/http.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import (  # noqa: E402
    DISTURBED_PCT, busy_note, cmd, commit_note, failed_notes, fmt, load, machine, machine_line, median,
    median_points, other_pct, read, rounds_of, save_fig, side_bars, style_axes, table_row,
    write_json, write_md)

SERIES = ("kernel", "accel")
DIRECTIONS = ("sender", "receiver")
BOUND = 1.25      # accel's time at most this times the kernel's
STALL_S = 1.0     # the longest stall allowed at STALL_LOSS % loss or less
STALL_LOSS = 2.0
REORDER_PCT = 5.0  # the reordering point of the retransmission target


def spec(point):
    """A point's impairment: {"loss": "0.5", "delay": "10"} from "loss:0.5+delay:10"."""
    return dict(part.split(":", 1) for part in point.split("+"))


def loss_of(point):
    return float(spec(point).get("loss", 0))


def is_loss_point(point):
    return set(spec(point)) == {"loss"}


def is_delay_point(point):
    return "delay" in spec(point)


def is_reorder_point(point, pct=None):
    s = spec(point)
    return (set(s) == {"reorder"} or (set(s) == {"reorder", "loss"} and loss_of(point) == 0)) \
        and (pct is None or float(s["reorder"]) == pct)


def label(point):
    """"loss 0.5 % + delay 10 ms" for "loss:0.5+delay:10"."""
    units = {"loss": " %", "reorder": " %", "dup": " %", "corrupt": " %", "delay": " ms",
             "rate": " Mbit/s"}
    return " + ".join("%s %s%s" % (k, v, units[k]) for k, v in spec(point).items())


def short(point):
    return point.replace("loss:", "L").replace("reorder:", "R").replace("delay:", "D") \
        .replace("dup:", "dup").replace("corrupt:", "C").replace("rate:", "rate")


def find(points, direction, series, point):
    for p in points:
        if (p["direction"], p["series"], p["point"]) == (direction, series, point):
            return p
    return None


def point_order(points, meta):
    order = [x for x in meta.get("points", "").split(",") if x]
    for p in points:
        if p["point"] not in order:
            order.append(p["point"])
    return order


def directions_of(points):
    return [d for d in DIRECTIONS if any(p["direction"] == d for p in points)]


def round_ratios(all_points, direction, point):
    """accel / kernel transfer time of each round (None where either failed)."""
    out = []
    for r in rounds_of(all_points):
        rp = [p for p in all_points if p.get("round", 1) == r]
        a, k = find(rp, direction, "accel", point), find(rp, direction, "kernel", point)
        ok = a and k and a["ok"] and k["ok"] and a["time_s"] and k["time_s"]
        out.append(a["time_s"] / k["time_s"] if ok else None)
    return out


def round_values(all_points, direction, series, point, get):
    """get(p) of every round's transfer (None where it failed)."""
    out = []
    for r in rounds_of(all_points):
        p = find([x for x in all_points if x.get("round", 1) == r], direction, series, point)
        out.append(get(p) if p and p["ok"] else None)
    return out


def sender_get(key):
    return lambda p: (p.get("sender") or {}).get(key)


def summary(all_points, meta):
    """Per direction and point: the median ratio and every round's, and per
    series the median time and every round's longest stall and sender
    retransmissions (what the targets use)."""
    out = []
    for d in directions_of(all_points):
        for pt in point_order(all_points, meta):
            if not any(p["direction"] == d and p["point"] == pt for p in all_points):
                continue
            rr = round_ratios(all_points, d, pt)
            s = {"direction": d, "point": pt, "ratio": median(rr), "round_ratios": rr}
            for series in SERIES:
                s[series] = {
                    "time_s": median(round_values(all_points, d, series, pt,
                                                  lambda p: p["time_s"])),
                    "max_gap_s": round_values(all_points, d, series, pt,
                                              lambda p: p["max_gap_s"]),
                    "retrans": round_values(all_points, d, series, pt, sender_get("retrans")),
                }
            out.append(s)
    return out


def disturbed(all_points, meta, direction, point):
    worst = max((other_pct(p, meta) or 0.0 for p in all_points
                 if p["direction"] == direction and p["point"] == point), default=0.0)
    return worst if worst > DISTURBED_PCT else None


def verdict(rows, cc_note, what):
    """A target's status from rows [(point, value, pass?)]: met, missed
    (naming the points) or not measured; cc_note follows a verdict."""
    if not rows:
        return "not measured (%s)" % what
    missing = [pt for pt, v, _ in rows if v is None]
    bad = [pt for pt, v, good in rows if v is not None and not good]
    if bad:
        status = "missed at %s" % ", ".join(label(x) for x in bad)
    elif missing:
        status = "not measured at %s (failed)" % ", ".join(label(x) for x in missing)
    else:
        status = "met"
    return status + cc_note


def busy_status(all_points, meta, rows, direction):
    """" (disturbed: ...)" when other work took much of the machine in one of
    the rows' points."""
    worst = [disturbed(all_points, meta, direction, pt) for pt, _, _ in rows]
    worst = [w for w in worst if w]
    return (" (disturbed: other work took up to %.0f %% of the machine)" % max(worst)
            if worst else "")


def time_target(by, all_points, meta, direction, wanted, text, cc_note):
    """The target: accel's time at most BOUND times the kernel's in direction,
    at every point wanted(point) says."""
    rows = [(pt, s["ratio"], s["ratio"] is not None and s["ratio"] <= BOUND)
            for (d, pt), s in by.items() if d == direction and wanted(pt)]
    worst = max((v for _, v, _ in rows if v is not None), default=None)
    return {"target": text, "value": worst, "value_text": "worst %s" % fmt(worst, "%.2fx"),
            "per_point": {pt: v for pt, v, _ in rows},
            "status": verdict(rows, cc_note, "no such %s point" % direction) +
            busy_status(all_points, meta, rows, direction)}


def targets(summ, all_points, meta):
    """Issue 19's targets, each met, missed or not measured."""
    cc_note = ("" if meta.get("kernel_cc") == meta.get("accel_cc") else
               " (kernel %s against accel %s: not like for like)" % (
                   meta.get("kernel_cc"), meta.get("accel_cc")))
    by = {(s["direction"], s["point"]): s for s in summ}
    out = [time_target(
        by, all_points, meta, "sender",
        lambda pt: (is_loss_point(pt) and loss_of(pt) <= 5) or is_delay_point(pt),
        "accel sender's time <= %.2fx the kernel sender's at every loss point up to 5 %% "
        "and every delay point" % BOUND, cc_note)]
    # Stalls at <= 2 % loss: every round of the accel sender.
    rows = []
    for (d, pt), s in by.items():
        if d == "sender" and loss_of(pt) <= STALL_LOSS:
            gaps = s["accel"]["max_gap_s"]
            v = None if None in gaps or not gaps else max(gaps)
            rows.append((pt, v, v is not None and v <= STALL_S))
    worst = max((v for _, v, _ in rows if v is not None), default=None)
    out.append({"target": "no accelerated send stalls for more than %g s at <= %g %% loss "
                "(longest gap between two receives, every round)" % (STALL_S, STALL_LOSS),
                "value": worst, "value_text": "longest %s" % fmt(worst, "%.3f s"),
                "per_point": {pt: v for pt, v, _ in rows},
                "status": verdict(rows, "", "no such sender point")})
    # Retransmissions at 5 % reordering without loss (medians over the rounds).
    rows = []
    for (d, pt), s in by.items():
        if d == "sender" and is_reorder_point(pt, REORDER_PCT):
            a, k = median(s["accel"]["retrans"]), median(s["kernel"]["retrans"])
            v = None if a is None or k is None else (a, k)
            rows.append((pt, v, v is not None and a <= k))
    out.append({"target": "at %g %% reordering without loss, accel's sender retransmits no "
                "more than the kernel's (median segments)" % REORDER_PCT,
                "value": rows[0][1] if rows else None,
                "value_text": ("accel %s vs kernel %s" % (fmt(rows[0][1][0], "%.0f"),
                                                         fmt(rows[0][1][1], "%.0f"))
                               if rows and rows[0][1] else "-"),
                "status": verdict(rows, cc_note, "no reorder:%g point" % REORDER_PCT)})
    out.append(time_target(by, all_points, meta, "receiver", lambda pt: True,
                           "accel receiver's time <= %.2fx the kernel receiver's at every "
                           "point" % BOUND, cc_note))
    return out


def pair(a, k, key, spec="%.0f", get=None):
    """"kernel / accel" of one figure."""
    get = get or (lambda p: p.get(key) if p and p["ok"] else None)
    return "%s / %s" % (fmt(get(k), spec), fmt(get(a), spec))


def cnt(side, key):
    return lambda p: (p.get(side) or {}).get(key) if p and p["ok"] else None


def loss_cell(ps):
    """The loss the impairment applied, in / out %, over the point's transfers."""
    vals = {}
    for d in ("in", "out"):
        n = lost = 0
        for p in ps:
            c = p.get("impair_counters") or {}
            n += c.get(d + "_packets", 0) + c.get(d + "_duplicated", 0)
            lost += c.get(d + "_lost", 0)
        vals[d] = 100.0 * lost / n if n else None
    return "%s / %s" % (fmt(vals["in"], "%.2f"), fmt(vals["out"], "%.2f"))


def direction_table(d, points, all_points, summ, meta):
    nr = len(rounds_of(all_points))
    by = {s["point"]: s for s in summ if s["direction"] == d}
    if d == "sender":
        head = ["point", "lost in / out %", "time s kernel / accel", "accel / kernel",
                "Mbit/s kernel / accel", "connect s kernel / accel", "longest stall s kernel / accel",
                "retrans kernel / accel", "RTO", "TLP", "fast retrans", "undo", "D-SACKs rcvd"]
        keys = [("retrans", "sender"), ("rto", "sender"), ("tlp", "sender"),
                ("fast_retrans", "sender"), ("undo", "sender"), ("dsack_rcvd", "sender")]
    else:
        head = ["point", "lost in / out %", "time s kernel / accel", "accel / kernel",
                "Mbit/s kernel / accel", "connect s kernel / accel", "longest stall s kernel / accel",
                "sender retrans (kernel nginx)", "sender RTO", "out-of-order queued",
                "D-SACKs sent", "bad checksums"]
        keys = [("retrans", "sender"), ("rto", "sender"), ("ofo_queued", "receiver"),
                ("dsack_sent", "receiver"), ("csum_drop", "receiver")]
    head += ["other work %"] + (["ratio per round"] if nr > 1 else [])
    L = [table_row(head), table_row(["---"] + ["---:"] * (len(head) - 1 - (nr > 1)) +
                                    (["---"] if nr > 1 else []))]
    for pt in point_order(all_points, meta):
        if pt not in by:
            continue
        k, a = find(points, d, "kernel", pt), find(points, d, "accel", pt)
        ps = [p for p in all_points if p["direction"] == d and p["point"] == pt]
        busy = max((other_pct(p, meta) or 0.0 for p in (k, a) if p), default=None)
        row = [label(pt), loss_cell(ps),
               "%s / %s" % tuple("failed" if p and not p["ok"] else
                                 fmt(p["time_s"] if p else None, "%.2f") for p in (k, a)),
               fmt(by[pt]["ratio"], "%.2f"), pair(a, k, "goodput_mbit"),
               pair(a, k, "connect_s", "%.3f"), pair(a, k, "max_gap_s", "%.3f")]
        row += [pair(a, k, None, "%.0f", cnt(side, key)) for key, side in keys]
        row.append(fmt(busy, "%.0f"))
        if nr > 1:
            row.append(", ".join(fmt(x, "%.2f") for x in by[pt]["round_ratios"]))
        L.append(table_row(row))
    return L


def conditions(meta, all_points):
    size_mb = int(meta["size"]) / 1e6
    cc = meta.get("kernel_cc", "?")
    L = ["## Conditions", "",
         machine_line(meta),
         "* The file: %g MB of random bytes, served by a stock %s (master + one worker, "
         "`sendfile on`), fetched with HTTP/1.1 by `bench/loss/fetch.py` (%s, the "
         "system python: unmodified and dynamically linked, so accel-run accelerates its "
         "sockets), which reads the body into one buffer and hashes it after the last byte. "
         "Time: from the request sent to the last byte; goodput: body bits over that time "
         "(connect() is left out and shown apart, *connect s*: an accelerated program's "
         "first connect starts its data path, DPDK and af_xdp, some 0.4 s here, and a lost "
         "SYN costs a 1 s timeout on either stack: neither is loss recovery); longest stall: the largest gap between two successive receives of data, from the "
         "request sent on. A transfer whose data differs from the file (size or sha256) "
         "fails its point." % (size_mb, meta.get("nginx", "nginx"), meta.get("python", "")),
         "* Sender direction: nginx in netns accel-a (kernel series: on the kernel, with "
         "10.200.0.2/24 on the veth for that transfer only; accel series: under accel-run, "
         "af_xdp on the same veth), the client on the kernel in accel-k. Receiver "
         "direction: a kernel nginx in accel-k (10.200.0.1), the client in accel-a on the "
         "kernel (the veth gets the IP) or under accel-run. Every nginx of the sender "
         "direction is started for its transfer and stopped after it (QUIT: the "
         "accelerated one dumps ACCEL_STATS at exit); the receiver direction's kernel "
         "nginx serves the whole run.",
         "* Pinning: nginx (master and worker) on CPU %s, the client on CPU %s (`taskset`). "
         "accel-impaird (delay and reorder points only: loss runs in nftables) %s." % (
             meta["cpu_server"], meta["cpu_client"],
             ("on CPU %s for every point (ACCEL_LAB_IMPAIR_CPU)" % meta["impair_cpu_fixed"])
             if meta.get("impair_cpu_fixed") else
             "on the CPU of the end that is the kernel in both series of a direction, so "
             "the measured end keeps its CPU to itself: the client's (CPU %s) in the sender "
             "direction, the kernel nginx's (CPU %s) in the receiver direction" % (
                 meta["cpu_client"], meta["cpu_server"])),
         "* Congestion control: kernel **%s** (`net.ipv4.tcp_congestion_control` set in "
         "both lab namespaces before any of the benchmark's sockets exist, after adding it "
         "to the initial namespace's `tcp_allowed_congestion_control`; both restored at "
         "the end; this machine's default is %s), accel **%s** (`ACCEL_TCP_CC`). %s" % (
             cc, meta.get("kernel_cc_machine_default", "?"), meta.get("accel_cc", "?"),
             "Like for like: the same algorithm on both." if cc == meta.get("accel_cc")
             else "**Not like for like: the targets are meant for the same algorithm on "
             "both.**"),
         "* The kernel's TCP in accel-a: " + ", ".join(
             "%s %s" % (k[len("sysctl_"):], v) for k, v in sorted(meta.items())
             if k.startswith("sysctl_") and k != "sysctl_tcp_congestion_control") + ".",
         "* Impairment: `accel-lab impair` in netns accel-k (tests/README.md), both "
         "directions of the path (a loss of P % drops P % of the data one way and P % of "
         "the ACKs the other), applied once per point and round (`--seed 1000 x round + "
         "point index` for accel-impaird's choices; loss is the kernel's random), the "
         "kernel and the accel transfer of the point both under it; loss 0 is applied as "
         "`--loss 0`, the same mechanism with nothing lost. The kernel peer's own packets "
         "are copies with every impairment (tests/README.md): the kernel peer does not feel "
         "the veth's back-pressure. *lost in / out %*: what nftables dropped of each "
         "direction during the point's transfers (in: towards the kernel peer).",
         "* Rounds: %s (%s); odd rounds run the kernel transfer of a point first, even "
         "rounds accel's. Per-transfer limit %s s." % (
             meta["rounds"], "each row is the point's median round by transfer time, the "
             "ratio the median of the per-round ratios" if meta["rounds"] != "1" else
             "one transfer per side and point", meta.get("timeout_s")),
         "* Retransmissions: accel's from its ACCEL_STATS=2 dump (`tcp_retrans_segs`, "
         "`tcp_rto`, `tcp_tlp`, `tcp_fast_retrans`, `tcp_undo_*`, `tcp_dsack_rcvd`; "
         "receiver: `tcp_ofo_queued`, `tcp_dsack_sent`, `rx_drop_csum`), the kernel's from "
         "`nstat` in the sending end's namespace before and after the transfer "
         "(`TcpRetransSegs`, `TcpExtTCPTimeouts`, `TcpExtTCPLossProbes`, "
         "`TcpExtTCPFastRetrans`, `TcpExtTCP{Full,Partial,DSACK,Loss}Undo`, "
         "`TcpExtTCPDSACKRecv`; receiver: `TcpExtTCPOFOQueue`, `TcpExtTCPDSACK{Old,Ofo}Sent`, "
         "`TcpInCsumErrors`). In the receiver direction the sender is the kernel nginx "
         "in accel-k in both series: its retransmissions show how each receiver's ACKs "
         "and SACKs served it.",
         "* DPDK %s; accel env: `%s`." % (meta.get("dpdk") or "?", meta.get("accel_env", "")),
         "* Other work: busy CPU time of the whole machine during the transfer (/proc/stat, "
         "softirq included) minus nginx's, the client's and accel-impaird's, in %% of %s "
         "CPUs: other programs on this shared machine, and the kernel's network work done "
         "outside any of those processes (veth delivery and netfilter on an idle CPU)%s." % (
             meta["cpus"], busy_note(all_points, meta, "times are longer and the ratios "
                                     "less reliable"))]
    paths = sorted({x for p in all_points for x in (p.get("data_path") or [])})
    L.append("* Data path of the accelerated ends (ACCEL_STATS): %s." % (
        "; ".join(paths) or "none reported"))
    conf = read(meta.get("nginx_conf", ""))
    if conf:
        L += ["", "nginx configuration (sender direction; the receiver direction's kernel "
              "nginx listens on 10.200.0.1:80):", "", "```nginx", conf.rstrip(), "```"]
    return L + [""]


def write_report_md(path, meta, points, all_points, summ, tg):
    nr = len(rounds_of(all_points))
    L = ["# Loss benchmark %s" % meta["stamp"], ""] + commit_note(meta)
    if meta.get("smoke") == "1":
        L += ["**Smoke run (CI): %g MB, one round; the figures are not meaningful.**" % (
            int(meta["size"]) / 1e6), ""]
    L += ["## Targets (issue 19)", "",
          "Kernel **%s** against accel **%s**%s." % (
              meta.get("kernel_cc"), meta.get("accel_cc"),
              ", %d rounds: medians of the per-round ratios" % nr if nr > 1 else ""), "",
          table_row(["target", "figure", "status"]), table_row(["---", "---", "---"])]
    for t in tg:
        L.append(table_row([t["target"], t["value_text"], t["status"]]))
    L.append("")
    L += conditions(meta, all_points)
    for d in directions_of(all_points):
        L += ["## %s direction" % d.capitalize(), "",
              ("accel (or the kernel) sends: nginx in accel-a, the client on the kernel in "
               "accel-k. Counters are the sender's." if d == "sender" else
               "accel (or the kernel) receives: the client in accel-a, a kernel nginx in "
               "accel-k sends. Sender counters are the kernel nginx's (nstat in accel-k), "
               "receiver counters the client's.") +
              (" Each row is the point's median round by transfer time." if nr > 1 else ""),
              ""]
        L += direction_table(d, points, all_points, summ, meta)
        L.append("")
    L += failed_notes(all_points, lambda p: "%s %s %s%s" % (
        p["direction"], p["series"], label(p["point"]),
        " (round %d)" % p["round"] if nr > 1 else ""))
    write_md(path, L)


def write_png(path, meta, points, summ):
    ratio_of = {(s["direction"], s["point"]): s["ratio"] for s in summ}
    dirs = directions_of(points)
    order = point_order(points, meta)
    labels = [short(x) for x in order]
    cols = [("time_s", "transfer time, s (log)", True, None),
            ("retrans", "sender retransmissions", False, "sender"),
            ("max_gap_s", "longest stall, s (log)", True, None)]
    fig, axes = plt.subplots(len(dirs), len(cols), figsize=(5.2 * len(cols), 4 * len(dirs)),
                             squeeze=False)
    width = 0.38
    colors = (("kernel", "tab:blue"), ("accel", "tab:orange"))
    for ri, d in enumerate(dirs):
        for ci, (key, title, logy, side) in enumerate(cols):
            ax = axes[ri][ci]
            for i, (s, color) in enumerate(colors):
                found = []
                for pt in order:
                    p = find(points, d, s, pt)
                    if p is not None and side:
                        p = dict(p, **{key: (p.get(side) or {}).get(key)})
                    found.append(p)
                side_bars(ax, found, key, (i - 0.5) * width, width, 7, zero=not logy,
                          color=color)
            if key == "time_s":  # the point's ratio (median of the rounds' ratios)
                for x, pt in enumerate(order):
                    a, k = find(points, d, "accel", pt), find(points, d, "kernel", pt)
                    r = ratio_of.get((d, pt))
                    if r is not None and a["time_s"] and k["time_s"]:
                        ax.annotate("%.2fx" % r, (x, max(a["time_s"], k["time_s"])),
                                    ha="center", va="bottom", fontsize=7)
            if key == "max_gap_s":
                ax.axhline(STALL_S, color="red", linewidth=0.8, linestyle="--")
            style_axes(ax, labels, logy, "%s direction: %s" % (d, title))
            if ci == 0:
                ax.legend(handles=[Patch(color=c, label=s) for s, c in colors], fontsize=8)
    save_fig(fig, path, "%g MB through an impaired path, kernel %s vs accel %s (%s%s); "
             "L=loss %%, R=reorder %%, D=delay ms" % (
                 int(meta["size"]) / 1e6, meta.get("kernel_cc"), meta.get("accel_cc"),
                 meta["stamp"], ", median of %s rounds" % meta["rounds"]
                 if meta["rounds"] != "1" else ""))


def main():
    all_points, meta, base = load(sys.argv)
    meta.update(machine())
    meta["nginx"] = cmd("sh", "-c", "nginx -v 2>&1").replace("nginx version: ", "")
    meta["python"] = cmd("/usr/bin/python3", "--version")
    points = median_points(all_points, lambda p: (p["direction"], p["series"], p["point"]),
                           lambda p: p["time_s"])
    summ = summary(all_points, meta)
    tg = targets(summ, all_points, meta)
    doc_meta = dict(meta)
    doc_meta["nginx_conf"] = read(meta.get("nginx_conf", ""))
    write_json(base + ".json", {"meta": doc_meta, "points": all_points, "summary": summ,
                                "targets": tg})
    write_report_md(base + ".md", meta, points, all_points, summ, tg)
    write_png(base + ".png", meta, points, summ)
    return 0


if __name__ == "__main__":
    sys.exit(main())
