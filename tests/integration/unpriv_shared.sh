#!/bin/bash
# Scenario: a service that runs as its own user, on the server's one
# address. redis-server runs as user redis (no capability, through
# accel-broker) with ACCEL_IP and ACCEL_IP6 unset, so its stack shares the
# veth's kernel address 10.200.0.2/24 (added for this test, removed at the
# end). The broker loads the program in the shared mode and adds redis's
# port only after sock_diag shows a kernel socket of user redis bound to it
# (the library binds one for every port the stack takes). An nftables rule
# in accel-a drops TCP port 6379 for the kernel, so an answer there comes
# from the stack. Checks:
#   1. PING, SET and GET of 256 KiB from the kernel peer, through the stack;
#   2. meanwhile the kernel keeps the rest of the address: a kernel HTTP
#      server on port 8081 of 10.200.0.2 and ping answer, neighbour caches
#      flushed first (ARP stays the kernel's);
#   3. redis-server connects out from the shared address: REPLICAOF a
#      redis on the peer (its 4-tuple and its ARP request for the peer
#      steered through the broker), the link comes up and the master's key
#      is replicated;
#   4. the broker refused none of redis's steering requests; at exit the
#      counters show the connections on the stack, the broker released
#      the interface, and port 6379 is the kernel's again;
#   5. a raw client of the broker (broker_probe, user redis) may steer a
#      TCP port a kernel socket of its user holds, not root's listener's
#      port nor a UDP port nobody holds (sock_diag in the broker).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$LIBDIR/unpriv.sh"

need_programs redis-server redis-cli
PORT=6379
lab_up
unpriv_setup redis
install -d -o redis -g redis -m 0700 "$T/redis" "$T/kwww"
echo kernel >"$T/kwww/who"
shared_cleanup() {
    A nft delete table inet accel_unpriv_shared 2>/dev/null
    A ip addr del "$AIP/24" dev "$VETH_A" 2>/dev/null
}
trap 'rc=$?; shared_cleanup; unpriv_cleanup; (exit $rc); cleanup' EXIT
A ip addr add "$AIP/24" dev "$VETH_A" || fail "cannot add $AIP to $VETH_A"
A ip link set lo up
A nft -f - <<NFT || fail "cannot load the nftables rule"
table inet accel_unpriv_shared {
    chain input {
        type filter hook input priority 0; policy accept;
        tcp dport $PORT drop
    }
}
NFT
SHARE=(ACCEL_IP= ACCEL_IP6=)
broker_log=/run/accel-broker${ACCEL_LAB_TAG:-}.log
log_lines=$(wc -l <"$broker_log" 2>/dev/null || echo 0)

log "---- 1. redis-server as redis on the kernel's address"
bg_start_as redis redis "${SHARE[@]}" ACCEL_STATS=2 ACCEL_LOG_LEVEL=info \
    redis-server --bind "$AIP" --port "$PORT" --protected-mode no --save "" \
    --appendonly no --dir "$T/redis" --daemonize no --logfile "$T/redis/redis.log"
rpid=$(bg_pid redis)
wait_tcp K "$AIP" "$PORT" || fail "redis-server did not answer on $AIP:$PORT"
check_eq "redis-server has no capability" \
    "$(awk '/^CapEff/ {print $2}' "/proc/$rpid/status")" 0000000000000000
check "the stack shares $AIP with the kernel" \
    grep -q "the stack shares $VETH_A's address $AIP/24 with the kernel" "$T/redis.err"
RC() { K timeout 20 redis-cli -h "$AIP" -p "$PORT" "$@"; }
check_eq "PING through the stack (the kernel drops port $PORT)" "$(RC ping)" PONG
redis_big_roundtrip

log "---- 2. the kernel keeps the rest of $AIP"
bg_start k8081 A "$PY" -m http.server --bind "$AIP" --directory "$T/kwww" 8081
wait_tcp K "$AIP" 8081 || fail "the kernel server on $AIP:8081 does not answer"
K ip neigh flush dev "$VETH_K"
A ip neigh flush dev "$VETH_A"
check_eq "kernel HTTP server on $AIP:8081" \
    "$(K curl -s --max-time 5 "http://$AIP:8081/who")" kernel
