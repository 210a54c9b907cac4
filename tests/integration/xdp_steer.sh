#!/bin/bash
# Scenario: the interface is shared with the kernel. While an accelerated
# HTTP server holds the accelerated veth through af_xdp, accel's XDP program
# (runtime/xdp/steer.bpf.c, its IPv6 map filled by runtime/xdpsteer6.c)
# takes only the stack's frames and the kernel keeps the rest. For this
# test the veth gets kernel addresses of its own (10.200.0.3/24,
# fd00:ac::3/64 and fd00:ac::2/64, removed at the end; the stack keeps
# 10.200.0.2 and ACCEL_IP6 fd00:200::2, which the kernel does not have;
# fd00:ac::2's solicited-node group ff02::1:ff00:2 is also the stack's),
# and kernel HTTP servers listen on 10.200.0.3 and [fd00:ac::3].
# Checks, from the peer netns, while the accelerated server (listening on
# 10.200.0.2 and [fd00:200::2]) runs:
#   - the accelerated server answers on 10.200.0.2 and on [fd00:200::2]
#     (the bypass works for both families);
#   - the kernel server answers on 10.200.0.3 and on [fd00:ac::3], the
#     kernel answers ping on 10.200.0.3 and ping -6 on fd00:ac::3 and
#     fd00:ac::2, each after the peer's neighbour cache was flushed (ARP and
#     neighbour discovery for the kernel's addresses reach the kernel, even
#     a solicitation sent to a group the stack shares);
#   - the program attached to the veth is accel's (ip -d link: accel_steer);
#   - at exit, the server's ACCEL_STATS count an accept for each answer.
# After it exits the program stays attached (ACCEL_XDP_KEEP=1, the default)
# with no XSK in its map: the kernel server and ping answer on the kernel's
# addresses, and the accelerated address gets no answer. After a server
# killed with SIGKILL, a second one without IPv6 reuses that program (its
# info line says so) and serves, while the kernel, given the killed
# server's IPv6 address, answers ping -6 on it (the map was emptied); with
# ACCEL_XDP_KEEP=0 it detaches the program at exit.
# Then the same server with ACCEL_XDP_STEER=0 (DPDK's default program, which
# takes every frame of the queue): the accelerated server still answers on
# both families, and the kernel's 10.200.0.3 and fd00:ac::3 (HTTP and ping)
# must be unreachable, which shows the checks above can fail. Afterwards no
# XDP program is left on the veth and the kernel answers on both again.
# Last, `accel-run --prepare` attaches the program before any process:
# the kernel keeps its traffic, the first process adopts it, and a
# --prepare run while that process holds the interface leaves it alone.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
grep -qx "ACCEL_IP6=$AIP6/64" <(printf '%s\n' "${LAB_ENV[@]}") ||
    fail "the lab gives the stack no ACCEL_IP6=$AIP6/64: ${LAB_ENV[*]}"

KIP2=10.200.0.3
K6=fd00:ac::3     # the kernel's IPv6 address on the accelerated veth
K6SNM=fd00:ac::2  # another, whose solicited-node group is the stack's too
PEER6=fd00:ac::1
# The lab keeps the kernel's IPv6 off on the accelerated veth (accel-lab;
# on for the peer's, which has fd00:200::1); on for this test.
v6_sysctl() { echo "net.ipv6.conf.$1.disable_ipv6"; }
addrs_remove() {
    A ip addr del "$KIP2/24" dev "$VETH_A" 2>/dev/null
    A ip -6 addr del "$K6/64" dev "$VETH_A" 2>/dev/null
    A ip -6 addr del "$K6SNM/64" dev "$VETH_A" 2>/dev/null
    K ip -6 addr del "$PEER6/64" dev "$VETH_K" 2>/dev/null
    A ip -6 addr del "$AIP6/64" dev "$VETH_A" 2>/dev/null
    A sysctl -qw "$(v6_sysctl "$VETH_A")=1"
}
# The addresses must not outlive the test: later tests rely on the
# accelerated veth having no kernel address.
trap 'rc=$?; addrs_remove; (exit $rc); cleanup' EXIT
A sysctl -qw "$(v6_sysctl "$VETH_A")=0" || fail "cannot enable IPv6 on $VETH_A"
A ip addr add "$KIP2/24" dev "$VETH_A" || fail "cannot add $KIP2 to $VETH_A"
A ip -6 addr add "$K6/64" dev "$VETH_A" nodad || fail "cannot add $K6 to $VETH_A"
A ip -6 addr add "$K6SNM/64" dev "$VETH_A" nodad || fail "cannot add $K6SNM to $VETH_A"
K ip -6 addr add "$PEER6/64" dev "$VETH_K" nodad || fail "cannot add $PEER6 to $VETH_K"

