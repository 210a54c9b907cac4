#!/usr/bin/env python3
"""Wire-level view of the differential suite's captures.

    wire.py view PCAP TIMES OUTDIR   one OUTDIR/NAME.wire per scenario
    wire.py compare A B OUTDIR ALLOWLIST NAME...
                                     A/NAME.wire vs B/NAME.wire; exit 1 on an
                                     unexpected difference

PCAP is a capture on the kernel peer's veth (tcpdump -w, Ethernet); TIMES
has one line per scenario, "NAME START END" (seconds since the epoch, the
scenario's process start and exit). Every TCP flow between the subject
(10.200.0.2, fd00:200::2) and the peer whose first SYN falls in a
scenario's window belongs to that scenario; its frames up to END + SETTLE
count (later ones are the other world's leftovers: a process whose stack
lived in it is gone).

A flow is reduced to what must match Linux and is deterministic there:

  flow K connect peer:PORT        (the subject connected; K orders flows of
  flow K accept subj:PORT          the same key by their SYN's time)
   S SYN opts=mss:1460,sackok,ts,ws      handshake: flags, option kinds
   P SYN|ACK opts=...                      (sorted; NOP/EOL dropped), MSS
   S data=N psh=[offsets]                per direction: bytes (by sequence
   S FIN|ACK seq=X ack=Y opts=ts           space) and where PSH was set
   S RST seq=X                             (relative to the end of data),
   P ...                                   then FIN/RST segments with
                                           sequence and ack relative to
                                           each side's ISN, and their options

S is the subject, P the peer. Left out, because they differ run to run on
Linux itself or are values, not behaviour: ISNs, ports the kernel picks,
window values and the window-scale shift, timestamp values, IP ids, TTL,
checksums, how data is cut into segments (MSS, Nagle against ACK timing),
pure ACKs (delayed-ACK merging, quick-ACK mode), retransmissions (noted on
'#' lines, never compared). PSH offsets are compared exactly for a
subject's direction that carries at most PSH_EXACT bytes; above that, and
for the peer, only the last data segment's PSH is (Linux also pushes in
the middle of a long write, depending on the window at the moment:
tcp_sendmsg's forced_push; the echo peer pushes after each read, and its
reads follow how the subject's segments arrived). The largest segment
(maxseg) is compared once a direction carried at least two of them.
Identical repeated RSTs count once; the peer's segments sent after the
subject's RST, and the peer's FIN and last ACK of a flow the subject
reset, are notes (when the RST reached the peer is timing: a veth hands
the kernel world's RST over inside the peer's own send).
"""
import difflib
import os
import re
import struct
import sys

SUBJ = {"10.200.0.2", "fd00:200::2"}
SETTLE = 0.5
PSH_EXACT = 16384
OPT_NAMES = {2: "mss", 3: "ws", 4: "sackok", 5: "sack", 8: "ts", 30: "mptcp",
             34: "tfo"}
F_FIN, F_SYN, F_RST, F_PSH, F_ACK, F_URG = 1, 2, 4, 8, 16, 32


def ip4(b):
    return ".".join(str(x) for x in b)


def ip6(b):
    import ipaddress
    return str(ipaddress.IPv6Address(bytes(b)))


