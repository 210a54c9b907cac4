#!/bin/sh
# Port-level test of runtime/ in private namespaces: af_xdp and af_packet on
# a veth (frames both ways, kernel ping answered, idle process sleeps),
# af_xdp -> af_packet fallback, rt_block semantics, memif between two
# processes, a missing interface reported by name, and clean-up after exit
# (accel's XDP program kept for the next process, nothing else on the
# interface, no EAL runtime directory left).
# Usage: port_test.sh PORT_SMOKE BLOCK_TEST. Exit 0 ok, 1 failure, 4 skip
# (not root, or no iproute2).
set -u
SMOKE=$1
BLOCK=$2
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
    echo "SKIP: needs root and iproute2"; exit 4
fi
S=$$
K=rtk$S A=rta$S M=rtm$S VK=rtk$S.0 VA=rta$S.0
TMP=$(mktemp -d)
fail=0
cleanup() {
    ip netns del "$K" 2>/dev/null; ip netns del "$A" 2>/dev/null
    ip netns del "$M" 2>/dev/null; rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# As root, a setup that fails is a failure, not a skip: the suite would
# otherwise pass on a machine where nothing it covers can run.
setup_fail() { echo "FAIL namespace setup: $*"; exit 1; }
ip netns add "$K" && ip netns add "$A" && ip netns add "$M" || setup_fail "ip netns add"
ip link add "$VK" type veth peer name "$VA" || setup_fail "ip link add veth"
ip link set "$VK" netns "$K"; ip link set "$VA" netns "$A"
ip -n "$K" addr add 10.209.0.1/24 dev "$VK"
ip -n "$K" link set "$VK" up; ip -n "$A" link set "$VA" up
ip -n "$K" link set lo up; ip -n "$A" link set lo up; ip -n "$M" link set lo up
ip netns exec "$K" ethtool -K "$VK" tx off >/dev/null 2>&1

runa() { ip netns exec "$A" env ACCEL_IFACE="$VA" ACCEL_IP=10.209.0.2/24 "$@"; }

for drv in af_xdp af_packet; do
    ip netns exec "$K" ping -c 10 -i 0.2 -W 2 10.209.0.2 >"$TMP/ping" 2>&1 &
    pp=$!
    runa ACCEL_DRIVER=$drv ACCEL_STATS=2 "$SMOKE" --seconds 3 \
        --ping 10.209.0.1 --min-replies 50 >"$TMP/out" 2>"$TMP/err"
    rc=$?
    wait $pp
    recv=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$TMP/ping")
    if [ $rc = 0 ] && [ "${recv:-0}" -ge 5 ] &&
       grep -q "data path: $drv on $VA" "$TMP/err"; then
        ok "$drv: $(tail -1 "$TMP/out"); kernel ping $recv/10"
    else
        bad "$drv (rc $rc, kernel ping ${recv:-0}/10)"; cat "$TMP/out" "$TMP/err"
    fi
    # An idle process sleeps: a few polls per second, little CPU.
    runa ACCEL_DRIVER=$drv ACCEL_PROGRESS_USEC=0 "$SMOKE" --seconds 2 \
        >"$TMP/out" 2>&1
    polls=$(sed -n 's/.* polls \([0-9]*\) .*/\1/p' "$TMP/out")
    if [ "${polls:-99999}" -lt 200 ]; then
        ok "$drv: idle process sleeps ($polls polls in 2 s)"
    else
        bad "$drv: idle process polled ${polls:-?} times in 2 s"; cat "$TMP/out"
    fi
done

# A backlog (frames queued while the process was busy elsewhere) is taken
# in one poll turn up to ACCEL_RX_BUDGET, bursts after bursts, instead of
# one burst per turn while the rings fill up; and an event loop's calls
# poll again once ACCEL_RX_INTERVAL_USEC has passed (rt_poll_due). 600 UDP
# datagrams from the kernel peer wait in the af_xdp rings (1024 rx
# descriptors) while the process does not poll.
# udp_while_idle N: once the test process prints "started", N UDP
# datagrams from the kernel peer (a pause every 50), then $TMP/sent.
udp_while_idle() {
    for _ in $(seq 100); do grep -q started "$TMP/out" && break; sleep 0.1; done
    ip netns exec "$K" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"x" * 64, ("10.209.0.2", 9))
    if i % 50 == 49:
        time.sleep(0.005)
' "$1"
    touch "$TMP/sent"
}
MACA=$(ip -n "$A" link show "$VA" | awk '/link\/ether/ {print $2}')
ip -n "$K" neigh replace 10.209.0.2 lladdr "$MACA" dev "$VK"
for budget in 256 32; do
    rm -f "$TMP/sent"
    runa ACCEL_DRIVER=af_xdp ACCEL_PROGRESS_USEC=0 ACCEL_RX_BUDGET=$budget \
        ACCEL_RX_INTERVAL_USEC=20000 "$SMOKE" --backlog "$TMP/sent" \
        >"$TMP/out" 2>&1 &
    bp=$!
    udp_while_idle 600
    wait $bp
    line=$(grep '^backlog' "$TMP/out")
    set -- $line
    if [ "${3:-}" = "$budget" ] && [ $(( ${3:-0} + ${5:-0} )) -ge 550 ] &&
       [ "${7:-}" = 0 ] && [ "${9:-}" = 1 ]; then
        ok "ACCEL_RX_BUDGET=$budget: one turn took ${3} of $(( $3 + $5 )) queued frames; rt_poll_due after the interval"
    else
        bad "ACCEL_RX_BUDGET=$budget: ${line:-no result}"; cat "$TMP/out"
    fi
