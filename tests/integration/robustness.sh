#!/bin/bash
# Scenario: malformed frames do not crash or wedge the stack. An accelerated
# nginx (master_process off) serves in the accelerated netns; from the
# kernel peer, tests/lib/malformed_frames.py (scapy) sends ~75 named broken
# frames (truncated headers, bad checksums and lengths, bad IHL and TCP data
# offsets, odd flag combinations, bogus options, UDP length mismatches,
# fragments, ARP garbage) and a flood of 3000 random frames. Checks: the
# process is alive, not spinning (CPU time over 2 s idle stays low), and
# normal traffic (curl of a page and a 5 MB file, ping) still works.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

FLOOD=${IT_FLOOD:-3000}
SEED=${IT_SEED:-$RANDOM}
lab_up
mkdir -p "$T/www"
echo "robust page $RANDOM$RANDOM" >"$T/www/small.html"
mkfile "$T/www/mid.bin" 5000000
nginx_conf "$T/a.conf" "$AIP:80" "$T/www" off
bg_start anginx AX ACCEL_STATS=2 nginx -c "$T/a.conf" -p "$T" -e "$T/a.error.log"
wait_tcp K "$AIP" 80 30 || fail "accelerated nginx not reachable at $AIP:80"
pid=$(bg_pid anginx)

# fetch_ok: a small page and 5 MB from the accelerated nginx, both equal.
fetch_ok() {
    K curl -sS -m 20 -o "$T/small.got" "http://$AIP/small.html" &&
        cmp -s "$T/www/small.html" "$T/small.got" &&
        K curl -sS -m 30 -o "$T/mid.got" "http://$AIP/mid.bin" &&
        cmp -s "$T/www/mid.bin" "$T/mid.got"
}
check "baseline: curl page + 5 MB before the malformed frames" fetch_ok

# The stack's MAC: ACCEL_MAC if the lab sets one, else the veth's own.
DMAC=$(A cat "/sys/class/net/$VETH_A/address")
for e in "${LAB_ENV[@]}"; do [[ $e == ACCEL_MAC=* ]] && DMAC=${e#ACCEL_MAC=}; done
log "sending malformed frames from $NS_K/$VETH_K to $DMAC ($AIP), flood $FLOOD, seed $SEED"
K "$PY" "$LIBDIR/malformed_frames.py" "$VETH_K" "$DMAC" "$AIP" "$KIP" 80 "$FLOOD" "$SEED" \
    >"$T/frames.txt" 2>"$T/frames.err"
check_eq "malformed_frames.py exit status" "$?" 0
cat "$T/frames.txt"

check "nginx alive after the malformed frames" alive "$pid"
busywait 3000 eval "K ping -c 1 -W 1 -q $AIP >/dev/null"
t0=$(cpu_ticks "$pid")
sleep 2 # measuring idle CPU time over a fixed interval is the point here
t1=$(cpu_ticks "$pid")
used_ms=$(((t1 - t0) * 1000 / CLK_TCK))
check_le "nginx CPU ms used over 2 s idle after the flood" "$used_ms" 400
check "curl page + 5 MB after the malformed frames" fetch_ok
check "ping after the malformed frames" K ping -c 3 -W 2 -q "$AIP"
check "nginx still alive at the end" alive "$pid"
bg_stop anginx QUIT
# nginx points its stderr at its error log, so the ACCEL_STATS dump is there.
log "nginx stats: $(grep -E 'rx_frames|rx_drop_stack|tcp_rst_sent' "$T/a.error.log" | tr '\n' ' ')"
check_ge "stats rx_frames counts the flood" "$(stat_get "$T/a.error.log" rx_frames)" "$FLOOD"
finish
