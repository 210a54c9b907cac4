#!/usr/bin/python3
"""Send malformed and odd frames at the accelerated stack (robustness test).

usage: malformed_frames.py IFACE DST_MAC DST_IP SRC_IP TCP_PORT FLOOD SEED

Sends, from IFACE (the kernel peer's veth), a fixed list of broken frames
(truncated Ethernet/IP/TCP/UDP/ICMP/ARP headers, bad checksums, IP total
length larger and smaller than the frame, bad IHL and version, TCP data
offset too small and too large, odd TCP flag combinations, bogus TCP and IP
options, UDP length mismatches, fragments: lone, overlapping, beyond 64 KB,
LAND, broadcast sources), then FLOOD random frames (seeded with SEED: fuzzed
IPv4/TCP/UDP/ICMP headers and random bytes behind our Ethernet header).
Prints how many frames were sent and how many the kernel refused to send
(too short or too long for the veth); exits 0 unless nothing could be sent.
"""
import random
import sys

from scapy.all import ARP, ICMP, IP, TCP, UDP, Ether, Raw, conf, fuzz  # noqa: E402
from scapy.layers.l2 import Dot1Q


def fixed_frames(eth, dip, sip, port):
    """The named malformed cases: (name, bytes)."""
    ip = IP(src=sip, dst=dip)
    syn = TCP(sport=40000, dport=port, flags="S", seq=1000)
    cases = []

    def add(name, pkt):
        cases.append((name, bytes(pkt)))

    # Truncated headers.
    cases.append(("ethernet header only 10 bytes", bytes(eth)[:10]))
    add("ethernet header, no payload", eth)
    add("ip header truncated to 12 bytes", Raw(bytes(eth / ip / syn)[:14 + 12]))
    add("tcp header truncated to 10 bytes", Raw(bytes(eth / ip / syn)[:14 + 20 + 10]))
    add("udp header truncated to 4 bytes",
        Raw(bytes(eth / ip / UDP(sport=1, dport=9))[:14 + 20 + 4]))
    add("icmp header truncated to 2 bytes", Raw(bytes(eth / ip / ICMP())[:14 + 20 + 2]))
    add("arp truncated", Raw(bytes(eth.copy() / ARP(pdst=dip))[:14 + 10]))
    # Checksums.
    add("bad ip checksum", eth / IP(src=sip, dst=dip, chksum=0x1234) / syn)
    add("bad tcp checksum", eth / ip / TCP(sport=40001, dport=port, flags="S", chksum=0xDEAD))
    add("bad udp checksum", eth / ip / UDP(sport=40002, dport=9, chksum=0xBEEF) / (b"x" * 20))
    add("bad icmp checksum", eth / ip / ICMP(chksum=0x0BAD) / (b"p" * 32))
    # IP lengths, IHL, version.
    add("ip total length > frame", eth / IP(src=sip, dst=dip, len=1400) / syn)
    add("ip total length < ip header", eth / IP(src=sip, dst=dip, len=10) / syn)
    add("ip total length < tcp header", eth / IP(src=sip, dst=dip, len=30) / syn)
    add("ip total length 0", eth / IP(src=sip, dst=dip, len=0) / syn)
    add("ip total length < payload (trailing bytes)",
        eth / IP(src=sip, dst=dip, len=40) / TCP(sport=40003, dport=port, flags="PA") /
        (b"d" * 200))
    add("ihl 2", eth / IP(src=sip, dst=dip, ihl=2) / syn)
    add("ihl 15 on a short packet", eth / IP(src=sip, dst=dip, ihl=15) / syn)
    add("ip version 6 in an ipv4 frame", eth / IP(src=sip, dst=dip, version=6) / syn)
    add("ip version 0", eth / IP(src=sip, dst=dip, version=0) / syn)
    add("garbage ip options",
        eth / IP(src=sip, dst=dip, options=[b"\x07\x27" + b"\xff" * 30]) / syn)
    add("ip option length 0", eth / IP(src=sip, dst=dip, options=[b"\x44\x00\x00\x00"]) / syn)
    add("ttl 0", eth / IP(src=sip, dst=dip, ttl=0) / syn)
    add("unknown ip protocol 253", eth / IP(src=sip, dst=dip, proto=253) / (b"z" * 40))
    # TCP header fields.
    add("tcp data offset 2", eth / ip / TCP(sport=40004, dport=port, flags="S", dataofs=2))
    add("tcp data offset 15 > segment", eth / ip / TCP(sport=40005, dport=port, flags="S",
                                                      dataofs=15))
    for flags in ("SF", "SR", "FSRPAUEC", "", "F", "R", "U", "SA", "FPU", "SRPA"):
        add("tcp flags '%s' to the open port" % flags,
            eth / ip / TCP(sport=40010 + len(flags), dport=port, flags=flags, seq=5, ack=7,
                           urgptr=3) / b"data")
        add("tcp flags '%s' to a closed port" % flags,
            eth / ip / TCP(sport=40030 + len(flags), dport=1, flags=flags))
    add("syn with zero window", eth / ip / TCP(sport=40050, dport=port, flags="S", window=0))
    add("syn with payload", eth / ip / TCP(sport=40051, dport=port, flags="S") / (b"s" * 500))
    add("tcp option length 0", eth / ip / TCP(sport=40052, dport=port, flags="S",
                                              options=[(2, b"")]) / Raw())
    add("tcp option length past the header",
        Raw(bytes(eth / ip / TCP(sport=40053, dport=port, flags="S", dataofs=6)) + b"\x02\x28\x05"))
    add("tcp mss 0 and wscale 200",
        eth / ip / TCP(sport=40054, dport=port, flags="S", options=[("MSS", 0), ("WScale", 200)]))
    add("tcp bogus sack and unknown option",
        eth / ip / TCP(sport=40055, dport=port, flags="S",
                       options=[(5, b"\x00" * 6), (99, b"\xaa" * 10), ("Timestamp", (0, 0))]))
    add("tcp option list without end",
        eth / ip / TCP(sport=40056, dport=port, flags="S", options=[(3, b"")] * 9))
    # UDP lengths.
    add("udp length > datagram", eth / ip / UDP(sport=40060, dport=9, len=200) / (b"u" * 10))
    add("udp length 4 (< header)", eth / ip / UDP(sport=40061, dport=9, len=4) / (b"u" * 10))
    add("udp length < datagram", eth / ip / UDP(sport=40062, dport=9, len=12) / (b"u" * 100))
    add("udp length 0", eth / ip / UDP(sport=40063, dport=9, len=0) / (b"u" * 10))
    # Fragments.
    big = bytes(UDP(sport=40070, dport=9) / (b"f" * 3000))
    add("lone first fragment", eth / IP(src=sip, dst=dip, id=77, flags="MF", proto=17) / big[:1480])
    add("lone last fragment", eth / IP(src=sip, dst=dip, id=78, frag=185, proto=17) / big[1480:2960])
    add("overlapping fragment a", eth / IP(src=sip, dst=dip, id=79, flags="MF", proto=17) / big[:800])
    add("overlapping fragment b", eth / IP(src=sip, dst=dip, id=79, frag=50, proto=17) / big[400:1200])
    add("fragment beyond 64 KB", eth / IP(src=sip, dst=dip, id=80, frag=8190, proto=17) / (b"x" * 200))
    add("tiny tcp fragment (8 bytes)",
        eth / IP(src=sip, dst=dip, id=81, flags="MF", proto=6) / bytes(syn)[:8])
    add("fragment with offset 0 twice", eth / IP(src=sip, dst=dip, id=82, flags="MF", proto=17) / big[:8])
    # Odd addresses and other protocols.
    add("land (src = dst, same ports)",
        eth / IP(src=dip, dst=dip) / TCP(sport=port, dport=port, flags="S"))
    add("broadcast source", eth / IP(src="255.255.255.255", dst=dip) / syn)
    add("source 0.0.0.0", eth / IP(src="0.0.0.0", dst=dip) / syn)
    add("icmp echo to broadcast", eth / IP(src=sip, dst="255.255.255.255") / ICMP())
    add("icmp unreachable quoting garbage",
        eth / ip / ICMP(type=3, code=3) / (b"\x45" + b"\x00" * 30))
    add("icmp echo 0 bytes", eth / ip / ICMP())
    add("arp opcode 99", eth / ARP(op=99, pdst=dip))
    add("arp hwlen 0 plen 200", eth / ARP(hwlen=0, plen=200, pdst=dip))
    add("arp for another ip", eth / ARP(op=1, pdst="10.200.0.99"))
    add("vlan tagged ipv4", eth / Dot1Q(vlan=5) / ip / syn)
    add("ipv6 ethertype garbage", Raw(bytes(eth)[:12] + b"\x86\xdd" + b"\x60" + b"\x00" * 50))
    add("ethertype 0x1234", Raw(bytes(eth)[:12] + b"\x12\x34" + b"q" * 60))
    return cases


