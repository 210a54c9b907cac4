#!/bin/bash
# Scenario: processes that may not use the stack get the kernel, with one
# log line saying why and how to fix it (docs/DESIGN.md section 3,
# "Privileges"). veth-a gets a kernel address too (10.200.0.3) for the
# test, so that a program left on the kernel still works.
#
# Checks:
#   1. a TCP echo server under accel-run as nobody (not in the group
#      accel, no capability): it serves through the kernel; its stderr is
#      exactly one line, naming accel-broker and the group to join; the
#      broker saw nothing it had to refuse (nobody cannot reach its socket);
#   2. the same server as postgres (in the group) while redis-server, as
#      redis, drives the interface through the broker: it cannot join a
#      process of another user, serves through the kernel, one line
#      naming the owner; redis still answers on the stack;
#   3. redis killed with SIGKILL: the broker releases the interface and
#      leaves accel's program attached (ACCEL_XDP_KEEP);
#   4. postgres (in the group) with no broker running: the kernel, one line
#      saying to start accel-broker.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$LIBDIR/unpriv.sh"

KIP_A=10.200.0.3
lab_up
unpriv_setup redis postgres
A ip addr add "$KIP_A/24" dev "$VETH_A" || fail "cannot add $KIP_A to $VETH_A"
busywait 3000 K ping -c1 -W1 "$KIP_A" >/dev/null || fail "$KIP_A does not answer ping"

cat >"$T/echo.py" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(4)
print("listening", flush=True)
for _ in range(2):
    c, _ = s.accept()
    c.sendall(c.recv(100))
    c.close()
PY
chmod 644 "$T/echo.py"

# echo_once PORT: a kernel client's round trip to KIP_A:PORT.
echo_once() {
    K "$PY" -c "import socket,sys; c=socket.create_connection(('$KIP_A',$1),5); c.sendall(b'ping'); sys.stdout.write(c.recv(10).decode())"
}

# one_line NAME ERE: NAME's stderr is one line, matching ERE.
one_line() {
    check_eq "$1: one line on stderr" "$(wc -l <"$T/$1.err")" 1
    # (the line itself goes into the failure message)
    check "$1: the line says why" bash -c 'grep -Eq "$1" "$2" || { cat "$2"; exit 1; }' \
        _ "$2" "$T/$1.err"
}

log "---- 1. nobody: not in the group"
bg_start_as nob nobody "$PY" "$T/echo.py" 7001
wait_line "$T/nob.out" '^listening' || fail "the server of nobody did not start"
check_eq "nobody's server answers through the kernel" "$(echo_once 7001)" ping
check_eq "again" "$(echo_once 7001)" ping
bg_stop nob
one_line nob "^accel\[[0-9:]+\] error start: ACCEL_IFACE=$VETH_A: .* cannot reach accel-broker .*Permission denied.* not in the broker's group .*usermod -aG accel.*uses the kernel"

log "---- 2. postgres while redis drives the interface"
install -d -o redis -g redis -m 0700 "$T/redis"
bg_start_as redis redis redis-server --bind "$AIP" --port 6379 --protected-mode no \
    --save "" --appendonly no --dir "$T/redis" --daemonize no
wait_tcp K "$AIP" 6379 || fail "redis-server did not start"
bg_start_as pgu postgres "$PY" "$T/echo.py" 7002
wait_line "$T/pgu.out" '^listening' || fail "the server of postgres did not start"
check_eq "postgres's server answers through the kernel" "$(echo_once 7002)" ping
check_eq "again" "$(echo_once 7002)" ping
bg_stop pgu
one_line pgu "^accel\[[0-9:]+\] error start: ACCEL_IFACE=$VETH_A is already driven by accel process $(bg_pid redis) and this process cannot join it .*uses the kernel"
check_eq "redis still answers on the stack" \
    "$(K timeout 10 redis-cli -h "$AIP" ping)" PONG
log "---- 3. redis killed: the broker takes the interface back"
bg_stop redis KILL
busywait 3000 broker_released "$(bg_pid redis)" redis &&
    pass "the broker released $VETH_A" || check_fail "the broker did not release $VETH_A"
check "accel's program stays attached after kill -9 (ACCEL_XDP_KEEP)" \
    eval "ip -n $NS_A -d link show dev $VETH_A | grep -q 'name accel_steer'"
log "---- 4. postgres (in the group) with no broker running"
"$ACCEL_LAB" broker stop >/dev/null
bg_start_as pgn postgres "$PY" "$T/echo.py" 7003
wait_line "$T/pgn.out" '^listening' || fail "the server of postgres did not start"
check_eq "postgres's server answers through the kernel" "$(echo_once 7003)" ping
check_eq "again" "$(echo_once 7003)" ping
bg_stop pgn
one_line pgn "^accel\[[0-9:]+\] error start: ACCEL_IFACE=$VETH_A: .* cannot reach accel-broker .*start accel-broker in this network namespace.*uses the kernel"
A ip addr del "$KIP_A/24" dev "$VETH_A"
finish
