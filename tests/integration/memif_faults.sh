#!/bin/bash
# Scenario: accel's TCP with both ends accelerated, over memif (no kernel
# in the path), through one fault injected by the port layer of both
# processes (ACCEL_TEST_IMPAIR, test-only: each damages the frames it
# sends, so both directions of the path are impaired). In the loopback-only
# memif netns, a socat server (memif server, 10.201.0.1) and a socat client
# (memif client, 10.201.0.2), both under accel-run and pinned to different
# CPUs, exchange a large file each way at once on one connection:
#   loss     loss=2: both senders retransmitted
#   dup      dup=2: both received D-SACKs for the copies and sent them
#   reorder  reorder=5: both queued segments out of order
#   delay    delay=1:0.5,loss=0.1 (jitter never reorders here): every frame
#            was delayed; both retransmitted
#   corrupt  corrupt=1: each dropped the frames the other corrupted for
#            their bad checksums (memif frames are checked while the option
#            is set); both retransmitted
#   rate     rate=300: the frames were paced by the 300 Mbit/s link of each
#            side, goodput at most 315 Mbit/s each way
# Checks: the client finishes within its time limit, both files arrive with
# their sha256, each side's impairment counters moved (so the test cannot
# pass with the fault not applied) and its TCP counters show the recovery.
# usage: memif_faults.sh loss|dup|reorder|delay|corrupt|rate
# IT_FAULT_MB sets the size each way (default 200 MB); IT_FAULT_LIMIT the
# seconds a transfer may take (default 150).
set -u
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

FAULT=${1:-}
case $FAULT in
loss) IMP=loss=2 ;;
dup) IMP=dup=2 ;;
reorder) IMP=reorder=5 ;;
delay) IMP=delay=1:0.5,loss=0.1 ;;
corrupt) IMP=corrupt=1 ;;
rate) IMP=rate=300 ;;
*) fail "usage: memif_faults.sh loss|dup|reorder|delay|corrupt|rate (got '$FAULT')" ;;
esac
MB=${IT_FAULT_MB:-200}
SIZE=$((MB * 1000000))
LIMIT=${IT_FAULT_LIMIT:-150}

lab_up
lab_has_memif_ns || fail "lab has no netns $NS_M"
mkfile "$T/srv.send" "$SIZE"
mkfile "$T/cli.send" "$SIZE"
sock=$T/m.sock

bg_start srv MX ACCEL_STATS=2 "ACCEL_TEST_IMPAIR=$IMP,seed=11" \
    "ACCEL_VDEV=net_memif0,role=server,socket=$sock" "ACCEL_IP=$MIP_SRV/24" \
    taskset -c 1 socat -t 60 TCP-LISTEN:9000,reuseaddr \
    "OPEN:$T/srv.send!!CREATE:$T/srv.recv"
slowwait 20 memif_listening "$sock" || fail "the memif server never listened on $sock"
t0=$(date +%s%3N)
MX ACCEL_STATS=2 "ACCEL_TEST_IMPAIR=$IMP,seed=12" \
    "ACCEL_VDEV=net_memif0,role=client,socket=$sock" "ACCEL_IP=$MIP_CLI/24" \
    timeout "$LIMIT" taskset -c 0 socat -t 60 \
    "OPEN:$T/cli.send!!CREATE:$T/cli.recv" "TCP:$MIP_SRV:9000" \
    >"$T/cli.out" 2>"$T/cli.err"
check_eq "$FAULT: the client finished within $LIMIT s" "$?" 0
ms=$(($(date +%s%3N) - t0))
busywait 30000 dead "$(bg_pid srv)" || check_fail "$FAULT: the server did not finish"
bg_stop srv
log "$FAULT: $MB MB each way at once in $ms ms"
check_eq "$FAULT: client -> server, sha256" "$(sha "$T/srv.recv" 2>/dev/null)" "$(sha "$T/cli.send")"
check_eq "$FAULT: server -> client, sha256" "$(sha "$T/cli.recv" 2>/dev/null)" "$(sha "$T/srv.send")"

# moved WHO FILE COUNTER...: each counter of WHO's ACCEL_STATS dump > 0.
moved() {
    local who=$1 f=$2 c
    shift 2
    for c in "$@"; do
        check_ge "$FAULT: $who $c" "$(stat_get "$f" "$c")" 1
    done
}
for who in server client; do
    f=$T/srv.err
    [[ $who == client ]] && f=$T/cli.err
    check "$FAULT: $who ran over memif" grep -q "data path: net_memif" "$f"
    case $FAULT in
    loss) moved "$who" "$f" test_impair_dropped tcp_retrans_segs tcp_ofo_queued ;;
    dup) moved "$who" "$f" test_impair_duplicated tcp_dsack_rcvd tcp_dsack_sent ;;
    reorder) moved "$who" "$f" test_impair_reordered tcp_ofo_queued ;;
    delay) moved "$who" "$f" test_impair_delayed test_impair_dropped tcp_retrans_segs ;;
    corrupt) moved "$who" "$f" test_impair_corrupted rx_drop_csum tcp_retrans_segs ;;
    rate) moved "$who" "$f" test_impair_rate_held ;;
    esac
done
if [[ $FAULT == rate ]]; then
    # 2 x SIZE bytes over two 300 Mbit/s links, one each way.
    mbit=$((SIZE * 8 / 1000 / (ms > 0 ? ms : 1)))
    log "rate: $mbit Mbit/s each way"
    check_le "rate: goodput each way (Mbit/s) within the shaper's 300" "$mbit" 315
    check_ge "rate: goodput each way (Mbit/s) uses the link" "$mbit" 100
fi
finish
