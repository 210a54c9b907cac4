#!/usr/bin/python3
"""Turn bench/latency/run.sh's points into JSON, Markdown and a PNG plot.

usage: report.py POINTS_JSONL META_TSV BASE
writes BASE.json, BASE.md, BASE.png. POINTS_JSONL holds one spparse.py
object per point; META_TSV key<TAB>value lines from run.sh. Ratios are
accel/kernel for the same case measured in the same run; both topologies
are compared with the one kernel series. With several rounds (run.sh
--rounds) the tables and the plot show each point's median round and the
targets the median of the per-round ratios (each round's accel against that
round's kernel). The p4-/p6- cases (pingpong.c over IPv4 and IPv6) also
give IPv6 / IPv4 ratios within each series and profile, and the IPv6
targets are taken from those.
"""
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import (  # noqa: E402
    series_desc,
    DISTURBED_PCT, accel_points, busy_note, c2c_cell, c2c_note, cmd, failed_notes, failed_row,
    fmt, load, machine, machine_line, median, other_pct, placement_line, ratio,
    read, by_rounds, rounds_of, save_fig, side_bars, smoke_note, style_axes, table_row,
    commit_note,
    topo_series as measured_series, write_json, write_md as write_lines)

KERNEL = "kernel"
PROFILES = ("default", "latency")
# topology, accelerated series, what runs where
TOPOLOGIES, KERNEL_DESC = series_desc("sockperf client", "sockperf server")
# topology, profile, target text, case prefix, metric, op, bound
TARGETS = [
    ("B", "latency", "p50 <= 1/20 of the kernel's", "pp-", "p50_us", "<=", 1 / 20),
    ("B", "latency", "p99.9 <= 1/5 of the kernel's", "pp-", "p999_us", "<=", 1 / 5),
    ("B", "latency", "UDP message rate (received) >= 5x the kernel's", "tp-udp-",
     "rx_msg_rate", ">=", 5.0),
    ("A", "latency", "p50 <= 1/2 of the kernel's", "pp-", "p50_us", "<=", 1 / 2),
    ("A", "default", "p50 <= 1/2 of the kernel's", "pp-", "p50_us", "<=", 1 / 2),
]
# IPv6 against IPv4 (issue 21), the same tool, series and profile:
# topology, profile, target text, IPv6 case, IPv4 case, metric, op, bound
V6_TARGETS = [
    ("B", "latency", "IPv6: p50 <= 1.05x IPv4's (within 5 %; pingpong TCP 64 B)",
     "p6-tcp-64", "p4-tcp-64", "p50_us", "<=", 1.05),
    ("B", "default", "IPv6: p50 <= 1.05x IPv4's (within 5 %; pingpong TCP 64 B)",
     "p6-tcp-64", "p4-tcp-64", "p50_us", "<=", 1.05),
]
# The IPv4 and IPv6 twins among the cases: (IPv6 case, IPv4 case) by prefix.
V6_PREFIX, V4_PREFIX = "p6-", "p4-"
PP_METRICS = (("p50_us", "p50"), ("p99_us", "p99"), ("p999_us", "p99.9"))
TP_METRICS = (("msg_rate", "sent msg/s"), ("rx_msg_rate", "received msg/s"))
SIDE_COLORS = (("kernel", "tab:blue"), ("default", "tab:orange"), ("latency", "tab:green"))
# An interruption of the platform at least this long is a slow round trip.
JIT_SLOW_US = 20


def jitter(meta):
    """jitter.c's counts per CPU ("client", "server"): interruptions per second
    of at least 5 and JIT_SLOW_US us, the longest, the share of time lost."""
    out = {}
    for side in ("client", "server"):
        j = meta.get("jitter_" + side)
        if not isinstance(j, dict):
            continue
        s = j["seconds"] or 1.0

        def rate(lo, j=j, s=s):
            return sum(g["count"] for g in j["gaps"] if g["from_us"] >= lo) / s
        out[side] = {"ge5": rate(5), "slow": rate(JIT_SLOW_US), "max_us": j["max_us"],
                     "lost_pct": j["lost_us"] / (s * 1e4)}
    return out


def slowed_pct(p, jit):
    """Share of a ping-pong point's round trips (in %) that an interruption of
    JIT_SLOW_US us or more on either CPU must have delayed."""
    if p is None or len(jit) < 2 or not p.get("avg_us"):
        return None
    return 100.0 * (jit["client"]["slow"] + jit["server"]["slow"]) * 2 * p["avg_us"] / 1e6


