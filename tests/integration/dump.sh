#!/bin/bash
# Scenario: accel-dump captures what a running accelerated process's stack
# receives and sends (the capture ring of its live state region,
# base/statreg_cap.c; tools/accel-dump/). Stock nginx (one process) under
# accel-run serves a 2 MB file. Checks:
#   - `accel-dump -w FILE PID 'tcp port 80'` during a download by the
#     kernel peer: tcpdump reads the file, and the server-to-client TCP
#     payload reassembled from it (scapy) is the HTTP response whose body
#     is the file, byte for byte (sha256); the filter kept only port 80;
#   - pcapng (a .pcapng name): a TCP segment with a bad checksum sent by
#     the peer (scapy) is in the capture, marked with the stack's drop
#     ("accel: dropped by the stack"), and the stack's rx_drop_stack moved;
#   - without -w, `-c 4` prints 4 lines as tcpdump prints them and stops;
#   - a slow reader (`-w -` into a pipe read 3 s late) during a 40 MB
#     download: the download is complete and intact, accel-dump reports
#     frames dropped by the ring, and the data path dropped nothing
#     (tx_drop_* of accel-stat -a stay 0);
#   - a second accel-dump on the same process is refused while one runs;
#     after accel-dump exits the process stops copying (cap_on is 0);
#   - a SYN the runtime drops before the stack because no process of a
#     fork family serves its listener is captured, marked with that
#     reason.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
DUMP=$(dirname "$ACCEL_RUN")/accel-dump
STAT=$(dirname "$ACCEL_RUN")/accel-stat
[[ -x $DUMP ]] || fail "accel-dump not found next to $ACCEL_RUN"
PY=/usr/bin/python3
# counter PID NAME: a counter of the process, from accel-stat --json
counter() {
    "$STAT" --json "$1" | "$PY" -c 'import json, sys
print(json.load(sys.stdin)["processes"][0]["counters"][sys.argv[1]])' "$2"
}

mkdir -p "$T/www"
mkfile "$T/www/f.bin" 2000000
mkfile "$T/www/big.bin" 40000000
nginx_conf "$T/n.conf" "$AIP:80" "$T/www" off
bg_start nginx AX nginx -c "$T/n.conf" -p "$T" -e "$T/n.error.log"
wait_tcp K "$AIP" 80 || fail "accelerated nginx does not answer on $AIP:80"
NPID=$(bg_pid nginx)
slowwait 10 test -e "/dev/shm/accel-stat-$NPID" || fail "no live state region for nginx"

# dump_start NAME ARGS...: accel-dump in the background, stderr to
# $T/NAME.err; waits until the process copies frames (a snapshot interval).
dump_start() {
    local name=$1
    shift
    "$DUMP" "$@" 2>"$T/$name.err" &
    DPID=$!
    slowwait 10 grep -q "capturing" "$T/$name.err" ||
        fail "$name: accel-dump did not start: $(cat "$T/$name.err")"
    sleep 0.6
}
dump_stop() {
    kill -INT "$DPID" 2>/dev/null
    slowwait 10 dead "$DPID" || fail "accel-dump did not stop on SIGINT"
    wait "$DPID" 2>/dev/null
}

# --- a transfer, byte for byte ------------------------------------------------
dump_start d1 -w "$T/cap.pcap" "$NPID" tcp port 80
"$DUMP" -w "$T/second.pcap" "$NPID" 2>"$T/second.err"
check_eq "a second accel-dump on the same process: exit 1" "$?" 1
check "... saying who captures" grep -q "captured by accel-dump $DPID" "$T/second.err"
K ip neigh flush dev "$VETH_K" 2>/dev/null
K curl -s -o "$T/got.bin" "http://$AIP/f.bin" || fail "curl failed"
check_eq "the download is intact" "$(sha "$T/got.bin")" "$(sha "$T/www/f.bin")"
sleep 0.3
dump_stop
check "accel-dump's summary counts frames" grep -Eq "^[1-9][0-9]* frames captured" "$T/d1.err"
check "tcpdump reads the capture" eval "tcpdump -nr '$T/cap.pcap' 2>/dev/null | grep -q '$AIP.80 > $KIP'"
check_not "the filter kept only port 80 (no ARP)" \
    eval "tcpdump -nr '$T/cap.pcap' 2>/dev/null | grep -q ARP"
check "the response's body in the capture is the file, byte for byte" "$PY" - \
    "$T/cap.pcap" "$T/www/f.bin" "$AIP" <<'EOF'
import hashlib, sys
from scapy.all import IP, TCP, rdpcap
pkts, want, srv = rdpcap(sys.argv[1]), open(sys.argv[2], "rb").read(), sys.argv[3]
segs, isn = {}, None
for p in pkts:
    if IP in p and TCP in p and p[IP].src == srv and p[TCP].sport == 80:
        if p[TCP].flags & 0x02:
            isn = p[TCP].seq + 1
        if len(p[TCP].payload):
            segs[p[TCP].seq] = bytes(p[TCP].payload)
assert isn is not None, "no SYN-ACK in the capture"
stream, at = bytearray(), isn
while at in segs:
    stream += segs[at]
    at += len(segs[at])
