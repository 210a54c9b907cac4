#!/bin/bash
# Scenario: both ends accelerated, joined by memif, no kernel in the path.
# Inside the loopback-only memif netns, `accel-run sockperf server` (memif
# server role, 10.201.0.1) and `accel-run sockperf ping-pong` (memif client,
# 10.201.0.2) complete a 3 s run with latency percentiles, over TCP and then
# over UDP. Both processes' ACCEL_STATS show frames through the port.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
lab_has_memif_ns || fail "lab has no netns $NS_M"

# run_pair PROTO_NAME [--tcp]
run_pair() {
    local name=$1 sock="$T/m-$1.sock" o p50
    shift
    bg_start "srv-$name" MX ACCEL_STATS=2 "ACCEL_VDEV=net_memif0,role=server,socket=$sock" \
        "ACCEL_IP=$MIP_SRV/24" sockperf server "$@" -i "$MIP_SRV" -p 11111
    slowwait 20 memif_listening "$sock" || fail "$name: the memif server never listened on $sock"
    # --mps: at its default (max) rate sockperf sizes its sequence table
    # for 800k round trips a second and stops with "ERROR: _seqN >
    # m_maxSequenceNo" (exit 6) when a run goes faster: UDP over memif did
    # in 1 run of 6 (1.2 us round trips). A functional run needs no more.
    MX ACCEL_STATS=2 "ACCEL_VDEV=net_memif0,role=client,socket=$sock" "ACCEL_IP=$MIP_CLI/24" \
        timeout 60 sockperf ping-pong "$@" -i "$MIP_SRV" -p 11111 -m 64 -t 3 --mps=400000 \
        >"$T/cli-$name.out" 2>"$T/cli-$name.err"
    check_eq "$name: sockperf ping-pong exit status" "$?" 0
    o=$(cat "$T/cli-$name.out" "$T/cli-$name.err")
    p50=$(grep 'percentile 50.000' <<<"$o" | awk '{print $NF}')
    if [[ -n $p50 ]]; then
        pass "$name: ping-pong completed, p50 $p50 us"
        grep -E 'Summary: Latency|percentile (50|99)\.000' <<<"$o"
    else
        check_fail "$name: ping-pong printed no percentiles: $(tail -3 <<<"$o" | tr '\n' ' ')"
    fi
    check_ge "$name: client stats tx_frames" "$(stat_get "$T/cli-$name.err" tx_frames)" 1000
    check "$name: sockperf server still alive" alive "$(bg_pid "srv-$name")"
    bg_stop "srv-$name" INT
    check_ge "$name: server stats rx_frames" "$(stat_get "$T/srv-$name.err" rx_frames)" 1000
}

run_pair tcp --tcp
run_pair udp
finish
