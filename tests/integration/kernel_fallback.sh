#!/bin/bash
# Scenario: kernel fallback inside an accelerated process. fallback_probe
# (tests/integration/fallback_probe.c) runs under accel-run in the
# accelerated netns; while it holds an accelerated TCP connection to a
# kernel echo server in the peer netns it also uses TCP to 127.0.0.1 (a
# kernel echo server on the accelerated netns's loopback), Unix stream and
# datagram sockets, a pipe and a file, then waits on accelerated and kernel
# fds together (poll, epoll, select) and moves 1 MB non-blocking. Checks:
# every step ok, getsockname of the accelerated socket is the stack's IP,
# and ACCEL_STATS counts exactly one active TCP connection (the loopback one
# stayed on the kernel).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

PROBE_BIN=${FALLBACK_PROBE:-}
[[ -x $PROBE_BIN ]] || fail "FALLBACK_PROBE='$PROBE_BIN' is not the built fallback_probe"
lab_up

A ip link set lo up
# -b 4096: socat's PIPE echo writes into a pipe only it reads; a write
# larger than one page can block on a nearly full pipe and deadlock socat
# (select says writable with one free page). Writes <= PIPE_BUF cannot.
bg_start kecho K socat -b 4096 "TCP-LISTEN:7000,bind=$KIP,fork,reuseaddr" PIPE
bg_start loecho A socat -b 4096 "TCP-LISTEN:7001,bind=127.0.0.1,fork,reuseaddr" PIPE
wait_tcp K "$KIP" 7000 || fail "kernel echo server in $NS_K did not start"
wait_tcp A 127.0.0.1 7001 || fail "loopback echo server in $NS_A did not start"

AX ACCEL_STATS=2 timeout 60 "$PROBE_BIN" "$KIP" 7000 "$AIP" 7001 "$T" >"$T/probe.out" 2>"$T/probe.err"
rc=$?
cat "$T/probe.out"
check_eq "fallback_probe exit status" "$rc" 0
check "fallback_probe finished every step" grep -qx "ALL OK" "$T/probe.out"
check_eq "stats tcp_connect (only the accelerated connection)" "$(stat_get "$T/probe.err" tcp_connect)" 1
check_ge "stats rx_frames (1 MB echoed)" "$(stat_get "$T/probe.err" rx_frames)" 700
check_ge "stats sock_kernel (the loopback socket)" "$(stat_get "$T/probe.err" sock_kernel)" 1

# A fork child of a process that never waited in the library keeps its
# standard fds (a regression once closed fd 0 in every fork child: `timeout
# sockperf` then ran sockperf without stdin and its socket took fd 0).
out=$(AX "$PY" -c '
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.fstat(0); os._exit(0)
    except OSError:
        os._exit(3)
_, st = os.waitpid(pid, 0)
print("child-status", os.waitstatus_to_exitcode(st))
' </dev/null 2>&1)
check_eq "fork child keeps fd 0" "$(grep -o 'child-status .*' <<<"$out")" "child-status 0"
finish