done

# A process killed in the middle of a burst (kill -9 of a worker under
# load): the PMD's ring cursors in the shared queue structure are ahead of
# the kernel's indexes. Whoever recovers the port lock puts them back
# (runtime/xsk_repair.c): the frames the dead process had peeked are read
# again, and frames sent afterwards leave at once. Without it the 5 UDP
# datagrams are lost and the ARP request and echo requests wait behind the
# 8 reserved descriptors: no reply within 2 s.
# af_packet (pkt_repair.c): the tx position moves over the frames the
# dead process wrote, and the rx position, behind the kernel's, is found
# again from the next frame to arrive (the frames it had taken are lost
# with it). Without it no frame is received or sent until a ring's worth
# has gone by.
for drv in af_xdp af_packet; do
    rm -f "$TMP/sent"
    runa ACCEL_DRIVER=$drv ACCEL_PROGRESS_USEC=0 "$SMOKE" \
        --die-mid-burst "$TMP/sent" --ping 10.209.0.1 >"$TMP/out" 2>"$TMP/err" &
    bp=$!
    udp_while_idle 5
    wait $bp
    rc=$?
    line=$(grep '^died_mid_burst' "$TMP/out")
    if [ $rc = 0 ] && grep -q "middle of a burst;" "$TMP/err"; then
        ok "$drv rings after a death mid-burst: $line"
    else
        bad "$drv rings after a death mid-burst (rc $rc): ${line:-no result}"
        cat "$TMP/out" "$TMP/err"
    fi
done
ip -n "$K" neigh del 10.209.0.2 dev "$VK" 2>/dev/null

# After exit accel's program stays attached for the next process
# (ACCEL_XDP_KEEP=1), passing every frame to the kernel; `ip link set dev
# IF xdp off` removes it, as for any XDP program.
if ip -n "$A" -d link show "$VA" | grep -q "name accel_steer"; then
    ok "accel's XDP program stays attached after exit"
else
    bad "accel's XDP program is not attached after exit: $(ip -n "$A" -d link show "$VA" | grep -o 'prog/xdp.*')"
fi
ip -n "$A" link set dev "$VA" xdp off
if ip -n "$A" link show "$VA" | grep -q "prog/xdp\|xdp id"; then
    bad "an XDP program is left on $VA after xdp off"
else
    ok "xdp off removes it"
fi

# Fallback: af_xdp cannot start while a foreign XDP program holds the
# interface (here xdp-tools' allow-all filter, attached by hand, which
# passes every frame to the kernel): auto falls back to
# af_packet quietly, and the foreign program is left in place.
XDPOBJ=/usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_all.o
if ip -n "$A" link set dev "$VA" xdpgeneric obj "$XDPOBJ" sec xdp 2>"$TMP/xdp"; then
    runa ACCEL_IP=10.209.0.3/24 ACCEL_STATS=2 "$SMOKE" --seconds 1 \
        >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc = 0 ] && grep -q "data path: af_packet on" "$TMP/err" &&
       ! grep -q " error " "$TMP/err"; then
        ok "auto falls back to af_packet quietly when af_xdp cannot start"
    else
        bad "fallback (rc $rc)"; cat "$TMP/err"
    fi
    if ip -n "$A" link show "$VA" | grep -q "xdp id"; then
        ok "the foreign XDP program is left in place"
    else
        bad "the foreign XDP program was removed"
    fi
    ip -n "$A" link set dev "$VA" xdpgeneric off
else
    bad "cannot attach $XDPOBJ to $VA: $(cat "$TMP/xdp")"
fi

# One process (tree) per interface: a second one on the same interface
# with another address cannot join the first's port (runtime/share_join.c:
# the owner refuses a different ACCEL_IP); it says so in one line, with the
# reason, and stays on the kernel, and the first keeps working (its XDP
# program is not touched).
runa ACCEL_DRIVER=af_xdp "$SMOKE" --seconds 3 >"$TMP/first" 2>&1 &
fp=$!
sleep 1.5
runa ACCEL_IP=10.209.0.3/24 "$SMOKE" --seconds 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
wait $fp
frc=$?
if [ $rc = 2 ] && grep -q "is already driven by accel process" "$TMP/err" &&
   grep -q "ACCEL_IP differs" "$TMP/err" && [ $frc = 0 ]; then
    ok "a second process on the interface stays on the kernel; the first is unharmed"
else
    bad "second process on a driven interface (rc $rc, first rc $frc)"
    cat "$TMP/err" "$TMP/first"
fi

