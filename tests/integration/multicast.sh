#!/bin/bash
# Scenario: UDP multicast through the stack (multicast/mcast.py, python3).
#  1. an accelerated receiver in accel-a (two sockets on the port, one bound
#     to the group) joins 239.1.1.1: its IGMP report is on the wire
#     (tcpdump in accel-k), and a kernel sender in accel-k feeds it N
#     datagrams at a steady rate: each socket gets all N, no gaps, no
#     duplicates, in order;
#  2. two kernel receivers in accel-k join 239.1.1.2 and an accelerated
#     sender feeds them N datagrams at a steady rate: each gets all N from
#     the stack's address, no gaps;
#  3. a source-specific join (IP_ADD_SOURCE_MEMBERSHIP, source 10.200.0.1):
#     a feed from another source (a second address in accel-k) is filtered
#     out, the one from 10.200.0.1 arrives complete, while a plain member
#     of the group in the same process gets both;
#  4. IP_MULTICAST_LOOP in one accelerated process: its own receiver gets
#     the datagrams sent with loop on, none of those sent with it off;
#  5. the options' values and errno under accel-run equal the kernel's
#     (same sequence of calls on each side, addresses written as names).
# accel-a has no kernel address: a join or a send that fell to the kernel
# there fails (ENODEV / no route), so every check proves the bypass.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

MC="$LIBDIR/../integration/multicast/mcast.py"
N=3000    # datagrams per feed
RATE=1000 # per second: a steady feed, well below what either side takes
SRC2=10.200.0.3

lab_up

cleanup_src2() { K ip addr del "$SRC2/24" dev "$VETH_K" 2>/dev/null || true; }
trap 'rc=$?; cleanup_src2; (exit $rc); cleanup' EXIT

# feed_ok FILE SOCK SRC: the receiver's line for socket SOCK says N from
# SRC alone, no gaps, no duplicates, in order.
feed_ok() {
    check_eq "$4" "$(grep "^sock $2 " "$1")" \
        "sock $2 got $N gaps 0 dups 0 reorder 0 from $3:$N"
}

log "check: IGMP report on the wire, kernel sender -> accelerated receivers"
bg_start tcpd K tcpdump -l -n -i "$VETH_K" -c 1 "igmp and src host $AIP"
slowwait 10 grep -qs "listening on" "$T/tcpd.err" || fail "tcpdump did not start"
bg_start arecv AX "$PY" "$MC" recv 239.1.1.1 5000 "$N" --socks 2 --bind-group
slowwait 30 grep -qs joined "$T/arecv.out" || fail "accelerated receiver did not join: $(tail -3 "$T/arecv.err")"
slowwait 10 grep -qs "igmp" "$T/tcpd.out" || fail "no IGMP report from $AIP on the wire"
cat "$T/tcpd.out"
check "IGMPv2 report for 239.1.1.1 from $AIP" grep -q "$AIP > 239.1.1.1: igmp v2 report 239.1.1.1" "$T/tcpd.out"
K "$PY" "$MC" send 239.1.1.1 5000 "$N" "$RATE" --if "$KIP" >"$T/ksend.out" || fail "kernel sender failed"
busywait 30000 dead "$(bg_pid arecv)" || fail "accelerated receiver did not finish"
cat "$T/arecv.out"
feed_ok "$T/arecv.out" 0 "$KIP" "kernel -> accel, socket bound to the group"
feed_ok "$T/arecv.out" 1 "$KIP" "kernel -> accel, second socket on the port (a copy each)"

log "check: accelerated sender -> kernel receivers"
bg_start krecv1 K "$PY" "$MC" recv 239.1.1.2 5001 "$N" --if "$KIP"
bg_start krecv2 K "$PY" "$MC" recv 239.1.1.2 5001 "$N" --if "$KIP"
slowwait 10 grep -qs joined "$T/krecv1.out" || fail "kernel receiver 1 did not join"
slowwait 10 grep -qs joined "$T/krecv2.out" || fail "kernel receiver 2 did not join"
AX ACCEL_STATS=2 "$PY" "$MC" send 239.1.1.2 5001 "$N" "$RATE" >"$T/asend.out" 2>"$T/asend.err" ||
    fail "accelerated sender failed: $(tail -3 "$T/asend.err")"
