#!/bin/bash
# Capture lab traffic for the frame fuzzer's seed corpus (not a test; run
# by hand, as root, with a private lab tag):
#   ACCEL_LAB_TAG=h1 IT_ACCEL_RUN=build/tools/accel-run \
#     ACCEL_LIBRARY=build/preload/libaccel.so \
#     IT_ACCEL_LAB=tools/accel-lab tests/fuzz/capture.sh OUT.pcap
# On the kernel peer's veth: accelerated curl fetching pages from a
# kernel nginx over IPv4 and IPv6 (handshakes, data both ways, FINs, ARP
# and neighbour discovery), a kernel curl fetching from an accelerated
# nginx (the stack's passive open), a refused port (RST), UDP datagrams
# both ways, and ICMP/ICMPv6 echoes. tests/fuzz/pcap2seed.py turns the
# capture into fuzz_frames inputs.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

OUT=$(readlink -f "${1:?usage: capture.sh OUT.pcap}")
lab_up
mkdir -p "$T/www"
head -c 20000 /dev/urandom | base64 >"$T/www/page.html"
echo "small page" >"$T/www/small.html"
nginx_conf "$T/k.conf" "$KIP:80" "$T/www"
sed -i "s|listen $KIP:80;|listen $KIP:80; listen [$KIP6]:80;|" "$T/k.conf"
bg_start knginx K nginx -c "$T/k.conf" -p "$T" -e "$T/k.error.log"
wait_tcp K "$KIP" 80 || fail "kernel nginx did not start"
nginx_conf "$T/a.conf" "8080" "$T/www"
sed -i "s|listen 8080;|listen 8080; listen [::]:8080;|" "$T/a.conf"
bg_start anginx AX nginx -c "$T/a.conf" -p "$T" -e "$T/a.error.log"
wait_tcp K "$AIP" 8080 || fail "accelerated nginx did not start"
bg_start udpecho AX socat UDP6-RECVFROM:5000,fork,ipv6only=0 EXEC:cat
sleep 1

bg_start tcpdump K tcpdump -i "$VETH_K" -s 0 -U -w "$OUT"
sleep 1
AX curl -sS -m 10 -o /dev/null "http://$KIP/small.html"
AX curl -sS -m 10 -o /dev/null "http://$KIP/page.html"
AX curl -sS -m 10 -g -o /dev/null "http://[$KIP6]/page.html"
AX curl -sS -m 10 -o /dev/null -d @"$T/www/small.html" "http://$KIP/small.html"
K curl -sS -m 10 -o /dev/null "http://$AIP:8080/page.html"
K curl -sS -m 10 -g -o /dev/null "http://[$AIP6]:8080/small.html"
K curl -sS -m 5 -o /dev/null "http://$AIP:8081/" 2>/dev/null
K bash -c "echo hello4 | socat -T1 - UDP4:$AIP:5000"
K bash -c "echo hello6 | socat -T1 - UDP6:[$AIP6]:5000"
K ping -c 2 -i 0.2 -s 100 "$AIP" >/dev/null
K ping -6 -c 2 -i 0.2 "$AIP6" >/dev/null
sleep 1
bg_stop tcpdump
log "captured $(stat -c %s "$OUT") bytes into $OUT"
finish