mkdir -p "$T/www"
echo "accelerated" >"$T/www/who"
mkdir -p "$T/kwww"
echo "kernel" >"$T/kwww/who"
A ip link set lo up
bg_start ksrv A "$PY" -m http.server --bind "$KIP2" --directory "$T/kwww" 8081
bg_start ksrv6 A "$PY" -m http.server --bind "$K6" --directory "$T/kwww" 8081

get() { K curl -s --max-time "${2:-5}" "$1"; }
# flush_neigh: the peer forgets every neighbour on its veth, so the next
# packet to an address resolves it again (ARP, neighbour solicitation).
flush_neigh() {
    K ip -4 neigh flush dev "$VETH_K" 2>/dev/null
    K ip -6 neigh flush dev "$VETH_K" 2>/dev/null
}

# A static HTTP server that exits normally (atexit, the library's port
# close) on SIGTERM. (SIGINT is ignored by background jobs of a script.)
# Arguments: directory, port, then one address per listener (IPv4 or
# IPv6, each its own socket).
SERVE='
import functools, http.server, signal, socket, sys, threading
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
class V6(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
servers = [(V6 if ":" in a else http.server.ThreadingHTTPServer)((a, int(sys.argv[2])), h)
           for a in sys.argv[3:]]
for s in servers[1:]:
    threading.Thread(target=s.serve_forever, daemon=True).start()
servers[0].serve_forever()
'

# start_accel NAME [ENV=V...]: the accelerated server on 10.200.0.2:8080
# and [fd00:200::2]:8080.
start_accel() {
    local name=$1
    shift
    bg_start "$name" AX ACCEL_STATS=2 "$@" "$PY" -c "$SERVE" "$T/www" 8080 "$AIP" "$AIP6"
    wait_tcp K "$AIP" 8080 || fail "$name: the accelerated server did not answer on $AIP:8080"
}

# stop_accel NAME [kept]: stop the server; with kept, accel's program must
# still be attached after it, else no XDP program at all.
stop_accel() {
    bg_stop "$1"
    if [[ ${2-} == kept ]]; then
        check "$1: accel's program stays attached to $VETH_A after the server exited" \
            eval "A ip -d link show dev '$VETH_A' | grep -q 'name accel_steer'"
    else
        slowwait 10 eval "! A ip link show dev '$VETH_A' | grep -q 'xdp'" ||
            fail "$1: an XDP program is left on $VETH_A after the server exited"
    fi
}

# --- steering on (the default) -------------------------------------------
flush_neigh
start_accel steer
check_eq "steer: accelerated server on $AIP" "$(get "http://$AIP:8080/who")" "accelerated"
check_eq "steer: accelerated server on [$AIP6]" "$(get "http://[$AIP6]:8080/who")" "accelerated"
wait_tcp K "$KIP2" 8081 || fail "steer: the kernel server on $KIP2 does not answer"
check_eq "steer: kernel server on $KIP2 while accel holds $VETH_A" \
    "$(get "http://$KIP2:8081/who")" "kernel"
check "steer: the kernel answers ping on $KIP2" K ping -c 2 -W 2 "$KIP2"
check "steer: the kernel answers ping -6 on $K6" K ping -6 -c 2 -W 2 "$K6"
wait_tcp K "$K6" 8081 || fail "steer: the kernel server on [$K6] does not answer"
check_eq "steer: kernel server on [$K6] while accel holds $VETH_A" \
    "$(get "http://[$K6]:8081/who")" "kernel"
flush_neigh
check "steer: the kernel answers ping -6 on $K6SNM (solicited through the stack's group)" \
    K ping -6 -c 2 -W 2 "$K6SNM"
check "steer: accel's program is attached to $VETH_A" \
    eval "A ip -d link show dev '$VETH_A' | grep -q 'name accel_steer'"
check_eq "steer: accelerated server still on $AIP" "$(get "http://$AIP:8080/who")" "accelerated"
check_eq "steer: accelerated server still on [$AIP6]" "$(get "http://[$AIP6]:8080/who")" "accelerated"
stop_accel steer kept
check "steer: the data path is af_xdp, steered" grep -q "data path: af_xdp on $VETH_A (steered)" "$T/steer.err"
check_ge "steer: tcp_accept (the four requests, both families)" "$(stat_get "$T/steer.err" tcp_accept)" 4
check_eq "steer: no socket on the kernel" "$(stat_get "$T/steer.err" sock_kernel)" 0

# --- the program kept with no process: everything goes to the kernel ----
flush_neigh
check_eq "kept: kernel server on $KIP2" "$(get "http://$KIP2:8081/who")" "kernel"
check_eq "kept: kernel server on [$K6]" "$(get "http://[$K6]:8081/who")" "kernel"
check "kept: the kernel answers ping on $KIP2" K ping -c 2 -W 2 "$KIP2"
check_not "kept: nothing answers on the stack's $AIP" \
    eval "[[ -n \$(get 'http://$AIP:8080/who' 2) ]]"

# --- the next process reuses it; ACCEL_XDP_KEEP=0 detaches it at exit ----
# A server killed with SIGKILL leaves its entries in the program's IPv6
# map (its address, its solicited-node group). steer2's stack has no IPv6
# address (ACCEL_IP6 empty) and the kernel takes $AIP6: those entries
# must be gone, or the kernel's neighbour discovery and ping -6 would
# reach the stack.
start_accel steerk
check_eq "steerk: accelerated server on [$AIP6]" "$(get "http://[$AIP6]:8080/who")" "accelerated"
bg_stop steerk KILL
A ip -6 addr add "$AIP6/64" dev "$VETH_A" nodad || fail "cannot add $AIP6 to $VETH_A"
flush_neigh
start_accel steer2 ACCEL_LOG_LEVEL=info ACCEL_XDP_KEEP=0 ACCEL_IP6=
check "steer2: the program left attached is reused" \
    grep -q "steering program left by an earlier process is reused" "$T/steer2.err"
check_eq "steer2: accelerated server on $AIP" "$(get "http://$AIP:8080/who")" "accelerated"
check "steer2: the kernel answers ping -6 on $AIP6 (the killed server's IPv6 entries left the map)" \
    K ping -6 -c 2 -W 2 "$AIP6"
check_eq "steer2: kernel server on $KIP2" "$(get "http://$KIP2:8081/who")" "kernel"
stop_accel steer2
A ip -6 addr del "$AIP6/64" dev "$VETH_A"

# --- DPDK's default program: the kernel loses the queue ------------------
flush_neigh
start_accel nosteer ACCEL_XDP_STEER=0
check_eq "no steer: accelerated server on $AIP" "$(get "http://$AIP:8080/who")" "accelerated"
check_eq "no steer: accelerated server on [$AIP6]" "$(get "http://[$AIP6]:8080/who")" "accelerated"
check_not "no steer: the kernel server on $KIP2 is unreachable" \
    eval "[[ \$(get 'http://$KIP2:8081/who' 3) == kernel ]]"
check_not "no steer: no answer to ping on $KIP2" K ping -c 1 -W 2 "$KIP2"
check_not "no steer: the kernel server on [$K6] is unreachable" \
    eval "[[ \$(get 'http://[$K6]:8081/who' 3) == kernel ]]"
check_not "no steer: no answer to ping -6 on $K6" K ping -6 -c 1 -W 2 "$K6"
stop_accel nosteer
check "no steer: the data path is af_xdp, not steered" grep -qx "accel\[[0-9]*\] stats: data path: af_xdp on $VETH_A" "$T/nosteer.err"

# --- and back: the kernel has its addresses again ------------------------
flush_neigh
check_eq "after: kernel server on $KIP2" "$(get "http://$KIP2:8081/who")" "kernel"
check_eq "after: kernel server on [$K6]" "$(get "http://[$K6]:8081/who")" "kernel"

# --- accel-run --prepare: the program before the first process -----------
# It attaches the program the lab's configuration asks for; with no XSK in
# it the kernel keeps everything; the first process adopts it (its info
# line says so, which it would not if the constants differed). Run while
# that process holds the interface, it must leave the program alone: if
# it emptied the maps the server would stop answering.
check "prepare: accel-run --prepare attaches the program" \
    AX --prepare
check "prepare: accel's program is attached to $VETH_A" \
    eval "A ip -d link show dev '$VETH_A' | grep -q 'name accel_steer'"
flush_neigh
check_eq "prepare: kernel server on $KIP2 (the prepared program passes it)" \
    "$(get "http://$KIP2:8081/who")" "kernel"
check "prepare: the kernel answers ping on $KIP2" K ping -c 2 -W 2 "$KIP2"
start_accel prep ACCEL_LOG_LEVEL=info
check "prep: the first process adopts the prepared program" \
    grep -q "steering program left by an earlier process is reused" "$T/prep.err"
check_eq "prep: accelerated server on $AIP" "$(get "http://$AIP:8080/who")" "accelerated"
AX --prepare 2>"$T/prepare_busy.err"
check_eq "prepare while prep runs: exit status" "$?" 0
check "prepare while prep runs: says the interface is in use" \
    grep -q "accel process [0-9]* runs on it" "$T/prepare_busy.err"
check_eq "prep: still served after that prepare" "$(get "http://$AIP:8080/who")" "accelerated"
stop_accel prep kept
A ip link set dev "$VETH_A" xdp off
finish