K ip neigh flush dev "$VETH_K"
check "the kernel answers ping on $AIP" K ping -c 2 -W 2 "$AIP"
check_eq "PING through the stack again" "$(RC ping)" PONG

log "---- 3. redis-server connects out: a replica of a redis on the peer"
bg_start kredis K redis-server --bind "$KIP" --port 8082 --protected-mode no --save "" \
    --appendonly no --daemonize no
wait_tcp K "$KIP" 8082 || fail "the peer's redis-server did not start"
K redis-cli -h "$KIP" -p 8082 set from-master "$(sha256sum <"$T/big" | cut -d' ' -f1)" >/dev/null
A ip neigh flush dev "$VETH_A"
check_eq "REPLICAOF the peer's redis" "$(RC replicaof "$KIP" 8082)" OK
slowwait 20 eval '[[ $(RC info replication | tr -d "\r" | sed -n "s/^master_link_status://p") == up ]]' ||
    check_fail "the replication link did not come up: $(RC info replication | tr -d '\r' | grep master_)"
check_eq "the replica has the master's key" "$(RC get from-master)" \
    "$(sha256sum <"$T/big" | cut -d' ' -f1)"
check_eq "REPLICAOF NO ONE" "$(RC replicaof no one)" OK
bg_stop kredis

log "---- 4. shutdown"
RC shutdown nosave >/dev/null 2>&1
busywait 10000 dead "$rpid" || check_fail "redis-server did not exit"
wait "$rpid" 2>/dev/null
check_eq "redis-server: exit status" "$?" 0
check_on_stack redis redis 4 100
check_ge "redis: its replication connection was the stack's (tcp_connect)" \
    "$(stat_get "$T/redis.err" tcp_connect)" 1
check_not "the broker refused none of redis's steering requests" \
    eval "tail -n +$((log_lines + 1)) '$broker_log' | grep -q 'refused'"
A nft delete table inet accel_unpriv_shared
bg_start k6379 A "$PY" -m http.server --bind "$AIP" --directory "$T/kwww" "$PORT"
wait_tcp K "$AIP" "$PORT" || fail "a kernel server on $AIP:$PORT does not answer"
check_eq "port $PORT is the kernel's again: a kernel server answers" \
    "$(K curl -s --max-time 5 "http://$AIP:$PORT/who")" kernel
bg_stop k6379

log "---- 5. a client's steering requests, checked against the kernel's sockets"
# broker_probe speaks the broker's protocol itself: HELLO for the shared
# address, then port additions. Port 2222 is root's (a kernel listener),
# 2223 redis's: only the latter may be steered, and UDP 2223 is nobody's.
held='import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(); print("ready", flush=True); time.sleep(60)'
bg_start root2222 A "$PY" -c "$held" "$AIP" 2222
bg_start_plain_as() { # NAME USER ARGS...: a kernel program of USER in NS_A
    local name=$1 user=$2
    shift 2
    NSARGV=(ip netns exec "$NS_A" setpriv --reuid="$user" --regid="$(id -g "$user")"
        --init-groups --inh-caps=-all "$@")
    bg_exec "$name"
}
bg_start_plain_as redis2223 redis "$PY" -c "$held" "$AIP" 2223
wait_line "$T/root2222.out" ready || fail "root's listener did not start"
wait_line "$T/redis2223.out" ready || fail "redis's listener did not start"
sock=/run/accel/broker-$(A stat -L -c %i /proc/self/ns/net).sock
A setpriv --reuid=redis --regid="$(id -g redis)" --init-groups --inh-caps=-all \
    "$BROKER_PROBE" "$sock" "$VETH_A" "$AIP" 24 tcp/2222 tcp/2223 udp/2223 >"$T/probe.out" 2>&1
log "broker_probe: $(tr '\n' ';' <"$T/probe.out")"
check "HELLO for the kernel's address on $VETH_A: accepted (shared)" grep -q '^hello 0 ' "$T/probe.out"
check "TCP port 2222, root's: refused" \
    grep -q "^tcp/2222 -1 .*not bound by a kernel socket of this user" "$T/probe.out"
check "TCP port 2223, redis's own: steered" grep -q '^tcp/2223 0 ' "$T/probe.out"
check "UDP port 2223, nobody's: refused" grep -q "^udp/2223 -1 " "$T/probe.out"
bg_stop root2222
bg_stop redis2223
bg_stop k8081
finish
