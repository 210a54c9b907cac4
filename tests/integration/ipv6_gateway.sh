#!/bin/bash
# Scenario: ACCEL_GATEWAY6, the stack's IPv6 router for destinations off
# its prefix (issue 21). The kernel peer gets an address outside
# fd00:200::/64 on its loopback, fd00:300::1/128 (removed at the end), and
# a kernel HTTP server there; accel-a has no kernel IPv6 route, so only
# the stack can reach it, through the peer as its router. Checks, with an
# accelerated curl -6 (the lab's ACCEL_IP6=fd00:200::2/64):
#   * ACCEL_GATEWAY6=fd00:200::1 (the peer's address, inside the prefix):
#     the page arrives, body equal; ACCEL_STATS: tcp_connect and rx_frames
#     (through the stack), no socket on the kernel; tcpdump on veth-k
#     shows the SYN to fd00:300::1 sent to the peer's MAC;
#   * ACCEL_GATEWAY6=<the peer's fe80:: address> (a link-local router):
#     the same page;
#   * without ACCEL_GATEWAY6 the designed behaviour (preload/decide.c
#     pl_route_connect6): the destination is not routable through the
#     interface, so the socket stays on the kernel (sock_kernel 1,
#     kernel_why_dest 1), where accel-a has no route: its connect fails
#     with ENETUNREACH (curl -v: "Network is unreachable", exit 7), the
#     data path never starts, and no frame reaches veth-k.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

OFF6=fd00:300::1 # off-link for the stack: not in fd00:200::/64
PORT=8300

lab_up
grep -qx "ACCEL_IP6=$AIP6/64" <(printf '%s\n' "${LAB_ENV[@]}") ||
    fail "the lab gives the stack no ACCEL_IP6=$AIP6/64: ${LAB_ENV[*]}"

addr_remove() { K ip -6 addr del "$OFF6/128" dev lo 2>/dev/null; }
# The address must not outlive the test.
trap 'rc=$?; addr_remove; (exit $rc); cleanup' EXIT
[[ $(K sysctl -n net.ipv6.conf.lo.disable_ipv6) == 0 ]] || fail "IPv6 is off on lo in $NS_K"
K ip -6 addr add "$OFF6/128" dev lo nodad || fail "cannot add $OFF6 to lo in $NS_K"
A ip -6 route get "$OFF6" >/dev/null 2>&1 && fail "$NS_A has a kernel route to $OFF6: $(A ip -6 route get "$OFF6")"
MAC_K=$(K cat "/sys/class/net/$VETH_K/address") || fail "no MAC for $VETH_K"
LL_K=$(K ip -6 -o addr show dev "$VETH_K" scope link | awk '{print $4}' | cut -d/ -f1 | head -1)
[[ $LL_K == fe80:* ]] || fail "$VETH_K has no link-local address"

mkdir -p "$T/www"
echo "off-link page $RANDOM$RANDOM" >"$T/www/page.html"
bg_start ksrv K "$PY" -m http.server --bind "$OFF6" --directory "$T/www" "$PORT"
wait_tcp K "$OFF6" "$PORT" || fail "the kernel server on [$OFF6]:$PORT does not answer"
URL="http://[$OFF6]:$PORT/page.html"

# tcpdump_start NAME: SYNs to the off-link address on the peer's veth.
tcpdump_start() {
    bg_start "$1" K tcpdump -l -n -e -i "$VETH_K" "ip6 dst $OFF6 and tcp port $PORT"
    slowwait 10 grep -qs "listening on" "$T/$1.err" || fail "tcpdump $1 did not start"
}

log "ACCEL_GATEWAY6=$KIP6"
tcpdump_start tgw
AX ACCEL_STATS=2 ACCEL_GATEWAY6="$KIP6" curl -6 -sS -m 10 -o "$T/gw.got" "$URL" 2>"$T/gw.err"
check_eq "via $KIP6: curl exit status" "$?" 0
check "via $KIP6: body equal" cmp "$T/www/page.html" "$T/gw.got"
check_ge "via $KIP6: tcp_connect (through the stack)" "$(stat_get "$T/gw.err" tcp_connect)" 1
check_ge "via $KIP6: rx_frames" "$(stat_get "$T/gw.err" rx_frames)" 3
check_eq "via $KIP6: no socket on the kernel" "$(stat_get "$T/gw.err" sock_kernel)" 0
check "via $KIP6: the frames to $OFF6 went to the router's MAC $MAC_K" \
    slowwait 5 grep -q "> $MAC_K, ethertype IPv6.* > $OFF6\.$PORT: Flags \[S\]" "$T/tgw.out"
bg_stop tgw

log "ACCEL_GATEWAY6=$LL_K (the peer's link-local address)"
AX ACCEL_STATS=2 ACCEL_GATEWAY6="$LL_K" curl -6 -sS -m 10 -o "$T/ll.got" "$URL" 2>"$T/ll.err"
check_eq "via $LL_K: curl exit status" "$?" 0
check "via $LL_K: body equal" cmp "$T/www/page.html" "$T/ll.got"
check_ge "via $LL_K: tcp_connect (through the stack)" "$(stat_get "$T/ll.err" tcp_connect)" 1

log "no ACCEL_GATEWAY6"
tcpdump_start tno
AX ACCEL_STATS=2 curl -6 -sS -v -m 10 -o "$T/no.got" "$URL" 2>"$T/no.err"
check_eq "no gateway: curl exit status (could not connect)" "$?" 7
check "no gateway: connect failed with ENETUNREACH" \
    grep -q "Immediate connect fail for $OFF6: Network is unreachable" "$T/no.err"
check_eq "no gateway: the socket stays on the kernel" "$(stat_get "$T/no.err" sock_kernel)" 1
check_eq "no gateway: reason dest" "$(stat_get "$T/no.err" kernel_why_dest)" 1
check_eq "no gateway: no tcp_connect" "$(stat_get "$T/no.err" tcp_connect)" 0
check "no gateway: the data path was not even started" grep -q "stats: data path was not started" "$T/no.err"
sleep 0.5
check_not "no gateway: nothing to $OFF6 on $VETH_K" grep -q "> $OFF6\.$PORT" "$T/tno.out"
bg_stop tno
finish