for spin in 0 200000; do
    if runa ACCEL_POLL_USEC=$spin "$BLOCK" >"$TMP/out" 2>&1; then
        ok "rt_block semantics, ACCEL_POLL_USEC=$spin"
    else
        bad "rt_block semantics, ACCEL_POLL_USEC=$spin"; cat "$TMP/out"
    fi
done

# Missing interface: one line naming ACCEL_IFACE, start fails cleanly.
runa ACCEL_IFACE=nosuch0 "$SMOKE" --seconds 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc = 2 ] && [ "$(grep -c . "$TMP/err")" = 1 ] &&
   grep -q "ACCEL_IFACE=nosuch0: no such network interface" "$TMP/err"; then
    ok "missing interface: $(cat "$TMP/err" | cut -c1-90)..."
else
    bad "missing interface (rc $rc)"; cat "$TMP/err"
fi

# memif: two processes, no kernel in the path.
SOCK=$TMP/memif.sock
ip netns exec "$M" env ACCEL_IP=10.210.0.1/24 \
    ACCEL_VDEV=net_memif0,role=server,socket=$SOCK,socket-abstract=no \
    "$SMOKE" --seconds 5 >"$TMP/srv" 2>&1 &
sp=$!
sleep 1
ip netns exec "$M" env ACCEL_IP=10.210.0.2/24 \
    ACCEL_VDEV=net_memif0,role=client,socket=$SOCK,socket-abstract=no \
    "$SMOKE" --seconds 3 --ping 10.210.0.1 --min-replies 50 >"$TMP/out" 2>&1
rc=$?
wait $sp
if [ $rc = 0 ]; then
    ok "memif: $(tail -1 "$TMP/out")"
else
    bad "memif (rc $rc)"; cat "$TMP/out" "$TMP/srv"
fi

# memif, a full tx ring: a peer that does not poll yet (its ring holds
# 1024 frames) gets 3000 frames in one go. The tx backlog holds what the
# ring has no room for and sends it as the peer drains, so every frame
# arrives; with ACCEL_TX_BACKLOG=0 the rest is dropped at once, as before
# the backlog (TCP would send it again after a timeout); and when the peer
# takes nothing for a second ("stuck": it starts to poll only after the
# sender is done), the backlog is dropped rather than retried forever.
for tb in 8192 0 stuck; do
    tbv=$tb
    [ $tb = stuck ] && tbv=8192
    rm -f "$TMP/go"
    ip netns exec "$M" env ACCEL_IP=10.210.0.1/24 ACCEL_PROGRESS_USEC=0 \
        ACCEL_VDEV=net_memif0,role=server,socket=$SOCK,socket-abstract=no \
        "$SMOKE" --backlog "$TMP/go" >"$TMP/srv" 2>&1 &
    sp=$!
    for _ in $(seq 100); do grep -q started "$TMP/srv" && break; sleep 0.1; done
    ip netns exec "$M" env ACCEL_IP=10.210.0.2/24 ACCEL_PROGRESS_USEC=0 \
        ACCEL_TX_BACKLOG=$tbv \
        ACCEL_VDEV=net_memif0,role=client,socket=$SOCK,socket-abstract=no \
        "$SMOKE" --blast 3000 --seconds 3 >"$TMP/out" 2>&1 &
    cp=$!
    for _ in $(seq 100); do grep -q blasted "$TMP/out" && break; sleep 0.1; done
    [ $tb = stuck ] && wait $cp
    touch "$TMP/go"
    wait $cp
    wait $sp
    srv=$(grep '^backlog' "$TMP/srv")
    cli=$(grep '^blast sent' "$TMP/out")
    set -- $srv
    got=$(( ${3:-0} + ${5:-0} ))
    set -- $cli
    held=${7:-0} dropped=${9:-x}
    # (stuck: the counts are printed before the sender exits, so the drops
    # are the stuck backlog's, not the exit's; the peer's ring went away
    # with the sender.)
    if [ $tb = stuck ] && [ "$held" -ge 1000 ] && [ "$dropped" = "$held" ]; then
        ok "memif, a peer that takes nothing for a second: the $held held frames are dropped"
    elif [ $tb = 8192 ] && [ $got = 3000 ] && [ "$dropped" = 0 ] && [ "$held" -ge 1000 ]; then
        ok "memif, full tx ring: all 3000 frames arrive ($held waited in the tx backlog, none dropped)"
    elif [ $tb = 0 ] && [ "$dropped" != x ] && [ "$dropped" -gt 0 ] &&
         [ $got = $(( 3000 - dropped )) ]; then
        ok "memif, full tx ring, ACCEL_TX_BACKLOG=0: $dropped of 3000 dropped, $got arrive"
    else
        bad "memif, full tx ring, ACCEL_TX_BACKLOG=$tb: server '$srv', client '$cli'"
        cat "$TMP/out" "$TMP/srv"
    fi
done

left=$(ls -d /var/run/dpdk/accel-* 2>/dev/null | wc -l)
[ "$left" = 0 ] && ok "no EAL runtime directory left" ||
    bad "$left EAL runtime directories left in /var/run/dpdk"

[ $fail = 0 ] && echo "all ok" || echo FAILED
exit $fail