def flood_frames(eth, dip, sip, port, count, rng):
    """count random frames, reproducible from rng."""
    base = bytes(eth)[:12]
    for i in range(count):
        kind = i % 5
        if kind == 0:
            pkt = eth / fuzz(IP(src=sip, dst=dip) / TCP(dport=port))
        elif kind == 1:
            pkt = eth / fuzz(IP(src=sip, dst=dip) / UDP())
        elif kind == 2:
            pkt = eth / IP(src=sip, dst=dip) / fuzz(TCP(dport=port))
        elif kind == 3:
            pkt = eth / fuzz(IP(src=sip, dst=dip, proto=1) / ICMP())
        else:
            n = rng.randint(0, 1500)
            yield base + b"\x08\x00" + bytes(rng.getrandbits(8) for _ in range(n))
            continue
        yield bytes(pkt)


def main():
    if len(sys.argv) != 8:
        print(__doc__, file=sys.stderr)
        return 2
    iface, dmac, dip, sip, port, flood, seed = sys.argv[1:]
    port, flood, seed = int(port), int(flood), int(seed)
    random.seed(seed)  # scapy's fuzz() uses the random module
    rng = random.Random(seed)
    conf.verb = 0
    sock = conf.L2socket(iface=iface)
    with open("/sys/class/net/%s/address" % iface) as f:
        eth = Ether(dst=dmac, src=f.read().strip())
    sent = refused = 0
    for name, frame in fixed_frames(eth, dip, sip, port):
        try:
            sock.send(frame)
            sent += 1
        except OSError as e:
            refused += 1
            print("refused by the kernel: %s (%s)" % (name, e))
    print("fixed cases: %d sent, %d refused" % (sent, refused), flush=True)
    fsent = frefused = 0
    for frame in flood_frames(eth, dip, sip, port, flood, rng):
        try:
            sock.send(frame)
            fsent += 1
        except OSError:
            frefused += 1
    print("flood (seed %d): %d sent, %d refused" % (seed, fsent, frefused), flush=True)
    sock.close()
    return 0 if sent + fsent > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
