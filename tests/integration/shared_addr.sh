#!/bin/bash
# Scenario: the stack shares the interface's own addresses with the kernel
# (runtime/xdpsteer4.c, runtime/xdp/steer.bpf.c with accel_shared). For
# this test the accelerated veth gets the kernel addresses 10.200.0.2/24
# and fd00:200::2/64, the stack's usual ones: one address per family, held
# by both, as on a server with one NIC address. The accelerated programs
# run with ACCEL_IP and ACCEL_IP6 unset, so the stack takes the
# interface's addresses itself. An nftables rule in the
# accelerated netns drops TCP port 80 for the kernel: whatever reaches
# port 80 and is answered went through the stack (XDP runs before
# netfilter), and the kernel side of nginx's listener (every accelerated
# listener keeps a kernel socket) cannot be what answers.
# Checks, from the peer netns:
#   - accelerated stock nginx (one process) on 10.200.0.2:80 and
#     [fd00:200::2]:80 answers (a small page on each, 5 MB with sha256, 50
#     requests in turn), and its ACCEL_STATS count the accepts;
#   - the kernel keeps the rest of the address: a kernel HTTP server on
#     10.200.0.2:8081 and [fd00:200::2]:8081 answers, the kernel answers
#     ping and ping -6, after the peer's neighbour caches were flushed (ARP
#     and neighbour discovery are the kernel's);
#   - the ports: while nginx runs, a kernel program binding 10.200.0.2:80
#     or 0.0.0.0:80 gets EADDRINUSE (the kernel socket of the accelerated
#     listener holds the port); the port of an accelerated connection the
#     process closed first (TIME-WAIT in the stack) stays held while the
#     process lives, and is free once it exits;
#   - active opens from the shared address: an accelerated curl in the
#     netns fetches from the peer's kernel server (the SYN-ACK reaches the
#     stack through the 4-tuple map, the ARP reply for the peer through
#     the pending-request map), 20 times with the peer's ARP entry and the
#     netns's flushed in between, while a kernel curl from the same netns
#     also works; its stats count tcp_connect; the same over IPv6 to the
#     peer's fd00:200::1 (neighbour solicitations, 4-tuple map for IPv6);
#   - UDP: an accelerated socat echo on 10.200.0.2:5353 answers a kernel
#     client, while a kernel UDP echo on port 5354 of the same address
#     answers too;
#   - after nginx exits, port 80 is the kernel's again: a kernel server
#     binds it and answers (with the drop rule removed); the steering
#     program stays attached (ACCEL_XDP_KEEP) and the next accelerated
#     process reuses it, its map emptied first: the port of a listener
#     killed with SIGKILL is the kernel's while that process runs.
# The check that the test can fail: with ACCEL_XDP_STEER=0 the stack
# refuses the shared address (the kernel's traffic would be taken) and
# nginx serves on the kernel, which the drop rule then blocks.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up

nft_rules() {
    A nft -f - <<'NFT'
table inet accel_shared_test {
    chain input {
        type filter hook input priority 0; policy accept;
        tcp dport 80 drop
    }
}
NFT
}
v6_sysctl="net.ipv6.conf.$VETH_A.disable_ipv6"
cleanup_shared() {
    A nft delete table inet accel_shared_test 2>/dev/null
    A ip addr del "$AIP/24" dev "$VETH_A" 2>/dev/null
    A ip -6 addr del "$AIP6/64" dev "$VETH_A" 2>/dev/null
    A sysctl -qw "$v6_sysctl=1"
}
# The lab's accelerated veth has no kernel address (later tests rely on
# it): the addresses and IPv6 go at the end.
trap 'rc=$?; cleanup_shared; (exit $rc); cleanup' EXIT
A ip addr add "$AIP/24" dev "$VETH_A" || fail "cannot add $AIP to $VETH_A"
A sysctl -qw "$v6_sysctl=0" || fail "cannot enable IPv6 on $VETH_A"
A ip -6 addr add "$AIP6/64" dev "$VETH_A" nodad || fail "cannot add $AIP6 to $VETH_A"
A ip link set lo up
nft_rules || fail "cannot load the nftables rule"