def jitter_lines(meta):
    jit = jitter(meta)
    if len(jit) < 2:
        return ["* Platform interruptions: not measured (jitter.c did not run)."]
    cpus = {"client": meta["cpu_client"], "server": meta["cpu_server"]}
    per = "; ".join(
        "CPU %s (%s): %.0f/s of >= 5 us, %.0f/s of >= %d us, longest %.0f us, %.2f %% of "
        "the time" % (cpus[k], k, v["ge5"], v["slow"], JIT_SLOW_US, v["max_us"],
                      v["lost_pct"]) for k, v in sorted(jit.items()))
    return ["* Platform interruptions (`bench/latency/jitter.c`: a thread spinning on the "
            "clock, on both CPUs at once for %.0f s before the points): %s. With both ends "
            "spinning (topology B, latency profile) each one delays the round trip in "
            "flight; for those rows the ping-pong tables give the share of round trips an "
            "interruption of >= %d us must have hit (both CPUs' rate times the mean round "
            "trip). Where that share is above 0.1 %%, p99.9 of the half round trip cannot "
            "be below about %d us on this machine, whatever the stack does."
            % (meta["jitter_client"]["seconds"], per, JIT_SLOW_US, JIT_SLOW_US / 2)]


def us(v):
    """A latency in us with 3 significant digits or so."""
    if v is None:
        return "-"
    return "%.2f" % v if v < 10 else "%.1f" % v if v < 1000 else "%.0f" % v


def find(points, series, profile, case):
    for p in points:
        if p["series"] == series and p["case"] == case and (
                series == KERNEL or p["profile"] == profile):
            return p
    return None


def key_figure(p):
    """What picks a point's median round: p50 for ping-pong, the received
    message rate for throughput."""
    return p["p50_us"] if p["mode"] == "pp" else p["rx_msg_rate"]


def cases_of(points, prefix):
    seen = []
    for p in points:
        if p["case"].startswith(prefix) and p["case"] not in seen:
            seen.append(p["case"])
    return seen


def pp_cases(points):
    """The ping-pong cases: sockperf's, then pingpong's (IPv4 and IPv6)."""
    return cases_of(points, "pp-") + [c for c in cases_of(points, "p")
                                      if c.startswith((V4_PREFIX, V6_PREFIX))]


def v6_pairs(points):
    """(IPv6 case, IPv4 case) for every p6- case whose p4- twin ran too."""
    cases = cases_of(points, "p")
    return [(c, V4_PREFIX + c[len(V6_PREFIX):]) for c in cases
            if c.startswith(V6_PREFIX) and V4_PREFIX + c[len(V6_PREFIX):] in cases]


def v6_ratio(points, series, profile, c6, c4, metric, rnd=None):
    """IPv6 / IPv4 of metric in series and profile (in round rnd only when
    given), or None."""
    pts = [p for p in points if rnd is None or p.get("round", 1) == rnd]
    a, b = find(pts, series, profile, c6), find(pts, series, profile, c4)
    return ratio(a, b, metric) if a else None


def v6_targets(points, all_points, topo_series, meta):
    """The IPv6 targets: per round IPv6 / IPv4 of the same series and
    profile, the median of the rounds (one round: its ratio)."""
    out = []
    series_of = dict((t, s) for t, s, _ in TOPOLOGIES)
    rounds = rounds_of(all_points)
    for topo, profile, text, c6, c4, metric, op, bound in V6_TARGETS:
        series = series_of[topo]
        if series not in topo_series or not any(p["case"] == c6 for p in all_points):
            continue
        per_round = [v6_ratio(all_points, series, profile, c6, c4, metric, r) for r in rounds]
        v = median(per_round)
        if v is None:
            why = ["%s failed" % c for c in (c6, c4)
                   if any(p["case"] == c and p["series"] == series and
                          p["profile"] == profile and not p["ok"] for p in all_points)]
            status, worst, cases = "not measured (%s)" % (
                ", ".join(why) or "no %s in this run" % c4), None, []
        else:
            met = v >= bound if op == ">=" else v <= bound
            worst = {"case": c6, "ratio": v, "met": met}
            if len(rounds) > 1:
                worst["per_round"] = per_round
            cases = [worst]
            status = "met" if met else "missed"
            busy = max(other_pct(find(points, series, profile, c), meta) or 0.0
                       for c in (c6, c4))
            if busy > DISTURBED_PCT:
                status += "; disturbed: other work took up to %.0f %% of the machine" % busy
        out.append({"topology": topo, "profile": profile, "target": text, "metric": metric,
                    "op": op, "bound": bound, "against": c4, "worst": worst, "cases": cases,
                    "status": status})
    return out


