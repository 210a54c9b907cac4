#!/bin/bash
# Scenario: SYN cookies answered by accel's XDP program while a listener
# is flooded (runtime/xdp/synck.bpf.h, runtime/xdpsynck.c; issue 24 item 3).
# Stock nginx under accel-run listens on both families with backlog 16;
# bench/synflood's sender floods it from spoofed sources (10.200.0.100-109,
# addresses of the kernel peer's veth whose TCP an XDP program there drops,
# as their absence would) at 4000 SYNs/s.
#   1. With an XDP program on the peer's veth (a veth delivers another
#      program's XDP_TX frames only then; a NIC puts them on the wire):
#      the stack asks, the program answers the flood: its cookies
#      (tcp_syncookies_xdp) outnumber the stack's own many times; a
#      SYN-ACK it sent is captured on the peer: checksums correct, the
#      stack's options (MSS 1460, SACK-permitted, timestamps echoing the
#      SYN's, window scale 7); 40 kernel clients (curl, IPv4 and IPv6, a
#      new connection each, nginx closing first so their port pairs meet
#      TIME-WAIT: patch 0041) are all served, from cookies the stack
#      accepted (tcp_syncookies_recv).
#   2. The same with nginx's master and two workers (a fork family: each
#      worker takes the ACKs of cookies the program sent while another's
#      listener was the one that overflowed).
#   3. Without it the program's SYN-ACKs are lost (the veth counts
#      xdp_tx_errors): the process sees that at its next ask, says so
#      once, and leaves the cookies to the stack (tcp_syncookies_xdp_lost
#      1); the clients are still all served.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
[[ -x ${SYNFLOOD:-} ]] || fail "SYNFLOOD (bench/synflood's sender) not built"
STAT=$(dirname "$ACCEL_RUN")/accel-stat
FIRST=10.200.0.100
LAST=10.200.0.109
for i in $(seq 100 109); do
    K ip addr add "10.200.0.$i/32" dev "$VETH_K" || fail "cannot add 10.200.0.$i"
done
printf '%s\n' '#include <linux/bpf.h>' '#include <linux/if_ether.h>' '#include <linux/in.h>' \
    '#include <linux/ip.h>' '#include <bpf/bpf_endian.h>' '#include <bpf/bpf_helpers.h>' \
    'SEC("xdp") int sink(struct xdp_md *ctx) {' \
    '    void *d = (void *)(long)ctx->data, *e = (void *)(long)ctx->data_end;' \
    '    struct ethhdr *eth = d; struct iphdr *ip = (void *)(eth + 1);' \
    '    if ((void *)(ip + 1) > e || eth->h_proto != bpf_htons(ETH_P_IP) || ip->protocol != IPPROTO_TCP) return XDP_PASS;' \
    '    __u32 a = bpf_ntohl(ip->daddr);' \
    '    return a >= 0x0ac80064 && a <= 0x0ac8006d ? XDP_DROP : XDP_PASS; }' \
    'char _license[] SEC("license") = "GPL";' >"$T/sink.bpf.c"
clang -O2 -target bpf -I"/usr/include/$(gcc -print-multiarch)" -c "$T/sink.bpf.c" -o "$T/sink.o" ||
    fail "cannot build the sink XDP program"
sink_on() { K ip link set dev "$VETH_K" xdpdrv obj "$T/sink.o" sec xdp || fail "cannot attach the sink"; }
sink_off() { K ip link set dev "$VETH_K" xdpdrv off 2>/dev/null; }
net_down() {
    sink_off
    K nft delete table netdev synck_sink 2>/dev/null
    for i in $(seq 100 109); do K ip addr del "10.200.0.$i/32" dev "$VETH_K" 2>/dev/null; done
}
trap 'rc=$?; net_down; (exit $rc); cleanup' EXIT

nginx_conf "$T/ngx.conf" "$AIP:80 backlog=16" "$T" off "listen [$AIP6]:80 backlog=16;"
AMAC=$(A cat "/sys/class/net/$VETH_A/address")

# counter NAME: nginx's accel counter NAME now (accel-stat --json).
counter() {
    "$STAT" --json "$SPID" | "$PY" -c 'import json, sys
print(json.load(sys.stdin)["processes"][0]["counters"].get(sys.argv[1], 0))' "$1"
}

# clients TAG: 30 IPv4 and 10 IPv6 requests, a connection each; how many
# were answered 200 goes to $T/TAG.ok.
clients() {
    local ok=0 i url
    for i in $(seq 1 40); do
        ((i <= 30)) && url=http://$AIP/hello || url=http://[$AIP6]/hello
        [[ $(K curl -s -m 10 -o /dev/null -w '%{http_code}' "$url") == 200 ]] && ok=$((ok + 1))
    done
    echo "$ok" >"$T/$1.ok"
}