check_ge "accelerated sender tx_frames" "$(stat_get "$T/asend.err" tx_frames)" "$N"
busywait 30000 dead "$(bg_pid krecv1)" || fail "kernel receiver 1 did not finish"
busywait 30000 dead "$(bg_pid krecv2)" || fail "kernel receiver 2 did not finish"
cat "$T/krecv1.out" "$T/krecv2.out"
feed_ok "$T/krecv1.out" 0 "$AIP" "accel -> kernel receiver 1"
feed_ok "$T/krecv2.out" 0 "$AIP" "accel -> kernel receiver 2"

log "check: source-specific membership filters other sources"
K ip addr replace "$SRC2/24" dev "$VETH_K" || fail "cannot add $SRC2 in $NS_K"
bg_start assm AX "$PY" "$MC" recv 239.1.1.3 5002 "$N" --source "$KIP" --socks 2 --join-all
slowwait 30 grep -qs joined "$T/assm.out" || fail "source-specific receiver did not join: $(tail -3 "$T/assm.err")"
# The filtered feed goes first, so it reaches the stack before the
# receiver has its N datagrams from KIP.
K "$PY" "$MC" send 239.1.1.3 5002 200 "$RATE" --if "$KIP" --src "$SRC2" >/dev/null ||
    fail "kernel sender from $SRC2 failed"
K "$PY" "$MC" send 239.1.1.3 5002 "$N" "$RATE" --if "$KIP" >/dev/null || fail "kernel sender failed"
busywait 30000 dead "$(bg_pid assm)" || fail "source-specific receiver did not finish"
cat "$T/assm.out"
feed_ok "$T/assm.out" 0 "$KIP" "IP_ADD_SOURCE_MEMBERSHIP: only $KIP's feed, complete"
check_eq "a plain member of the group gets both feeds" "$(grep '^sock 1 ' "$T/assm.out")" \
    "sock 1 got $((N + 200)) gaps 0 dups 0 reorder 0 from $KIP:$N $SRC2:200"
cleanup_src2

log "check: two processes sharing the port after fork, each with its own member socket"
both_joined() { [[ $(grep -cs joined "$T/afork.out") -eq 2 ]]; }
bg_start afork AX "$PY" "$MC" recv 239.1.1.5 5004 "$N" --fork
slowwait 30 both_joined ||
    fail "forked receivers did not both join: $(tail -3 "$T/afork.err")"
K "$PY" "$MC" send 239.1.1.5 5004 "$N" "$RATE" --if "$KIP" >/dev/null || fail "kernel sender failed"
busywait 30000 dead "$(bg_pid afork)" || fail "forked receivers did not finish"
cat "$T/afork.out"
for who in parent child; do
    check_eq "after fork, the $who's own socket gets the whole feed" \
        "$(grep "^$who sock 0 " "$T/afork.out")" \
        "$who sock 0 got $N gaps 0 dups 0 reorder 0 from $KIP:$N"
done

log "check: IP_MULTICAST_LOOP in one accelerated process"
check_eq "own receiver gets loop-on datagrams only" \
    "$(AX "$PY" "$MC" loop 239.1.1.4 5003 2>"$T/loop.err")" "loop on 10 off 0"

log "check: multicast option values and errno, kernel vs accel-run"
K "$PY" "$MC" opts "$KIP" "$VETH_K" >"$T/opts-kernel.txt" || fail "opts on the kernel failed"
AX "$PY" "$MC" opts "$AIP" "$VETH_A" >"$T/opts-accel.txt" 2>"$T/opts-accel.err" ||
    fail "opts under accel-run failed: $(tail -3 "$T/opts-accel.err")"
check "option trace has the joins" grep -q "^join -> ok" "$T/opts-kernel.txt"
if diff -u "$T/opts-kernel.txt" "$T/opts-accel.txt" >"$T/opts.diff"; then
    pass "multicast options: accel-run gives the kernel's values and errno ($(wc -l <"$T/opts-kernel.txt") calls)"
else
    cat "$T/opts.diff"
    check_fail "multicast options differ from the kernel's"
fi
finish