def ratios(points, topo_series):
    """accel / kernel of every metric, for every accelerated point."""
    out = []
    for topo, a in accel_points(points, TOPOLOGIES, topo_series):
        k = find(points, KERNEL, None, a["case"])
        r = {"topology": topo, "profile": a["profile"], "case": a["case"]}
        r.update((key, ratio(a, k, key)) for key, _ in PP_METRICS + TP_METRICS)
        out.append(r)
    return out


def targets(points, rat, topo_series, meta, round_rat=None):
    """The issue's targets, per case from the ratios of the run (one round),
    or with several rounds the median of the per-round ratios (round_rat:
    one ratios() list per round), each round's ratio kept in per_round."""
    out = []
    for topo, profile, text, prefix, metric, op, bound in TARGETS:
        series = dict((t, s) for t, s, _ in TOPOLOGIES)[topo]
        if series not in topo_series:
            continue
        per_case, missing, busy = [], [], 0.0
        for case in cases_of(points, prefix):
            def pick(rs, case=case):
                r = next((x for x in rs if x["topology"] == topo and x["profile"] == profile
                          and x["case"] == case), None)
                return r[metric] if r else None
            per_round = [pick(rs) for rs in round_rat] if round_rat else None
            v = median(per_round) if round_rat else pick(rat)
            if v is None:
                missing.append(case)
                continue
            met = v >= bound if op == ">=" else v <= bound
            per_case.append({"case": case, "ratio": v, "met": met})
            if per_round is not None:
                per_case[-1]["per_round"] = per_round
            for s in (series, KERNEL):
                busy = max(busy, other_pct(find(points, s, profile, case), meta) or 0.0)
        if not per_case:
            status = "not measured (%s)" % (
                "failed: " + ", ".join(missing) if missing else "no such case in this run")
            worst = None
        else:
            nmet = sum(c["met"] for c in per_case)
            status = "met" if nmet == len(per_case) else "missed"
            status += " (%d of %d cases)" % (nmet, len(per_case))
            if missing:
                status += "; not measured: " + ", ".join(missing)
            if busy > DISTURBED_PCT:
                status += "; disturbed: other work took up to %.0f %% of the machine" % busy
            hit = [slowed_pct(find(points, series, profile, c["case"]), jitter(meta))
                   for c in per_case] if metric == "p999_us" else []
            hit = [h for h in hit if h is not None]
            if hit:
                status += ("; the platform's own >= %d us interruptions hit %.2f-%.2f %% of "
                           "these round trips (p99.9 is the slowest 0.1 %%)"
                           % (JIT_SLOW_US, min(hit), max(hit)))
            worst = (min if op == ">=" else max)(per_case, key=lambda c: c["ratio"])
        out.append({"topology": topo, "profile": profile, "target": text, "metric": metric,
                    "op": op, "bound": bound, "worst": worst, "cases": per_case,
                    "status": status})
    return out


def data_paths(points, series, side):
    return sorted({s["data_path"] for p in points if p["series"] == series
                   for s in p[side + "_accel"]})


def side_name(p):
    return "kernel" if p["series"] == KERNEL else "accel " + p["profile"]


def rx_share(p):
    """The share of the messages sent that the server received."""
    return p["rx_msg_rate"] / p["msg_rate"] if p["rx_msg_rate"] and p["msg_rate"] else None


def side_rows(points, series, cases, ncols, cells):
    """Table rows of ncols columns: for each case, the kernel's point and each
    profile's of series; cells(p) is a point's cells after the case and side
    (the line RTT and, with several rounds, the rounds' cells included)."""
    rows = []
    for case in cases:
        found = [find(points, KERNEL, None, case)] + [find(points, series, x, case)
                                                      for x in PROFILES]
        for p in found:
            if p is None:
                continue
            if p["ok"]:
                rows.append(table_row([case, side_name(p)] + cells(p)))
            else:
                rows.append(failed_row(ncols, case, side_name(p)))
    return rows


def ratio_rows(rat, topo, prefix, keys, spec):
    """Table rows of topo's ratios of the cases starting with prefix."""
    return [table_row([r["case"], r["profile"]] + [fmt(r[k], spec) for k in keys])
            for r in rat if r["topology"] == topo and r["case"].startswith(prefix)]