# round TAG [CONF]: nginx, the flood, the clients in it; nginx stays up.
round() {
    local tag=$1 conf=${2:-$T/ngx.conf}
    bg_start "ngx-$tag" AX taskset -c 1 nginx -c "$conf" -p "$T/" -e "$T/ngx.error.log"
    SPID=$(bg_pid "ngx-$tag")
    slowwait 30 K curl -sf -m 2 -o /dev/null "http://$AIP/hello" || fail "$tag: nginx does not answer"
    bg_start "flood-$tag" K taskset -c 0 "$SYNFLOOD" -d 12 -r 4000 -b 16 "$VETH_K" "$AMAC" "$AIP:80" "$FIRST-$LAST"
    sleep 1.5
    # A SYN-ACK to the first client, captured on the peer.
    K timeout 20 tcpdump -i "$VETH_K" -nn -vv -c 1 \
        "src host $AIP and dst host $KIP and tcp[tcpflags] & (tcp-syn|tcp-ack) == (tcp-syn|tcp-ack)" \
        >"$T/$tag.synack" 2>"$T/$tag.tcpdump" &
    DUMP=$!
    busywait 5000 grep -q 'listening on' "$T/$tag.tcpdump" || fail "tcpdump did not start: $(cat "$T/$tag.tcpdump")"
    clients "$tag"
    wait "$DUMP"
}

log "---- 1. the peer's veth has an XDP program: the program answers the flood"
sink_on
round xdp
check_eq "1: kernel clients served during the flood (of 40, IPv4 and IPv6)" "$(cat "$T/xdp.ok")" 40
asks=$(counter tcp_syncookies_xdp_asks)
xdp=$(counter tcp_syncookies_xdp)
stk=$(counter tcp_syncookies_sent)
log "1: stack cookies $stk, XDP cookies $xdp, asks $asks"
check_ge "1: the stack asked the XDP program (tcp_syncookies_xdp_asks)" "$asks" 1
check_ge "1: cookies the XDP program sent" "$xdp" 2000
check_ge "1: XDP cookies / the stack's own (x10 at least)" "$((xdp / (stk + 1)))" 10
check_eq "1: none lost (tcp_syncookies_xdp_lost)" "$(counter tcp_syncookies_xdp_lost)" 0
check_ge "1: connections made from cookies (tcp_syncookies_recv)" "$(counter tcp_syncookies_recv)" 30
cat "$T/xdp.synack" >&2
check "1: a SYN-ACK to a client came from the XDP program (IP id 0 with DF; the stack sets neither)" \
    grep -q 'id 0, offset 0, flags \[DF\]' "$T/xdp.synack"
check "1: ... its IP and TCP checksums are correct" \
    bash -c "grep -q 'cksum 0x[0-9a-f]* (correct)' '$T/xdp.synack' && ! grep -q 'incorrect\|bad cksum' '$T/xdp.synack'"
check "1: ... and the stack's options (mss 1460, sackOK, TS echoing the SYN's, wscale 7)" \
    grep -Eq 'options \[mss 1460,sackOK,TS val [0-9]+ ecr [0-9]+,nop,wscale 7\]' "$T/xdp.synack"
bg_stop flood-xdp INT
kill -QUIT "$SPID"
busywait 20000 dead "$SPID" || fail "nginx did not exit after SIGQUIT"
bg_stop ngx-xdp QUIT

log "---- 2. nginx with a master and two workers (a fork family)"
nginx_conf "$T/ngx2.conf" "$AIP:80 backlog=16" "$T" on "listen [$AIP6]:80 backlog=16;"
sed -i 's/worker_processes 1;/worker_processes 2;/' "$T/ngx2.conf"
round workers "$T/ngx2.conf"
check_eq "2: kernel clients served during the flood (of 40, two workers)" "$(cat "$T/workers.ok")" 40
check "2: a SYN-ACK to a client came from the XDP program" \
    grep -q 'id 0, offset 0, flags \[DF\]' "$T/workers.synack"
bg_stop flood-workers INT
kill -QUIT "$SPID"
busywait 20000 dead "$SPID" || fail "nginx did not exit after SIGQUIT"
bg_stop ngx-workers QUIT

log "---- 3. no XDP program on the peer's veth: the answers are lost, the stack takes over"
sink_off
# The spoofed sources' answers are dropped at the ingress instead.
K nft -f - <<NFT || fail "cannot add the nftables sink"
table netdev synck_sink {
    chain ingress {
        type filter hook ingress device $VETH_K priority 0; policy accept;
        ip daddr $FIRST-$LAST meta l4proto tcp drop
    }
}
NFT
round lost
check_eq "3: kernel clients served during the flood (of 40)" "$(cat "$T/lost.ok")" 40
check_eq "3: the loss seen once (tcp_syncookies_xdp_lost)" "$(counter tcp_syncookies_xdp_lost)" 1
check_ge "3: the stack answered with cookies itself" "$(counter tcp_syncookies_sent)" 1000
check_eq "3: said once (nginx's stderr is its error log)" \
    "$(cat "$T/ngx-lost.err" "$T/ngx.error.log" | grep -c "SYN cookies do not reach the wire")" 1
bg_stop flood-lost INT
kill -QUIT "$SPID"
busywait 20000 dead "$SPID" || fail "nginx did not exit after SIGQUIT"
bg_stop ngx-lost QUIT
finish
