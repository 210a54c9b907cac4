#!/usr/bin/python3
"""Turn a capture into fuzz_frames inputs (tests/fuzz/fuzz_frames.c).

usage: pcap2seed.py CAPTURE.pcap OUTDIR [PEER_IP]
       pcap2seed.py --malformed OUTDIR

Takes the frames the peer (PEER_IP, default 10.200.0.1: the lab's kernel
side, tests/fuzz/capture.sh) sent to the stack and writes one input per
conversation (a TCP connection, the UDP datagrams to a port, ICMP echoes,
ARP and neighbour discovery), each frame behind fuzz_frames' 4-byte
header: its length, flags and the time since the previous frame.
Every frame gets FIX (checksums: a veth capture leaves them to the
offload) and READDR (the lab's addresses become the harness's). TCP:
a connection the peer opened keeps its SYN, to port 80 (the harness's
listener), and its other segments, like those of a connection the stack
opened, are CONN: aimed at the harness's established connection of the
same family, seq and ack as offsets from where the capture's own
conversation stood (0 for in-order data and an up-to-date ack).

--malformed: the named broken frames of tests/lib/malformed_frames.py
(truncated headers, bad lengths and checksums, odd flags, fragments),
addressed to the harness's stack and kept as they are (no flags), one
input with all of them.
"""
import os
import struct
import sys

FIX, READDR, CONN = 0x01, 0x02, 0x04
MAX_SEED = 16384  # bytes per input


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        endian = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        endian = ">"
    else:
        sys.exit("pcap2seed: %s is not a pcap file (pcapng: convert with "
                 "editcap -F pcap)" % path)
    nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        yield sec + frac / (1e9 if nano else 1e6), data[off:off + incl]
        off += incl


def ip_of(s):
    return bytes(int(x) for x in s.split("."))


def malformed(out):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "lib"))
    from malformed_frames import fixed_frames  # noqa: E402 (scapy)
    from scapy.all import Ether

    eth = Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
    seed = bytearray()
    for _, f in fixed_frames(eth, "10.0.0.2", "10.0.0.1", 80):
        seed += struct.pack(">HBB", len(f), 0, 1) + f
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "malformed"), "wb") as w:
        w.write(seed)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--malformed":
        return malformed(sys.argv[2])
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    peer_ip = ip_of(sys.argv[3] if len(sys.argv) > 3 else "10.200.0.1")
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    all_frames = list(frames(sys.argv[1]))
    # The peer's MAC: the source of its IPv4 frames.
    peer_mac = None
    for _, f in all_frames:
        if len(f) >= 34 and f[12:14] == b"\x08\x00" and f[26:30] == peer_ip:
            peer_mac = f[6:12]
            break
        if len(f) >= 42 and f[12:14] == b"\x08\x06" and f[28:32] == peer_ip:
            peer_mac = f[6:12]
            break
    if peer_mac is None:
        sys.exit("pcap2seed: no frame from %s" % sys.argv[3:4])
    convs = {}   # key -> list of (time, flags, frame)
    state = {}   # TCP conversation -> [peer next seq, stack next seq]
    servers = set()  # TCP conversations the peer opened
    for t, f in all_frames:
        if len(f) < 14:
            continue
        from_peer = f[6:12] == peer_mac
        et = f[12:14]
        flags = FIX | READDR
        key = ("other", et)
        l4 = None
        if et == b"\x08\x00" and len(f) >= 34:
            ihl = (f[14] & 0xF) * 4
            proto = f[23]
            l4 = (False, proto, 14 + ihl)
        elif et == b"\x86\xdd" and len(f) >= 54:
            l4 = (True, f[20], 54)
        elif et == b"\x08\x06":
            key = ("arp",)
        if l4 is not None:
            v6, proto, o = l4
            if proto == 6 and len(f) >= o + 20:
                sp, dp = struct.unpack(">HH", f[o:o + 4])
                peer_port, stack_port = (sp, dp) if from_peer else (dp, sp)
                key = ("tcp", v6, peer_port, stack_port)
                seq, ack = struct.unpack(">II", f[o + 4:o + 12])
                tf = f[o + 13]
                hl = (f[o + 12] >> 4) * 4
                plen = len(f) - o - hl
                if v6:
                    plen = struct.unpack(">H", f[18:20])[0] - hl
                else:
                    plen = struct.unpack(">H", f[16:18])[0] - (o - 14) - hl
                end = seq + max(plen, 0) + (1 if tf & 0x03 else 0)
                st = state.setdefault(key, [None, None])
                if not from_peer:
                    if st[1] is None or (end - st[1]) & 0x80000000 == 0:
                        st[1] = end & 0xFFFFFFFF
                    continue
                if tf & 0x02 and not tf & 0x10:
                    servers.add(key)
                    f = bytearray(f)
                    f[o + 2:o + 4] = struct.pack(">H", 80)
                    st[0] = end & 0xFFFFFFFF
                else:
                    f = bytearray(f)
                    base_seq = st[0] if st[0] is not None else seq
                    base_ack = st[1] if st[1] is not None else ack
                    f[o + 4:o + 12] = struct.pack(
                        ">II", (seq - base_seq) & 0xFFFFFFFF,
                        (ack - base_ack) & 0xFFFFFFFF)
                    if st[0] is None or (end - st[0]) & 0x80000000 == 0:
                        st[0] = end & 0xFFFFFFFF
                    flags |= CONN
            elif proto == 17 and len(f) >= o + 8:
                key = ("udp", v6)
            elif proto in (1, 58):
                key = ("icmp", v6, f[o] if len(f) > o else 0)
        if not from_peer:
            continue
        convs.setdefault(key, []).append((t, flags, bytes(f)))
    n = 0
    for key, fl in convs.items():
        seed = bytearray()
        last = fl[0][0]
        for t, flags, f in fl:
            dms = int((t - last) * 1000)
            dt = dms if dms < 200 else min(255, 199 + (dms + 999) // 1000)
            last = t
            rec = struct.pack(">HBB", len(f), flags, dt) + f
            if len(seed) + len(rec) > MAX_SEED:
                break
            seed += rec
        name = "cap-" + "-".join(str(k) for k in key).replace(" ", "")
        name = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
        with open(os.path.join(out, name), "wb") as w:
            w.write(seed)
        n += 1
    print("pcap2seed: %d inputs from %d frames into %s"
          % (n, len(all_frames), out), file=sys.stderr)


if __name__ == "__main__":
    main()