def explain_lines(meta):
    """What the latency profile set, from `accel-run --profile latency --explain`."""
    text = meta.get("profile_explain_text", "")
    lines = [ln.rstrip() for ln in text.splitlines()
             if re.match(r"profile:|\S+=\S*\s+profile\b", ln)]
    if not lines:
        return []
    return (["  Settings that come from the profile (`accel-run --profile latency --explain`):",
             "", "  ```"] + ["  " + ln for ln in lines] + ["  ```", ""])


def case_ratio(c):
    """A target's ratio for one case (with several rounds: the median, then
    every round's ratio)."""
    text = "%s %.3f" % (c["case"], c["ratio"])
    if "per_round" in c:
        text += " (%s)" % ", ".join(fmt(x, "%.3f") for x in c["per_round"])
    return text


def write_md(path, meta, points, rat, tg, topo_series, all_points=None):
    dur = int(meta["duration_s"])
    nr = int(meta.get("rounds", "1"))
    all_points = all_points or points
    L = (["# Latency benchmark (sockperf) %s" % meta["stamp"], ""] + commit_note(meta) +
         smoke_note(meta))
    if meta.get("profile_fallback") == "1":
        L += ["Latency profile: %s." % meta["profile_how"], ""]
    L += ["## Targets (issues 4 and 21)", "",
          "Ratio accel / kernel for the same case in this run; \"worst\" is the case "
          "furthest from the target. The IPv6 rows: IPv6 / IPv4 of the same series and "
          "profile, p6-tcp-64 against p4-tcp-64 (both pingpong.c)." + (
              " %d rounds (kernel, A, B, then again): each case's ratio is the median of "
              "the rounds' ratios, each round's accel against that round's kernel; every "
              "round's ratio follows in brackets." % nr if nr > 1 else ""), "",
          "| topology | profile | target | worst ratio (case) | per case | status |",
          "|---|---|---|---:|---|---|"]
    for t in tg:
        w = t["worst"]
        L.append("| %s | %s | %s | %s | %s | %s |" % (
            t["topology"], t["profile"], t["target"],
            "-" if w is None else "%.3f (%s)" % (w["ratio"], w["case"]),
            ", ".join(case_ratio(c) for c in t["cases"]) or "-", t["status"]))
    if nr > 1 and "accel_b" in topo_series:
        L += ["", placement_line(all_points, "accel_b", rounds_of(all_points))]
    L += ["", "## Conditions", "", machine_line(meta),
          "* Pinning: the sockperf client (`taskset -c %s`) on CPU %s, the sockperf server "
          "(`taskset -c %s`) on CPU %s, in every series." % (
              meta["cpu_client"], meta["cpu_client"], meta["cpu_server"], meta["cpu_server"]),
          "* Load: %s. Ping-pong: `sockperf ping-pong [--tcp] --mps=5000000 -i IP -p PORT -m SIZE -t %d` "
          "against `sockperf server [--tcp]`; latency is sockperf's default, **half the round "
          "trip**, percentiles over the valid period (sockperf's warm-up excluded). "
          "Throughput: `sockperf throughput [--tcp] -m 64 -t %d` (sockperf's own defaults: "
          "Nagle on for TCP throughput); *sent* is the client's rate, *received* what the "
          "server handled (its count at SIGINT) over the client's sending time. %d s per "
          "point; a fresh server on its own port for every point; points run one after "
          "the other." % (meta["sockperf"], dur, dur, dur),
          "* IPv4 against IPv6 (sockperf 3.7 has no IPv6): p4-tcp-64 and p6-tcp-64 are "
          "`pingpong client -c IP -p PORT -m 64 -t %d -w %s` against `pingpong server -b IP "
          "-p PORT` (`bench/latency/pingpong.c`, compiled by run.sh with `cc -O2`), the same "
          "tool over IPv4 and over IPv6: TCP_NODELAY, one message in flight, sockperf's "
          "measure (half the round trip; percentiles by nearest rank), the %s s warm-up "
          "not recorded. Server addresses: 10.200.0.2 and fd00:200::2 on accel-a's veth "
          "(the kernel series turns the kernel's IPv6 on there for its own points only; "
          "the stack in A has ACCEL_IP6), 10.201.0.1 and fd00:201::1 in B, where both "
          "ends of both cases have ACCEL_IP6 besides ACCEL_IP, so that only the family "
          "differs." % (dur, meta.get("pp_warmup_s", "?"), meta.get("pp_warmup_s", "?")),
          "* Kernel baseline: %s. It is the kernel side of both topologies: the kernel ends "
          "of A and B are the same processes, namespaces, veth, pinning and options, so it "
          "is measured once and both A and B are compared with it." % KERNEL_DESC]
    for topo, series, desc in TOPOLOGIES:
        if series not in topo_series:
            continue
        line = "* Topology %s: %s. Server data path (ACCEL_STATS): %s." % (
            topo, desc, "; ".join(data_paths(points, series, "server")) or "none reported")
        if topo == "B":
            line += " Client data path: %s." % (
                "; ".join(data_paths(points, series, "client")) or "none reported")
        L.append(line)
    L += ["* Profiles: *default* is accel-run with accel's defaults; *latency* is %s (both "
          "ends in B)." % meta["profile_how"],
          ] + explain_lines(meta) + [
          "* accel-run: `%s`; DPDK %s; accel env (topology A): `%s`; ACCEL_STATS=2 on every "
          "accelerated process." % (meta["accel_run"], meta["dpdk"], meta["accel_env"]),
          "* Other work: busy CPU time of the whole machine during the point (/proc/stat, "
          "without steal, and without softirq, which on the veth is mostly the benchmark's "
          "own packets) minus the server's and the client's, in %% of %d CPUs over the "
          "point's wall time%s." % (meta["cpus"], busy_note(
              all_points, meta, "figures are noisier and the ratios less reliable"))]
    L += jitter_lines(meta) + c2c_note(
        meta, all_points, "right before each point's server starts and right after it "
        "stops") + [""]

    for topo, series, desc in TOPOLOGIES:
        if series not in topo_series:
            continue
        L += ["## Topology %s" % topo, "", desc + ", against the kernel baseline." + (
            " Each row is the point's median round (by p50, or received msg/s); *rounds* "
            "lists every round's figure." if nr > 1 else ""), ""]
        rounds_hdr, rounds_sep = (" rounds |", "---|") if nr > 1 else ("", "")

        def rounds_cell(p, spec):
            return [", ".join(fmt(x, spec) if spec else us(x) for x in p["round_figures"])
                    ] if nr > 1 else []
        pp = pp_cases(points)
        if pp:
            L += ["### Ping-pong latency (half round trip, us)", "",
                  "| case | side | p50 | p99 | p99.9 | avg | max | observations | "
                  "other work %% | hit by >= %d us (%%) | line RTT ns |%s" % (
                      JIT_SLOW_US, rounds_hdr),
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + rounds_sep]
            L += side_rows(points, series, pp, 11 + (nr > 1), lambda p: [
                us(p["p50_us"]), us(p["p99_us"]), us(p["p999_us"]), us(p["avg_us"]),
                us(p["max_us"]), fmt(p["observations"], "%d"), fmt(other_pct(p, meta), "%.0f"),
                fmt(slowed_pct(p, jitter(meta)) if p["series"] == "accel_b"
                    and p.get("profile") == "latency" else None, "%.2f"),
                c2c_cell(p)] + rounds_cell(p, None))
            L += ["", "Ratios accel / kernel (below 1: accel is faster):", "",
                  "| case | profile | p50 | p99 | p99.9 |", "|---|---|---:|---:|---:|"]
            L += ratio_rows(rat, topo, "p", ("p50_us", "p99_us", "p999_us"), "%.3f")
            L.append("")
        pairs = v6_pairs(points)
        if pairs:
            L += ["IPv6 / IPv4 (pingpong.c, the same series and profile; each round's "
                  "IPv6 against the same round's IPv4, the median of the rounds):", "",
                  "| cases | side | p50 | p99 | p99.9 |" + (" p50 per round |" if nr > 1 else ""),
                  "|---|---|---:|---:|---:|" + ("---|" if nr > 1 else "")]
            for c6, c4 in pairs:
                for s, prof in [(KERNEL, None)] + [(series, x) for x in PROFILES]:
                    if find(points, s, prof, c6) is None:
                        continue
                    per = {m: [v6_ratio(all_points, s, prof, c6, c4, m, r)
                               for r in rounds_of(all_points)]
                           for m in ("p50_us", "p99_us", "p999_us")}
                    L.append(table_row(
                        ["%s / %s" % (c6, c4), "kernel" if s == KERNEL else "accel " + prof] +
                        [fmt(median(per[m]), "%.3f") for m in ("p50_us", "p99_us", "p999_us")] +
                        ([", ".join(fmt(x, "%.3f") for x in per["p50_us"])] if nr > 1 else [])))
            L.append("")
        tp = cases_of(points, "tp-")
        if tp:
            L += ["### Message rate (sockperf throughput)", "",
                  "| case | side | sent msg/s | received msg/s | received / sent | "
                  "other work % | line RTT ns |" + rounds_hdr,
                  "|---|---|---:|---:|---:|---:|---:|" + rounds_sep]
            L += side_rows(points, series, tp, 7 + (nr > 1), lambda p: [
                fmt(p["msg_rate"], "%.0f"), fmt(p["rx_msg_rate"], "%.0f"),
                fmt(rx_share(p), "%.2f"), fmt(other_pct(p, meta), "%.0f"),
                c2c_cell(p)] + rounds_cell(p, "%.0f"))
            L += ["", "Ratios accel / kernel (above 1: accel is faster):", "",
                  "| case | profile | sent | received |", "|---|---|---:|---:|"]
            L += ratio_rows(rat, topo, "tp-", ("msg_rate", "rx_msg_rate"), "%.2f")
            L.append("")

    L += failed_notes(all_points, lambda p: "%s %s %s%s" % (
        p["series"], p["profile"], p["case"], " (round %d)" % p["round"] if nr > 1 else ""))
    write_lines(path, L)


