"""Helpers shared by the benchmarks' parsers and reports under bench/.

A benchmark's parser (bench/http/wrkparse.py, bench/latency/spparse.py)
turns one point's output into a JSON line; its report.py turns the points
and run.sh's key<TAB>value conditions into BASE.json, BASE.md and BASE.png.
What both benchmarks do the same way lives here: the ACCEL_STATS dump, the
CPU accounting of a point (/proc and /proc/stat ticks, cpurun.py's file),
the machine's description, and the pieces of the Markdown and the plots.
Importing it does not import matplotlib: the parsers do not need it.
"""
import json
import os
import platform
import re
import subprocess

CLK_TCK = os.sysconf("SC_CLK_TCK")
DISTURBED_PCT = 10  # other work above this share of the machine makes a point unreliable
# A cache-line round trip (c2c.c) below this many ns: the two vCPUs' near
# placement on this VM (about 95 ns; the far one is about 415 ns).
NEAR_MAX_NS = 200
ACCEL_COUNTERS = ("rx_frames", "tx_frames", "tcp_connect", "tcp_accept", "tx_drop_full",
                  "tx_drop_nombuf", "rx_drop_nobuf")


# --- reading ---------------------------------------------------------------

def read(path):
    """The text of path; "" when path is empty or cannot be read."""
    if not path:
        return ""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def cmd(*argv):
    """A command's stdout, stripped; "" when it cannot run (10 s at most)."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def tail(text, n, skip=("stats:",)):
    """The last n non-empty lines of text without those holding a skip word, on one line."""
    lines = [ln.strip() for ln in text.splitlines()
             if ln.strip() and not any(w in ln for w in skip)]
    return " | ".join(lines[-n:])


def accel_stats(text):
    """The ACCEL_STATS=2 dump(s) in text: data path and a few counters."""
    out = {}
    for pid, path in re.findall(r"accel\[(\d+)\] stats: data path: (.*)", text):
        out[pid] = {"data_path": path.strip()}
    for pid, name, val in re.findall(r"accel\[(\d+)\] stats: (\w+)\s+(\d+)$", text, re.M):
        if pid in out and name in ACCEL_COUNTERS:
            out[pid][name] = int(val)
    return list(out.values())


# --- a point's CPU accounting (the parsers) ---------------------------------

def add_cpu_args(ap):
    """The parser options run.sh passes for every point (argparse)."""
    ap.add_argument("--client-cpu", help="cpurun.py's file for the client")
    ap.add_argument("--server-ticks", type=int, help="the server's CPU ticks in the point")
    ap.add_argument("--machine-ticks", type=int, help="busy ticks of the machine (/proc/stat)")
    ap.add_argument("--steal-ticks", type=int, help="steal ticks of the machine")
    ap.add_argument("--wall-ms", type=int, help="how long the point took")
    ap.add_argument("--c2c-ns", help="c2c.c's ns per cache-line round trip right before and "
                    "right after the point: BEFORE,AFTER (either empty when not measured)")
    ap.add_argument("--failed", help="why the point failed before it ran")
    ap.add_argument("--note")
    ap.add_argument("--log-prefix", default="")


def wall_s(a):
    """The point's wall time in s from --wall-ms, or None."""
    return None if a.wall_ms is None else a.wall_ms / 1000.0


def c2c_pair(a):
    """--c2c-ns as [before, after] (None where not measured), or None without it."""
    if a.c2c_ns is None:
        return None
    return [float(v) if v else None for v in (a.c2c_ns.split(",") + [""])[:2]]


def client_cpu(p, path):
    """Read cpurun.py's file into p["client_cpu_s"]; return its object (None without one)."""
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        cpu = json.load(f)
    p["client_cpu_s"] = cpu["user_s"] + cpu["sys_s"]
    return cpu


def cpu_accounting(p, a):
    """Set p's server_cpu_s, other_cpu_s and steal_s from the ticks options.

    other_cpu_s is the machine's busy time minus the server's and the
    client's: other work that competed with the benchmark.
    """
    if a.server_ticks is not None:
        p["server_cpu_s"] = a.server_ticks / CLK_TCK
    if a.machine_ticks is not None and None not in (p["server_cpu_s"], p["client_cpu_s"]):
        p["other_cpu_s"] = max(0.0, a.machine_ticks / CLK_TCK - p["server_cpu_s"]
                               - p["client_cpu_s"])
        p["steal_s"] = a.steal_ticks / CLK_TCK


# --- the report's data --------------------------------------------------------