mkdir -p "$T/www" "$T/kwww"
mkfile "$T/www/big" $((5 * 1024 * 1024))
echo "kernel" >"$T/kwww/who"
echo "peer" >"$T/kwww/peer"
bg_start ksrv A "$PY" -m http.server --bind "$AIP" --directory "$T/kwww" 8081
bg_start ksrv6 A "$PY" -m http.server --bind "$AIP6" --directory "$T/kwww" 8081
bg_start peersrv K "$PY" -m http.server --bind "$KIP" --directory "$T/kwww" 8082
bg_start peersrv6 K "$PY" -m http.server --bind "$KIP6" --directory "$T/kwww" 8082
# A UDP echo server: address, port.
UDPECHO='
import signal, socket, sys
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
while True:
    d, a = s.recvfrom(65536)
    s.sendto(d, a)
'
bg_start kudp A "$PY" -c "$UDPECHO" "$AIP" 5354

get() { K curl -s --max-time "${2:-5}" "$1"; }
flush_arp() {
    K ip neigh flush dev "$VETH_K" 2>/dev/null
    A ip neigh flush dev "$VETH_A" 2>/dev/null
    K ip -6 neigh flush dev "$VETH_K" 2>/dev/null
    A ip -6 neigh flush dev "$VETH_A" 2>/dev/null
}

# Accelerated programs: ACCEL_IP and ACCEL_IP6 empty, so the stack shares
# the addresses.
SHARE=(ACCEL_IP= ACCEL_IP6=)
nginx_conf "$T/s.conf" "$AIP:80" "$T/www" off "listen [$AIP6]:80;"
flush_arp
bg_start snginx AX "${SHARE[@]}" ACCEL_STATS=2 ACCEL_LOG_LEVEL=info nginx -c "$T/s.conf" -p "$T" -e "$T/s.error.log"
wait_tcp K "$AIP" 80 || fail "accelerated nginx does not answer on $AIP:80 (shared address)"
check "nginx shares $VETH_A's address" grep -q "shares $VETH_A's address $AIP/24" "$T/snginx.err" "$T/s.error.log"
check "nginx shares $VETH_A's IPv6 address" grep -q "and its IPv6 address $AIP6/64" "$T/snginx.err" "$T/s.error.log"
check_eq "nginx on the shared $AIP:80 (kernel port 80 dropped)" \
    "$(get "http://$AIP/hello")" "hello from nginx"
wait_tcp K "$AIP6" 80 || fail "accelerated nginx does not answer on [$AIP6]:80"
check_eq "nginx on the shared [$AIP6]:80" "$(get "http://[$AIP6]/hello")" "hello from nginx"
check_eq "5 MB through the stack, sha256" \
    "$(K curl -s --max-time 20 "http://$AIP/big" | sha256sum | cut -c1-64)" "$(sha "$T/www/big")"
ok=0
for i in $(seq 50); do
    [[ $(get "http://$AIP/hello") == "hello from nginx" ]] && ok=$((ok + 1))
done
check_eq "50 requests in turn" "$ok" 50

# The kernel keeps the rest of the address.
wait_tcp K "$AIP" 8081 || fail "the kernel server on $AIP:8081 does not answer"
check_eq "kernel server on $AIP:8081 beside accelerated nginx" "$(get "http://$AIP:8081/who")" "kernel"
wait_tcp K "$AIP6" 8081 || fail "the kernel server on [$AIP6]:8081 does not answer"
check_eq "kernel server on [$AIP6]:8081 beside accelerated nginx" "$(get "http://[$AIP6]:8081/who")" "kernel"
flush_arp
check "the kernel answers ping on $AIP (ARP by the kernel)" K ping -c 2 -W 2 "$AIP"
check "the kernel answers ping -6 on $AIP6 (neighbour discovery by the kernel)" K ping -6 -c 2 -W 2 "$AIP6"
check_eq "nginx again after the neighbour flush" "$(get "http://$AIP/hello")" "hello from nginx"
flush_arp
check_eq "nginx on IPv6 again after the neighbour flush" "$(get "http://[$AIP6]/hello")" "hello from nginx"

