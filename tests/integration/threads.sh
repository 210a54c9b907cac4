#!/bin/bash
# Scenario: multi-threaded programs on accelerated sockets.
# tests/integration/threads/threads.c runs every case (several threads on
# different sockets, a thread blocked in recv or epoll_wait while another
# sends on the same socket, close and shutdown of an fd another thread is
# blocked on in recv, accept or epoll_wait, threads creating and closing
# sockets and pipes concurrently) against a kernel peer
# (threads/peer.py in the peer namespace): first on the kernel (the
# accelerated netns gets the kernel IP for that run), then under
# accel-run. Checks: each run asserts Linux's behaviour itself ("ALL OK"),
# and both runs print the same result lines. Then a thread-per-connection
# echo server (threads/tpc_server.c) under accel-run serves 200
# connections, 50 at a time, from a kernel client checking each echo's
# sha256 (fork/fork_peer.py bulk).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

TDIR=$(dirname "$(readlink -f "$0")")/threads
TBIN=${IT_THREADS_BINDIR:-}
[[ -n $TBIN && -x $TBIN/threads && -x $TBIN/tpc_server ]] ||
    fail "IT_THREADS_BINDIR='$TBIN' does not hold the built thread programs"
PORT=7300

kip_cleanup() {
    local rc=$?
    [[ -n ${KIP_ADDED:-} ]] && ip -n "$NS_A" addr del "$AIP/24" dev "$VETH_A" 2>/dev/null
    (exit "$rc")
    cleanup
}
trap kip_cleanup EXIT

lab_up
bg_start peer K "$PY" "$TDIR/peer.py" server "$KIP" "$PORT"
wait_tcp K "$KIP" "$PORT" || fail "kernel peer did not start"

log "kernel run (subject without accel-run, $AIP on $VETH_A)"
A ip addr add "$AIP/24" dev "$VETH_A" || fail "cannot add $AIP to $VETH_A"
KIP_ADDED=1
timeout -k 5 180 ip netns exec "$NS_A" "$TBIN/threads" "$AIP" "$KIP" "$PORT" all \
    >"$T/kernel.out" 2>"$T/kernel.err"
check_eq "kernel run: every case as Linux (the test itself is right)" "$?" 0
ip -n "$NS_A" addr del "$AIP/24" dev "$VETH_A"
KIP_ADDED=
# The kernel's TIME-WAIT and neighbour entries for AIP do not matter: the
# stack has its own.

log "accelerated run"
AX ACCEL_STATS=2 "$TBIN/threads" "$AIP" "$KIP" "$PORT" all >"$T/accel.out" 2>"$T/accel.err"
check_eq "accel run: every case as Linux" "$?" 0
check "accel run: the data path was used" grep -Eq 'sock_accel[ =:]+[1-9]' "$T/accel.err"
grep -v '^ok: \|^ALL OK' "$T/kernel.out" >"$T/kernel.res"
grep -v '^ok: \|^ALL OK' "$T/accel.out" >"$T/accel.res"
check "same results on the kernel and accelerated" diff "$T/kernel.res" "$T/accel.res"
while read -r line; do log "  $line"; done <"$T/accel.res"

log "thread-per-connection server under accel-run"
bg_start tpc AX "$TBIN/tpc_server" "$AIP" 7400 200

wait_line "$T/tpc.out" '^listening' || fail "tpc_server did not start"
K "$PY" "$TDIR/../fork/fork_peer.py" bulk "$AIP" 7400 200 50 1000,65536,300000 \
    >"$T/bulk.out" 2>&1
check "kernel client: 200 echoes, 50 at a time, sha256 intact" grep -q '^ok conns=200' "$T/bulk.out"
pid=$(bg_pid tpc)
slowwait 30 dead "$pid"
bg_stop tpc
check_eq "tpc_server exit status" "$?" 0
check "tpc_server served 200 connections" grep -q '^served 200 ' "$T/tpc.out"
log "  $(grep '^served' "$T/tpc.out")"
finish
