#!/bin/bash
# Scenario: UDP in both directions through the stack.
#  1. accelerated socat UDP echo server in the accelerated netns, kernel
#     client in the peer netns: payloads of 1, 100, 1400 and 1472 bytes (the
#     largest unfragmented datagram at MTU 1500) come back equal;
#  2. accelerated clients (python3 and socat under accel-run) against a
#     kernel socat echo server in the peer netns: payloads come back equal,
#     and ACCEL_STATS shows the frames went through the port.
# Datagrams larger than the MTU (8000 bytes) need IP fragmentation and
# reassembly; they are required to work only when stack/lwipopts.h enables
# IP_REASSEMBLY and IP_FRAG (what the stack claims), and are reported
# otherwise.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

PROBE="$LIBDIR/udp_probe.py"
LWIPOPTS="$LIBDIR/../../stack/lwipopts.h"
SIZES=(1 100 1400 1472)
if grep -Eq '^#define[[:space:]]+IP_REASSEMBLY[[:space:]]+1' "$LWIPOPTS" 2>/dev/null &&
    grep -Eq '^#define[[:space:]]+IP_FRAG[[:space:]]+1' "$LWIPOPTS" 2>/dev/null; then
    FRAG_CLAIMED=1
    SIZES+=(8000)
    log "stack claims IP fragmentation + reassembly: 8000-byte datagrams are required"
else
    FRAG_CLAIMED=0
    log "stack does not claim IP reassembly: 8000-byte datagrams only reported"
fi

lab_up

log "check: kernel client -> accelerated socat echo server"
bg_start asocat AX socat -b 65536 -T 30 "UDP-LISTEN:9000,bind=$AIP" PIPE
# socat UDP-LISTEN serves its first peer only, so one probe process (one
# source port) waits for the server and then sends every size.
K "$PY" "$PROBE" client "$AIP" 9000 --wait 30 "${SIZES[@]}" >"$T/k2a.txt"
grep -q "never answered" "$T/k2a.txt" && fail "accelerated socat UDP echo server never answered"
cat "$T/k2a.txt"
for s in "${SIZES[@]}"; do
    check_eq "kernel->accel UDP echo, $s bytes" "$(grep "^size $s " "$T/k2a.txt")" "size $s ok"
done
check "accelerated socat server still alive" alive "$(bg_pid asocat)"
bg_stop asocat
rc=$?
if ((rc == 137)); then
    check_fail "accelerated socat server did not exit on SIGTERM (needed SIGKILL)"
else
    pass "accelerated socat server exits on SIGTERM (status $rc)"
fi

log "check: accelerated client -> kernel socat echo server"
bg_start ksocat K socat -b 65536 "UDP-LISTEN:9001,bind=$KIP,fork" PIPE
slowwait 10 eval "K ss -Hlun 'sport = :9001' | grep -q 9001" || fail "kernel socat did not bind"
AX ACCEL_STATS=2 "$PY" "$PROBE" client "$KIP" 9001 "${SIZES[@]}" >"$T/a2k.txt" 2>"$T/a2k.err"
cat "$T/a2k.txt"
for s in "${SIZES[@]}"; do
    check_eq "accel->kernel UDP echo, $s bytes" "$(grep "^size $s " "$T/a2k.txt")" "size $s ok"
done
if ((!FRAG_CLAIMED)); then
    AX "$PY" "$PROBE" client "$KIP" 9001 8000 >"$T/a2k-frag.txt" 2>&1
    log "info (not claimed): accel<->kernel 8000-byte datagram: $(head -1 "$T/a2k-frag.txt")"
fi
check_ge "python client stats tx_frames" "$(stat_get "$T/a2k.err" tx_frames)" "${#SIZES[@]}"
check_ge "python client stats rx_frames" "$(stat_get "$T/a2k.err" rx_frames)" "${#SIZES[@]}"
check_ge "python client stats sock_accel" "$(stat_get "$T/a2k.err" sock_accel)" 1

log "check: stock socat as the accelerated UDP client"
r=$(echo hello-udp | IT_FG_TIMEOUT=20 AX ACCEL_STATS=2 socat -T 3 -t 3 - "UDP:$KIP:9001" 2>"$T/socat-cli.err")
rc=$?
check_eq "accelerated socat client echo" "$r" "hello-udp"
check_eq "accelerated socat client exits by itself (-T 3; 124/137: hung)" "$rc" 0
check_ge "socat client stats tx_frames" "$(stat_get "$T/socat-cli.err" tx_frames)" 1
finish
