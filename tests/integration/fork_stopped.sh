#!/bin/bash
# Scenario (fork model): a process of the family stops polling, and the
# others keep the port. stopped_child.py (tests/integration/fork/) runs
# under accel-run with a small mbuf pool (ACCEL_MBUFS=4095): after a fork,
# the child receives on a UDP socket and the parent echoes TCP. The child
# is stopped (SIGSTOP, as a debugger would), and a kernel client floods its
# UDP port with 20000 datagrams: the frames for it are parked in its ring,
# each holding an mbuf of the pool the family shares. Checks: the parent
# still echoes a 100 KB TCP payload (before the fix the parked frames
# drained the pool, the port could take no frame at all, and every process
# of the family spun on a receive ring nobody could read); its ACCEL_STATS
# dump counts the frames dropped for the stopped child once the pool ran
# low; after SIGCONT the child is alive and the parent still echoes.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$(dirname "$(readlink -f "$0")")/fork/lib.sh"

fork_lab_up
((FORK_KERNEL)) && skip "the mbuf pool is accel's"

sx_bg srv ACCEL_MBUFS=4095 ACCEL_STATS=2 "$PY" "$FORK_DIR/stopped_child.py" "$AIP" 7501 7502
wait_line "$T/srv.out" '^parent ' || fail "stopped_child.py did not start"
wait_line "$T/srv.out" '^child ' || fail "stopped_child.py did not fork"
child=$(awk '$1 == "child" {print $2}' "$T/srv.out")
peer bulk "$AIP" 7502 1 1 100000 >"$T/echo1.out" 2>&1
check_rc "parent echoes before the stop" "$?" "$T/echo1.out"
# The child's first recv makes it the UDP port's server: let it get there.
peer udpflood "$AIP" 7501 10 >/dev/null 2>&1
sleep 0.5
kill -STOP "$child" || fail "cannot stop the child $child"
peer udpflood "$AIP" 7501 20000 >"$T/flood.out" 2>&1
check_rc "20000 datagrams sent to the stopped child" "$?" "$T/flood.out"
peer bulk "$AIP" 7502 1 1 100000 >"$T/echo2.out" 2>&1
check_rc "parent echoes while the child is stopped and flooded" "$?" "$T/echo2.out"
kill -CONT "$child"
sleep 0.5
check "child alive after SIGCONT" alive "$child"
peer bulk "$AIP" 7502 1 1 100000 >"$T/echo3.out" 2>&1
check_rc "parent echoes after SIGCONT" "$?" "$T/echo3.out"
kill -TERM "$child"
bg_stop srv
low=$(awk '/stats: share_drop_lowmem/ {s += $NF} END {print s + 0}' "$T/srv.err")
check "frames for the stopped child dropped with the pool low ($low)" test "$low" -gt 0
check "the pool-low line names the setting" grep -q 'mbuf pool low.*ACCEL_MBUFS' "$T/srv.err"
finish
