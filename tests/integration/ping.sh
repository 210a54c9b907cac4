#!/bin/bash
# Scenario: the stack answers ICMP echo. An accelerated socat (holding a UDP
# socket, so the port and stack are up) runs in the accelerated netns, which
# has no kernel IP; a kernel ping from the peer netns must get every reply:
# `ping -c 3`, `ping -s 1400 -c 3`, and 20 quick pings. A 3000-byte ping
# (IP fragments) is required only when stack/lwipopts.h claims IP_REASSEMBLY
# and IP_FRAG.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

LWIPOPTS="$LIBDIR/../../stack/lwipopts.h"
lab_up
bg_start holder AX ACCEL_STATS=2 socat -T 120 "UDP-LISTEN:9000,bind=$AIP" PIPE
slowwait 30 K ping -c 1 -W 1 -q "$AIP" >/dev/null || fail "stack at $AIP never answered a ping"

# received COUNT ARGS...: ping, print the number of replies.
received() {
    K ping -q "$@" "$AIP" 2>&1 | tee -a "$T/ping.txt" |
        awk -F', ' '/packets transmitted/ {split($2, a, " "); print a[1]}'
}
check_eq "ping -c 3: replies" "$(received -c 3 -W 2)" 3
check_eq "ping -s 1400 -c 3: replies" "$(received -s 1400 -c 3 -W 2)" 3
check_eq "ping -i 0.05 -c 20: replies" "$(received -i 0.05 -c 20 -W 2)" 20
if grep -Eq '^#define[[:space:]]+IP_REASSEMBLY[[:space:]]+1' "$LWIPOPTS" 2>/dev/null &&
    grep -Eq '^#define[[:space:]]+IP_FRAG[[:space:]]+1' "$LWIPOPTS" 2>/dev/null; then
    check_eq "ping -s 3000 (fragments) -c 3: replies" "$(received -s 3000 -c 3 -W 2)" 3
else
    log "info (not claimed): ping -s 3000 replies: $(received -s 3000 -c 2 -W 1)"
fi
check "holder process still alive" alive "$(bg_pid holder)"
grep rtt "$T/ping.txt" | head -3
bg_stop holder
check_ge "holder stats rx_frames (pings went through the port)" "$(stat_get "$T/holder.err" rx_frames)" 29
finish