# The kernel cannot take the stack's port.
bindpy='
import errno, socket, sys
s = socket.socket()
try:
    s.bind((sys.argv[1], 80))
except OSError as e:
    print(errno.errorcode[e.errno]); sys.exit(0)
print("bound")'
check_eq "a kernel bind of $AIP:80 while nginx listens" "$(A "$PY" -c "$bindpy" "$AIP")" "EADDRINUSE"
check_eq "a kernel bind of 0.0.0.0:80 while nginx listens" "$(A "$PY" -c "$bindpy" 0.0.0.0)" "EADDRINUSE"

# Active opens from the shared address, beside the kernel's.
wait_tcp K "$KIP" 8082 || fail "the peer's kernel server does not answer"
ok=0
for i in $(seq 20); do
    flush_arp
    [[ $(AX "${SHARE[@]}" ACCEL_STATS=2 curl -s --max-time 5 "http://$KIP:8082/peer" 2>>"$T/curl.err") == peer ]] && ok=$((ok + 1))
    [[ $(A curl -s --max-time 5 "http://$KIP:8082/peer") == peer ]] && ok=$((ok + 1))
done
check_eq "accelerated and kernel curl from $AIP to the peer, ARP flushed each time" "$ok" 40
ok=0
for i in $(seq 10); do
    flush_arp
    [[ $(AX "${SHARE[@]}" ACCEL_STATS=2 curl -s --max-time 5 "http://[$KIP6]:8082/peer" 2>>"$T/curl.err") == peer ]] && ok=$((ok + 1))
    [[ $(A curl -s --max-time 5 "http://[$KIP6]:8082/peer") == peer ]] && ok=$((ok + 1))
done
check_eq "the same over IPv6 to [$KIP6]" "$ok" 20
check_ge "accelerated curl: tcp_connect" "$(grep -c 'tcp_connect[ =:]*1' "$T/curl.err")" 30
check_eq "accelerated curl: no socket on the kernel" "$(grep -Eo 'sock_kernel[ =:]+[1-9]' "$T/curl.err" | wc -l)" 0

# An active open closed first sits in TIME-WAIT in the stack: its port
# stays held in the kernel meanwhile (Linux's own TIME-WAIT does the same),
# so a kernel program cannot take it toward the same peer.
TWPY='
import signal, socket, sys, time
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
s = socket.create_connection((sys.argv[1], 8082))
s.sendall(b"GET /peer HTTP/1.0\r\n\r\n")
while s.recv(4096):
    pass
port = s.getsockname()[1]
s.shutdown(socket.SHUT_WR)
s.close()
open(sys.argv[2], "w").write("%d\n" % port)
time.sleep(30)
'
bg_start tw AX "${SHARE[@]}" ACCEL_STATS=2 "$PY" -c "$TWPY" "$KIP" "$T/tw.port"
slowwait 10 test -s "$T/tw.port" || fail "the TIME-WAIT probe wrote no port"
twport=$(cat "$T/tw.port")
bindport='
import errno, socket, sys
s = socket.socket()
try:
    s.bind((sys.argv[1], int(sys.argv[2])))
except OSError as e:
    print(errno.errorcode[e.errno]); sys.exit(0)
print("bound")'
check_eq "port $twport of a closed accelerated connection (TIME-WAIT in the stack) stays the stack's" \
    "$(A "$PY" -c "$bindport" "$AIP" "$twport")" "EADDRINUSE"
bg_stop tw
check_eq "port $twport is the kernel's again once the process is gone" \
    "$(A "$PY" -c "$bindport" "$AIP" "$twport")" "bound"