def compact(v):
    """A bar's value in a few characters."""
    if v >= 1e6:
        return "%.2fM" % (v / 1e6)
    if v >= 1e4:
        return "%.0fk" % (v / 1e3)
    return us(v)


def write_png(path, meta, points, topo_series):
    rows = [t for t in TOPOLOGIES if t[1] in topo_series]
    pp, tp = pp_cases(points), cases_of(points, "tp-")
    cols = [(key, "%s latency (us, half RTT)" % name, pp, True) for key, name in PP_METRICS]
    cols.append(("rx_msg_rate", "message rate received (msg/s)", tp, False))
    cols = [c for c in cols if c[2]]
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(4.6 * len(cols), 4.0 * len(rows)),
                             squeeze=False)
    width = 0.27
    for ri, (topo, series, _) in enumerate(rows):
        for ci, (key, title, cases, logy) in enumerate(cols):
            ax = axes[ri][ci]
            for i, (name, color) in enumerate(SIDE_COLORS):
                found = [find(points, KERNEL, None, case) if name == "kernel"
                         else find(points, series, name, case) for case in cases]
                bars, vals = side_bars(ax, found, key, (i - 1) * width, width, 7, zero=False,
                                       color=color,
                                       label=name if name == "kernel" else "accel " + name)
                for b, v in zip(bars, vals):
                    ax.annotate(compact(v), (b.get_x() + b.get_width() / 2, v), ha="center",
                                va="bottom", fontsize=6)
            style_axes(ax, cases, logy, "%s: %s" % (topo, title))
            ax.margins(y=0.1)
            if ci == 0:
                ax.legend(fontsize=8)
    save_fig(fig, path, "sockperf (p4/p6: pingpong.c over IPv4/IPv6), kernel vs accel: "
             "A = kernel client -> accel server (af_xdp), B = accel client -> accel server "
             "(memif); %s, %s s per point%s" % (
                 meta["stamp"], meta["duration_s"],
                 ", median of %s rounds" % meta["rounds"] if meta.get("rounds", "1") != "1"
                 else ""))


def main():
    points, meta, base = load(sys.argv)
    meta.update(machine(with_model=True))
    meta["sockperf"] = cmd("sh", "-c", "sockperf --version 2>&1 | head -1")
    if meta.get("profile_explain"):
        meta["profile_explain_text"] = read(meta.pop("profile_explain"))
    for side in ("client", "server"):
        if meta.get("jitter_" + side):
            try:
                meta["jitter_" + side] = json.loads(read(meta["jitter_" + side]))
            except ValueError:
                meta.pop("jitter_" + side)
    topo_series = measured_series(meta, TOPOLOGIES)
    all_points = points
    points, round_rat = by_rounds(points, ratios, topo_series,
                                  lambda p: (p["series"], p["profile"], p["case"]),
                                  key_figure)
    rat = ratios(points, topo_series)
    tg = targets(points, rat, topo_series, meta, round_rat)
    tg += v6_targets(points, all_points, topo_series, meta)
    write_json(base + ".json", {"meta": meta, "points": all_points, "ratios": rat,
                                "targets": tg})
    write_md(base + ".md", meta, points, rat, tg, topo_series, all_points)
    write_png(base + ".png", meta, points, topo_series)
    return 0


if __name__ == "__main__":
    sys.exit(main())