head, sep, body = bytes(stream).partition(b"\r\n\r\n")
assert sep and head.startswith(b"HTTP/1.1 200"), head[:80]
assert hashlib.sha256(body).digest() == hashlib.sha256(want).digest(), \
    "body %d bytes, file %d" % (len(body), len(want))
EOF

# --- pcapng with a frame the stack dropped -------------------------------------
d0=$(counter "$NPID" rx_drop_stack)
dump_start d2 -w "$T/cap.pcapng" "$NPID"
K "$PY" -c "
from scapy.all import IP, TCP, send
send(IP(dst='$AIP')/TCP(dport=80, sport=40000, flags='S', chksum=0x1234), verbose=0)"
sleep 0.3
dump_stop
d1=$(counter "$NPID" rx_drop_stack)
check_ge "the stack dropped the bad segment (rx_drop_stack)" "$((d1 - d0))" 1
check "the pcapng marks it: accel: dropped by the stack" grep -aq "accel: dropped by the stack" "$T/cap.pcapng"
check "tcpdump reads the pcapng, the segment is in it" \
    eval "tcpdump -nr '$T/cap.pcapng' 2>/dev/null | grep -q '$KIP.40000 > $AIP.80'"
check "the summary counts a marked frame" grep -Eq "^[1-9][0-9]* frames? the stack dropped" "$T/d2.err"

# --- printed as tcpdump prints, -c ---------------------------------------------
(sleep 1; K curl -s -o /dev/null "http://$AIP/f.bin") &
CURL=$!
timeout 20 "$DUMP" -c 4 "$NPID" >"$T/lines.txt" 2>"$T/d3.err"
check_eq "accel-dump -c 4 stops by itself" "$?" 0
check_eq "... after 4 lines" "$(grep -c . "$T/lines.txt")" 4
check "... as tcpdump prints them" grep -Eq "^[0-9:.]+ IP $KIP\.[0-9]+ > $AIP\.80: Flags \[S\]" "$T/lines.txt"
wait "$CURL"

# --- a slow reader: the ring drops, the data path does not --------------------------
"$DUMP" -w - "$NPID" 2>"$T/d4.err" | { sleep 3; cat >/dev/null; } &
PIPE=$!
slowwait 10 grep -q "capturing" "$T/d4.err" || fail "accel-dump -w - did not start"
sleep 0.6
DPID=$(pgrep -f "accel-dump -w - $NPID" | head -1)
K curl -s -o "$T/big.bin" "http://$AIP/big.bin" || fail "curl of 40 MB failed"
check_eq "the 40 MB download under a slow capture is intact" "$(sha "$T/big.bin")" "$(sha "$T/www/big.bin")"
sleep 3.5
[[ -n $DPID ]] && kill -INT "$DPID" 2>/dev/null
wait "$PIPE"
check "accel-dump reports frames dropped by the ring" \
    grep -Eq "^[1-9][0-9]* frames dropped by the ring" "$T/d4.err"
for c in tx_drop_nombuf tx_drop_full rx_drop_nobuf; do
    check_eq "the data path dropped nothing: $c" "$(counter "$NPID" $c)" 0
done
# cap_on: offset 768 of the header (base/statreg_layout.h, version 1)
check_eq "after accel-dump, the process copies nothing (cap_on 0)" \
    "$("$PY" -c "
import struct
b = open('/dev/shm/accel-stat-$NPID', 'rb').read(1024)
print(struct.unpack_from('<I', b, 768)[0])")" 0
bg_stop nginx

# --- a frame dropped before the stack, for another process of the family -------
# A listener shared by fork, in neither process accepting: the runtime has
# nobody to give a SYN to and drops it (share_drop_noserver). Whichever
# process polls the port drops it: both are captured.
bg_start fam AX "$PY" -c '
import os, socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 8081))
s.listen(8)
if os.fork() == 0:
    s.getsockname()  # a call on the stack: the child is of the family
    time.sleep(60)
    os._exit(0)
print("ready", flush=True)
time.sleep(60)'
wait_line "$T/fam.out" ready 20 || fail "the forked listener did not start"
FPARENT=$(bg_pid fam)
FCHILD=$(pgrep -P "$FPARENT" | head -1)
slowwait 10 test -e "/dev/shm/accel-stat-$FCHILD" || fail "no region for the child"
"$DUMP" -w "$T/fam-p.pcapng" "$FPARENT" 2>"$T/fam-p.err" &
FD1=$!
"$DUMP" -w "$T/fam-c.pcapng" "$FCHILD" 2>"$T/fam-c.err" &
FD2=$!
slowwait 10 grep -q capturing "$T/fam-p.err" || fail "accel-dump (parent) did not start"
slowwait 10 grep -q capturing "$T/fam-c.err" || fail "accel-dump (child) did not start"
sleep 0.6
K curl -s -o /dev/null --max-time 2 "http://$AIP:8081/"
kill -INT "$FD1" "$FD2" 2>/dev/null
wait "$FD1" "$FD2" 2>/dev/null
nd=$(($(counter "$FPARENT" share_drop_noserver) + $(counter "$FCHILD" share_drop_noserver)))
check_ge "the family dropped the SYN (share_drop_noserver)" "$nd" 1
check "the capture has it, marked: for another process of the family" \
    grep -aq "accel: dropped before the stack: for another process of the family" \
    "$T/fam-p.pcapng" "$T/fam-c.pcapng"
bg_stop fam
finish