def load(argv):
    """report.py's arguments POINTS_JSONL META_TSV BASE: (points, meta, base)."""
    raw, meta_path, base = argv[1:4]
    with open(raw) as f:
        points = [json.loads(line) for line in f if line.strip()]
    meta = {}
    with open(meta_path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("\t")
            meta[k] = v
    return points, meta, base


def machine(with_model=False):
    """The machine's conditions for meta: kernel release, CPUs (and their
    model with with_model), DPDK version."""
    m = {"kernel": platform.release(), "cpus": os.cpu_count()}
    if with_model:
        m["cpu_model"] = cpu_model()
    m["dpdk"] = cmd("pkg-config", "--modversion", "libdpdk")
    return m


def cpu_model():
    """The CPU's model name (lscpu), or ""."""
    model = [ln.split(":", 1)[1].strip() for ln in cmd("lscpu").splitlines()
             if ln.startswith("Model name")]
    return model[0] if model else ""


def series_desc(client, server):
    """(TOPOLOGIES, KERNEL_DESC) of a benchmark whose load is client and whose
    server is server: [(topology, accelerated series, what runs where)] and
    the kernel series' description (the series every run.sh measures)."""
    topologies = [
        ("A", "accel_a", "kernel %s in netns accel-k -> %s under accel-run in netns accel-a "
         "(af_xdp on the veth)" % (client, server)),
        ("B", "accel_b", "%s under accel-run -> %s under accel-run, both in netns accel-m, "
         "over memif" % (client, server)),
    ]
    kernel = ("kernel %s in netns accel-k -> kernel %s in netns accel-a, over the same veth "
              "(accel-a's veth holds the kernel IP for this series only)" % (client, server))
    return topologies, kernel


def topo_series(meta, topologies):
    """The accelerated series of the topologies this run measured (--topology)."""
    topo = meta.get("topology", "all")
    return {s for t, s, _ in topologies if topo in ("all", t)}


def accel_points(points, topologies, topo_series):
    """(topology, point) for every point of the measured accelerated series,
    in the order of topologies, then of points."""
    for topo, series, _ in topologies:
        if series in topo_series:
            for a in points:
                if a["series"] == series:
                    yield topo, a


def ratio(a, k, key):
    """a[key] / k[key] when both points worked and have the figure, else None."""
    ok = a["ok"] and k and k["ok"] and a[key] and k[key]
    return a[key] / k[key] if ok else None


def rounds_of(points):
    """The rounds (run.sh --rounds) the points belong to, in order."""
    return sorted({p.get("round", 1) for p in points})


def median(values):
    """The median of the values that are not None (None without any)."""
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def by_rounds(points, ratios, topo_series, ident, figure):
    """With one round: (points, None). With several: (one median point per
    ident, see median_points; each round's ratios(round's points,
    topo_series), one list per round)."""
    rounds = rounds_of(points)
    if len(rounds) < 2:
        return points, None
    round_rat = [ratios([p for p in points if p.get("round", 1) == r], topo_series)
                 for r in rounds]
    return median_points(points, ident, figure), round_rat


def median_points(points, ident, figure):
    """One point per ident(p): the round with the median figure(p) among the
    rounds that worked (the lower middle for an even count), or the first
    failed one when none worked; each keeps every round's figure in
    round_figures (None: that round failed)."""
    groups = {}
    for p in points:
        groups.setdefault(ident(p), []).append(p)
    out = []
    for grp in groups.values():
        grp.sort(key=lambda p: p.get("round", 1))
        ok = sorted((p for p in grp if p["ok"] and figure(p) is not None), key=figure)
        m = dict(ok[(len(ok) - 1) // 2] if ok else grp[0])
        m["round_figures"] = [figure(p) if p["ok"] else None for p in grp]
        out.append(m)
    return out


def c2c_values(points):
    """Every cache-line round trip (ns) measured around the points."""
    return [x for p in points for x in (p.get("c2c_ns") or []) if x is not None]


def c2c_cell(p):
    """A point's cache-line round trips before/after it, e.g. "95/97"."""
    v = p.get("c2c_ns")
    return "/".join(fmt(x, "%.0f") for x in v) if v else "-"


def placement(ns):
    """"near" or "far" for a cache-line round trip of ns."""
    return "near" if ns < NEAR_MAX_NS else "far"


def c2c_note(meta, points, when):
    """The conditions' item on the cache-line round trip; when says when the
    probe ran around each point."""
    text = ("* Cache-line round trip (`bench/lib/c2c.c`; *line RTT ns* in the tables, "
            "before/after): two threads pinned to CPU %s and CPU %s bounce one cache "
            "line 200,000 times, the median of 10 batches, %s. "
            % (meta["cpu_client"], meta["cpu_server"], when))
    vals = c2c_values(points)
    if not vals:
        how = meta.get("c2c_how", "not measured")
        return [text + ("Not measured: the probe failed (see the log)." if how == "ok"
                        else how[:1].upper() + how[1:] + ".")]
    text += "In this run: %.0f to %.0f ns, median %.0f." % (min(vals), max(vals),
                                                           median(vals))
    if min(vals) < NEAR_MAX_NS <= max(vals):
        text += " **Both placements occurred in this run.**"
    return [text + " On this VM the hypervisor moves the two vCPUs between a near placement "
            "(about 95 ns) and a far one (about 415 ns: some 4x the near cost of a line "
            "transfer), changing after seconds to minutes. Over memif (topology B) both ends exchange every "
            "message through rings in shared memory, that is through such line transfers, "
            "so B's figures depend on the placement: its message rates drop about 2.5x "
            "when far, with the same code. Below %d ns this report calls the placement "
            "near." % NEAR_MAX_NS]


def placement_line(points, series, rounds):
    """Per round, the median cache-line round trip around series' points and
    the placement it means (for the targets of a run of several rounds)."""
    parts = []
    for r in rounds:
        vals = c2c_values(p for p in points if p["series"] == series and p.get("round", 1) == r)
        v = median(vals)
        parts.append("round %d %s" % (r, "not measured" if v is None else
                                      "%.0f ns, %s (%d of %d probes far)" % (
                                          v, placement(v), sum(x >= NEAR_MAX_NS for x in vals),
                                          len(vals))))
    return ("Topology B's points per round, median cache-line round trip around them "
            "(far: %d ns or more): %s." % (NEAR_MAX_NS, "; ".join(parts)))


def other_pct(p, meta):
    """CPU other work took during the point, in % of the whole machine."""
    if not p or p.get("other_cpu_s") is None or not p.get("wall_s"):
        return None
    return 100.0 * p["other_cpu_s"] / (meta["cpus"] * p["wall_s"])


def write_json(path, doc):
    """The report's JSON, indented."""
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


# --- the Markdown -------------------------------------------------------------

def fmt(v, spec="%.1f"):
    """v with spec, "-" for None."""
    return "-" if v is None else spec % v


def table_row(cells):
    """A Markdown table row."""
    return "| %s |" % " | ".join(cells)


def failed_row(ncols, *cells):
    """A table row of ncols columns: the cells, then "failed", then empty cells."""
    return "| %s | failed |" % " | ".join(cells) + " |" * (ncols - len(cells) - 1)


def commit_note(meta):
    """The .md's line naming the commit the run measured (meta "commit")."""
    if not meta.get("commit"):
        return []
    lib = meta.get("accel_library")
    return ["At commit %s%s." % (meta["commit"], " (library measured: `%s`)" % lib if lib else ""), ""]


def smoke_note(meta):
    """The .md's warning lines for a --smoke run."""
    if meta.get("smoke") != "1":
        return []
    return ["**Smoke run (CI): %d s per point; the figures are not meaningful.**" %
            int(meta["duration_s"]), ""]


def machine_line(meta):
    """The conditions' "Machine" item (with the CPU model when meta has one)."""
    model = " (%s)" % (meta["cpu_model"] or "?") if "cpu_model" in meta else ""
    return ("* Machine: %s vCPUs%s, kernel %s; load average at start %s, at end %s (a "
            "shared machine: other work changes absolute figures, so every figure is "
            "compared with the kernel measured in the same run)." % (
                meta["cpus"], model, meta["kernel"], meta.get("loadavg_start", "?"),
                meta.get("loadavg_end", "?")))


def busy_note(points, meta, effect):
    """How much other work took in the worst point (and the steal); effect says
    what it did to the figures when it is above DISTURBED_PCT."""
    worst = max((other_pct(p, meta) or 0.0 for p in points), default=0.0)
    steal = sum(p.get("steal_s") or 0.0 for p in points)
    text = "; the most in one point: %.0f %%" % worst
    if worst > DISTURBED_PCT:
        text += " (**other work competed with the benchmark: %s**)" % effect
    if steal > 0:
        text += "; steal by the hypervisor over all points: %.1f s" % steal
    return text


def failed_notes(points, name):
    """The .md's "Failed points and notes" section; name(p) names a point."""
    failed = [p for p in points if not p["ok"]]
    notes = [p for p in points if p["ok"] and p.get("note")]
    if not failed and not notes:
        return []
    L = ["## Failed points and notes", ""]
    L += ["* %s: **failed**: %s" % (name(p), p["reason"]) for p in failed]
    L += ["* %s: %s" % (name(p), p["note"]) for p in notes]
    return L + [""]


def write_md(path, lines):
    """The report's Markdown."""
    with open(path, "w") as f:
        f.write("\n".join(lines))


# --- the plot -------------------------------------------------------------------

def side_bars(ax, found, key, x_off, width, fontsize, zero=True, **bar_args):
    """One side's bars: found[x] is the point at x (or None); a failed point is
    marked "failed" in red; zero=False leaves out values of 0. Returns
    ax.bar's bars and their values."""
    xs, vals = [], []
    for x, p in enumerate(found):
        xpos = x + x_off
        if p is None or not p["ok"] or p[key] is None or (not zero and not p[key]):
            if p is not None and not p["ok"]:
                ax.text(xpos, 0.02, "failed", rotation=90, ha="center", va="bottom",
                        fontsize=fontsize, color="red", transform=ax.get_xaxis_transform())
            continue
        xs.append(xpos)
        vals.append(p[key])
    return ax.bar(xs, vals, width, **bar_args), vals


def style_axes(ax, labels, logy, title):
    """x ticks for labels, log y when logy, the title."""
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=20, fontsize=8)
    if logy:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=10)


def save_fig(fig, path, title):
    """Title, lay out and write the figure (90 dpi)."""
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


# The two series of the benchmarks that run stock nginx once on the kernel
# and once under accel-run in the lab (bench/synflood, bench/conn1m).
NGINX_SERIES = [("kernel", "kernel nginx (accel-a's veth holds 10.200.0.2)"),
                ("accel", "nginx under accel-run (af_xdp on the veth)")]