def read_pcap(path):
    """Yields (time, src, sport, dst, dport, seq, ack, flags, length, opts)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        end = "<"
    else:
        end = ">"
        magic = struct.unpack(">I", data[:4])[0]
    nano = magic == 0xA1B23C4D
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        t = sec + frac / (1e9 if nano else 1e6)
        seg = parse_eth(pkt)
        if seg is not None:
            yield (t,) + seg


def parse_eth(p):
    if len(p) < 14:
        return None
    et = struct.unpack("!H", p[12:14])[0]
    p = p[14:]
    if et == 0x0800 and len(p) >= 20:
        ihl = (p[0] & 15) * 4
        if p[9] != 6:
            return None
        tot = struct.unpack("!H", p[2:4])[0]
        src, dst = ip4(p[12:16]), ip4(p[16:20])
        plen = tot - ihl
        t = p[ihl:]
    elif et == 0x86DD and len(p) >= 40:
        if p[6] != 6:
            return None
        plen = struct.unpack("!H", p[4:6])[0]
        src, dst = ip6(p[8:24]), ip6(p[24:40])
        t = p[40:]
    else:
        return None
    if len(t) < 20:
        return None
    sport, dport, seq, ack, doff, flags = struct.unpack("!HHIIBB", t[:14])
    hl = (doff >> 4) * 4
    opts = []
    o = t[20:hl]
    i = 0
    while i < len(o):
        k = o[i]
        if k == 0:
            break
        if k == 1:
            i += 1
            continue
        if i + 1 >= len(o):
            break
        ln = o[i + 1]
        if ln < 2:
            break
        val = None
        if k == 2 and ln == 4:
            val = struct.unpack("!H", o[i + 2:i + 4])[0]
        opts.append((k, val))
        i += ln
    return (src, sport, dst, dport, seq, ack, flags & 0x3F, plen - hl, opts)


def flag_str(f):
    names = [("SYN", F_SYN), ("FIN", F_FIN), ("RST", F_RST), ("PSH", F_PSH),
             ("ACK", F_ACK), ("URG", F_URG)]
    return "|".join(n for n, b in names if f & b) or "none"


def opt_str(opts, syn):
    kinds = sorted({k for k, _ in opts if syn or k not in (5,)})
    out = []
    for k in kinds:
        name = OPT_NAMES.get(k, str(k))
        if k == 2:
            vals = [v for kk, v in opts if kk == 2]
            name += ":%s" % vals[0]
        out.append(name)
    return ",".join(out) or "-"


class Dir:
    def __init__(self):
        self.isn = None
        self.max_end = None  # highest relative sequence end sent
        self.data_end = 0     # relative end of data (bytes sent)
        self.psh = []
        self.events = []      # FIN/RST lines
        self.rtx = 0
        self.acks = 0
        self.seg_opts = set()
        self.maxseg = 0       # largest payload (new data)
        self.rst_sent = False
        self.rst_dups = 0     # repeated identical RSTs
        self.crossed = 0      # peer segments sent across the subject's RST
        self.hs = []          # handshake lines (SYN, SYN|ACK)
        self.last_ack = None  # the last ack sent (relative to the other ISN)


class Flow:
    def __init__(self, key, t):
        self.key = key
        self.t = t
        self.d = {"S": Dir(), "P": Dir()}


def rel(x, base):
    return (x - base) & 0xFFFFFFFF


def add_segment(fl, who, seq, ack, flags, ln, opts):
    d = fl.d[who]
    o = fl.d["P" if who == "S" else "S"]
    if flags & F_SYN:
        if d.isn is None:
            d.isn = seq
            d.max_end = 1
            d.hs.append("%s %s opts=%s" % (who, flag_str(flags & ~F_PSH),
                                           opt_str(opts, True)))
        else:
            d.rtx += 1
        return
    if d.isn is None:
        # No SYN from this side (a RST for a connection it does not know):
        # its sequence numbers relate to what the other side sent.
        if flags & F_RST:
            s = "seq=abs0" if seq == 0 else "seq=nonzero"
            a = (" ack=%d" % rel(ack, o.isn)) if (flags & F_ACK) and \
                o.isn is not None else ""
            d.events.append("%s %s %s%s" % (who, flag_str(flags), s, a))
        return
    r = rel(seq, d.isn)
    end = r + ln + (1 if flags & F_FIN else 0)
    racks = (" ack=%d" % rel(ack, o.isn)) if (flags & F_ACK) and \
        o.isn is not None else ""
    if flags & F_RST:
        if flags & F_ACK and o.isn is not None:
            d.last_ack = rel(ack, o.isn)
        line = "%s %s seq=%d%s opts=%s" % (who, flag_str(flags), r, racks,
                                           opt_str(opts, False))
        # One RST answers each segment the other side sent before it
        # learnt of the reset: how many is timing, the RST itself is not.
        if not d.events or d.events[-1] != line:
            d.events.append(line)
        else:
            d.rst_dups += 1
        d.rst_sent = True
        return
    if who == "P" and o.rst_sent:
        # The (kernel) peer sent this before the subject's RST reached
        # it: on a veth the kernel world's RST arrives within the peer's
        # own send, the accel world's a few microseconds later.
        d.crossed += 1
        return
    if flags & F_ACK and o.isn is not None:
        d.last_ack = rel(ack, o.isn)
    if end <= d.max_end and (ln > 0 or flags & F_FIN):
        d.rtx += 1
        return
    if ln > 0:
        d.seg_opts.update(k for k, _ in opts if k != 5)
        d.data_end = max(d.data_end, r + ln - 1)
        d.maxseg = max(d.maxseg, ln)
        if flags & F_PSH:
            d.psh.append(r + ln - 1)
    elif not flags & F_FIN:
        d.acks += 1
        return  # (a pure ACK's sequence is snd_nxt, which may be ahead of
        #          data captured after it: it never marks data as sent)
    d.max_end = max(d.max_end, end)
    if flags & F_FIN:
        # (its ack is left out: when both sides close at about the same
        # time, whether the other FIN was in yet is a race)
        d.events.append("%s %s seq=%d opts=%s" % (
            who, flag_str(flags & ~F_PSH), r + ln, opt_str(opts, False)))


def flows_of(pcap, times):
    """Scenario name -> list of Flow (sorted by key, then SYN time)."""
    live = {}   # 4-tuple -> Flow
    out = {n: [] for n, _, _ in times}
    owner = {}  # id(Flow) -> (name, end)
    for t, src, sp, dst, dp, seq, ack, flags, ln, opts in read_pcap(pcap):
        if src in SUBJ:
            who, tup = "S", (src, sp, dst, dp)
        elif dst in SUBJ:
            who, tup = "P", (dst, dp, src, sp)
        else:
            continue
        fl = live.get(tup)
        if flags & F_SYN and not flags & F_ACK and (
                fl is None or fl.d[who].isn not in (None, seq)):
            fl = None
            for name, start, stop in times:
                if start <= t <= stop:
                    if who == "S":
                        key = "connect peer:%d" % dp
                    else:
                        key = "accept subj:%d" % dp
                    fl = Flow(key, t)
                    owner[id(fl)] = (name, stop)
                    out[name].append(fl)
                    break
            if fl is None:
                live.pop(tup, None)
                continue
            live[tup] = fl
        if fl is None:
            continue
        if t > owner[id(fl)][1] + SETTLE:
            fl.late = getattr(fl, "late", 0) + 1
            continue
        add_segment(fl, who, seq, ack, flags, ln, opts)
    return out


def render(flows):
    lines = []
    seen = {}
    for fl in sorted(flows, key=lambda f: (f.key, f.t)):
        k = seen.get(fl.key, 0)
        seen[fl.key] = k + 1
        lines.append("flow %d %s" % (k, fl.key))
        lines.extend(" " + h for h in fl.d["S"].hs + fl.d["P"].hs)
        for who in ("S", "P"):
            d = fl.d[who]
            if d.isn is not None:
                total = d.data_end
                # The peer is Linux answering the subject: where it pushes
                # follows how the subject's segments arrived (the echo
                # peer's reads), so only its last PSH is compared.
                if total <= PSH_EXACT and who == "S":
                    psh = ",".join(str(x) for x in d.psh)
                else:
                    psh = "..." + (str(total) if d.psh and d.psh[-1] == total
                                   else "none-at-end")
                # The largest segment is the MSS in use once the direction
                # carried enough to fill segments.
                seg = (" maxseg=%d" % d.maxseg) if total >= 2 * d.maxseg \
                    else ""
                if total:
                    lines.append(" %s data=%d%s psh=[%s] opts=%s" % (
                        who, total, seg, psh,
                        ",".join(OPT_NAMES.get(x, str(x))
                                 for x in sorted(d.seg_opts)) or "-"))
            # Once the subject reset the flow, whether the peer's FIN left
            # before that RST reached it, and what it last acknowledged,
            # is timing: kept as notes.
            racy = who == "P" and fl.d["S"].rst_sent
            for e in d.events:
                lines.append(("#" if racy and " FIN" in e else " ") + e)
            if d.last_ack is not None:
                lines.append("%s%s lastack=%d" % ("#" if racy else " ", who,
                                                   d.last_ack))
            lines.append("# %s pure_acks=%d rtx=%d late=%d rst_dups=%d "
                         "crossed=%d" % (who, d.acks, d.rtx,
                                         getattr(fl, "late", 0), d.rst_dups,
                                         d.crossed))
    return lines


def cmd_view(pcap, times_path, outdir):
    times = []
    with open(times_path) as f:
        for line in f:
            p = line.split()
            if len(p) == 3:
                times.append((p[0], float(p[1]), float(p[2])))
    os.makedirs(outdir, exist_ok=True)
    for name, flows in flows_of(pcap, times).items():
        with open(os.path.join(outdir, name + ".wire"), "w") as f:
            for line in render(flows):
                f.write(line + "\n")


def load_allow(path):
    """scenario-or-*  /regex/  reason"""
    rules = []
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                m = re.match(r"(\S+)\s+/(.*?)/\s+(.*)", line)
                if m:
                    rules.append((m.group(1), re.compile(m.group(2)),
                                  m.group(3)))
    return rules


def cmd_compare(a, b, outdir, allow_path, names, strict):
    rules = [] if strict else load_allow(allow_path)
    os.makedirs(outdir, exist_ok=True)
    bad = npass = nallow = nfail = 0
    for n in names:
        fa, fb = (os.path.join(x, n + ".wire") for x in (a, b))
        if not (os.path.exists(fa) and os.path.exists(fb)):
            print("WIRE-FAIL %s: no wire view (capture missing)" % n)
            nfail += 1
            bad = 1
            continue
        la = [x.rstrip("\n") for x in open(fa) if not x.startswith("#")]
        lb = [x.rstrip("\n") for x in open(fb) if not x.startswith("#")]
        diff = list(difflib.unified_diff(la, lb, "%s/%s" % (
            os.path.basename(a), n), "%s/%s" % (os.path.basename(b), n),
            lineterm="", n=2))
        dpath = os.path.join(outdir, n + ".wirediff")
        if not diff:
            if os.path.exists(dpath):
                os.remove(dpath)
            npass += 1
            continue
        with open(dpath, "w") as f:
            f.write("\n".join(diff) + "\n")
        changed = [x[1:] for x in diff[2:] if x[:1] in "+-"]
        why = set()
        left = []
        for c in changed:
            for scen, rx, reason in rules:
                if (scen == "*" or scen == n) and rx.search(c):
                    why.add(reason)
                    break
            else:
                left.append(c)
        if not left:
            print("WIRE-ALLOWED %s: %s" % (n, "; ".join(sorted(why))))
            nallow += 1
            continue
        print("WIRE-FAIL %s (diff: %s)" % (n, dpath))
        for x in diff[2:40]:
            print("    " + x)
        nfail += 1
        bad = 1
    print("wire %s vs %s: %d pass, %d allowed, %d fail of %d" % (
        os.path.basename(a), os.path.basename(b), npass, nallow, nfail,
        len(names)))
    return bad


def main(argv):
    if len(argv) == 4 and argv[0] == "view":
        cmd_view(*argv[1:])
        return 0
    if len(argv) >= 5 and argv[0] in ("compare", "compare-strict"):
        return cmd_compare(argv[1], argv[2], argv[3], argv[4], argv[5:],
                           argv[0] == "compare-strict")
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
