#!/bin/bash
# Scenario: IPv6 multicast into the stack (issue 21; multicast/mcast6.py).
# An accelerated receiver in accel-a (ACCEL_IP6, the lab's) has two UDP
# sockets: one bound to [::]:6000 joined to ff15::1234 (site scope), one
# bound to [ff02::1234%veth-a]:6001 joined to ff02::1234 (link scope), both
# with IPV6_JOIN_GROUP on veth-a's index. A kernel sender in accel-k sends
# N datagrams to each group out of veth-k. Checks:
#   * the stack's MLD report for each group is on the wire (tcpdump on
#     veth-k, frames from veth-a's MAC: hop-by-hop header, ICMPv6 type 131
#     for lwIP's MLDv1, or 143);
#   * each socket got all N (from fd00:200::1 for the site-scope group,
#     from the peer's fe80:: address for the link-scope one), each payload
#     intact (its bytes depend on its sequence number), no gaps, no
#     duplicates;
#   * the receiver's ACCEL_STATS: the frames came through the port
#     (rx_frames), its sockets are the stack's (sock_accel, no sock_kernel);
#   * after the first socket leaves ff15::1234 (IPV6_LEAVE_GROUP; the
#     stack's MLD done is on the wire), M more datagrams to each group:
#     none of ff15::1234's arrive, all of ff02::1234's do (so datagrams
#     were flowing, and the zero can only come from the leave).
# The kernel's IPv6 is off on veth-a (accel-lab): a join or a socket that
# fell to the kernel there fails, so the datagrams prove the bypass.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

MC6="$LIBDIR/../integration/multicast/mcast6.py"
N=2000    # datagrams per group before the leave
M=300     # and after it
RATE=2000 # per second, steady
G1=ff15::1234
G2=ff02::1234
P1=6000
P2=6001

lab_up
grep -qx "ACCEL_IP6=$AIP6/64" <(printf '%s\n' "${LAB_ENV[@]}") ||
    fail "the lab gives the stack no ACCEL_IP6=$AIP6/64: ${LAB_ENV[*]}"
MAC_A=$(A cat "/sys/class/net/$VETH_A/address") || fail "no MAC for $VETH_A"
# The kernel sends to the link-scope group from its link-local address.
LL_K=$(K ip -6 -o addr show dev "$VETH_K" scope link | awk '{print $4}' | cut -d/ -f1 | head -1)
[[ $LL_K == fe80:* ]] || fail "$VETH_K has no link-local address"

# MLD from the stack: an IPv6 frame from veth-a's MAC whose hop-by-hop
# header (ip6[6] == 0, router alert) carries ICMPv6 (ip6[40] == 58) of
# type 130..132 (MLDv1) or 143 (MLDv2 report).
bg_start mld K tcpdump -l -n -v -i "$VETH_K" \
    "ether src $MAC_A and ip6[6] == 0 and ip6[40] == 58 and ((ip6[48] >= 130 and ip6[48] <= 132) or ip6[48] == 143)"
slowwait 10 grep -qs "listening on" "$T/mld.err" || fail "tcpdump did not start"

bg_start recv AX ACCEL_STATS=2 "$PY" "$MC6" recv "$VETH_A" "$N" "$M" "$G1" "$P1" "$G2" "$P2"
wait_line "$T/recv.out" '^joined' 30 || fail "the accelerated receiver did not join: $(tail -3 "$T/recv.err")"

# tcpdump -v prints a frame on two lines; the report's names its group.
mld_seen() { grep -Eq "multicast listener $1.*$2" "$T/mld.out"; }
check "MLD report for $G1 from the stack on $VETH_K" slowwait 5 mld_seen "report" "addr: $G1"
check "MLD report for $G2 from the stack on $VETH_K" slowwait 5 mld_seen "report" "addr: $G2"

K "$PY" "$MC6" send "$VETH_K" "$N" "$RATE" "$G1:$P1" "$G2:$P2" >"$T/send1.out" 2>&1 ||
    fail "kernel sender failed: $(tail -3 "$T/send1.out")"
wait_line "$T/recv.out" '^left' 30 || fail "the receiver did not finish the first feed: $(tail -3 "$T/recv.err")"
check_eq "$G1: all $N datagrams, intact, from $KIP6" "$(sed -n "s/^phase1 g1 //p" "$T/recv.out")" \
    "got $N bad 0 gaps 0 dups 0 from $KIP6:$N"
check_eq "$G2: all $N datagrams, intact, from $LL_K" "$(sed -n "s/^phase1 g2 //p" "$T/recv.out")" \
    "got $N bad 0 gaps 0 dups 0 from $LL_K:$N"
check "MLD done for $G1 from the stack after the leave" slowwait 5 mld_seen "done" "addr: $G1"

K "$PY" "$MC6" send "$VETH_K" "$M" "$RATE" "$G1:$P1" "$G2:$P2" >"$T/send2.out" 2>&1 ||
    fail "kernel sender failed: $(tail -3 "$T/send2.out")"
busywait 20000 dead "$(bg_pid recv)" || fail "the receiver did not finish"
bg_stop recv
check_eq "the receiver's exit status" "$?" 0
cat "$T/recv.out"
check_eq "after leaving $G1: none of its datagrams" "$(sed -n "s/^phase2 g1 //p" "$T/recv.out")" \
    "got 0 bad 0 gaps 0 dups 0 from -"
check_eq "$G2, still joined: all $M later datagrams" "$(sed -n "s/^phase2 g2 //p" "$T/recv.out")" \
    "got $M bad 0 gaps 0 dups 0 from $LL_K:$M"

check_ge "receiver rx_frames (through the port)" "$(stat_get "$T/recv.err" rx_frames)" $((2 * N + M))
check_ge "receiver sock_accel" "$(stat_get "$T/recv.err" sock_accel)" 2
check_eq "receiver: no socket on the kernel" "$(stat_get "$T/recv.err" sock_kernel)" 0
bg_stop mld
finish