# UDP: the stack's port and the kernel's, on one address.
bg_start sudp AX "${SHARE[@]}" ACCEL_STATS=2 "$PY" -c "$UDPECHO" "$AIP" 5353
sleep 1
check_eq "accelerated UDP echo on $AIP:5353" \
    "$(echo stack-udp | K socat -t 1 - UDP4:"$AIP":5353)" "stack-udp"
check_eq "kernel UDP echo on $AIP:5354" \
    "$(echo kernel-udp | K socat -t 1 - UDP4:"$AIP":5354)" "kernel-udp"
bg_stop sudp
check_ge "accelerated UDP echo: frames received by its stack" \
    "$(stat_get "$T/sudp.err" rx_frames)" 1

bg_stop snginx QUIT
# (nginx sends its stderr, the library's stats included, to its -e log)
check_ge "nginx: tcp_accept" "$(stat_get "$T/s.error.log" tcp_accept)" 56
check_eq "nginx: no socket on the kernel" "$(stat_get "$T/s.error.log" sock_kernel)" 0

# Port 80 is the kernel's again.
A nft delete table inet accel_shared_test
bg_start k80 A "$PY" -m http.server --bind "$AIP" --directory "$T/kwww" 80
wait_tcp K "$AIP" 80 || fail "a kernel server on $AIP:80 after nginx exited does not answer"
check_eq "kernel server on $AIP:80 after nginx exited (no steering left)" \
    "$(get "http://$AIP:80/who")" "kernel"
bg_stop k80
# The program stays attached (ACCEL_XDP_KEEP). A listener killed with
# SIGKILL leaves its port 8090 in the program's map; the next accelerated
# process adopts the program and empties the map first: a kernel server
# on port 8090 keeps answering while that process runs (with the entry
# left, its SYNs would reach the stack, which has no listener there).
check "the steering program stays attached after nginx exited" \
    eval "A ip -d link show dev '$VETH_A' | grep -q 'name accel_steer'"
bg_start kl AX "${SHARE[@]}" "$PY" -m http.server --bind "$AIP" --directory "$T/kwww" 8090
wait_tcp K "$AIP" 8090 || fail "the accelerated listener on $AIP:8090 does not answer"
bg_stop kl KILL
bg_start k8090 A "$PY" -m http.server --bind "$AIP" --directory "$T/kwww" 8090
wait_tcp K "$AIP" 8090 || fail "a kernel server on $AIP:8090 does not answer"
bg_start sudp2 AX "${SHARE[@]}" ACCEL_LOG_LEVEL=info "$PY" -c "$UDPECHO" "$AIP" 5353
sleep 1
check_eq "accelerated UDP echo on $AIP:5353 (the next process)" \
    "$(echo stack-udp2 | K socat -t 1 - UDP4:"$AIP":5353)" "stack-udp2"
check "the next process reused the program left attached" \
    grep -q "steering program left by an earlier process is reused" "$T/sudp2.err"
check_eq "kernel server on $AIP:8090 while the next accelerated process runs (the killed listener's port left the map)" \
    "$(get "http://$AIP:8090/who")" "kernel"
bg_stop sudp2
bg_stop k8090
nft_rules

# --- the check can fail: no steering program, no sharing ----------------
bg_start nsnginx AX "${SHARE[@]}" ACCEL_XDP_STEER=0 nginx -c "$T/s.conf" -p "$T" -e "$T/ns.error.log"
sleep 2
check "ACCEL_XDP_STEER=0 refuses the shared address in one line" \
    grep -q "sharing it needs af_xdp with accel's steering program" "$T/nsnginx.err"
check_not "ACCEL_XDP_STEER=0: port 80 (kernel, dropped) does not answer" \
    eval "[[ \$(get 'http://$AIP/hello' 3) == 'hello from nginx' ]]"
bg_stop nsnginx
finish
