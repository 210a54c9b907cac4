#!/bin/bash
# Scenario: ACCEL_TEST_IMPAIR (test-only faults in the port layer) between
# two accelerated processes over memif, where no kernel sits in the path.
# In the loopback-only memif netns, a socat server (memif server,
# 10.201.0.1) and a socat client (memif client, 10.201.0.2), both under
# accel-run, exchange 4 MB each way on one TCP connection, at once, while
# each damages the frames it sends:
#   loss:  loss=0.3 on both sides (fixed seeds);
#   all:   loss, dup, reorder, corrupt, delay with jitter and a rate on both
#          sides, the server also on what it receives (dir=both).
# Each run: both files arrive intact (sha256), and each process's
# ACCEL_STATS show the impairment counters moved (test_impair_*), and in
# "all" the corrupted frames were dropped by the receiver's checksum check
# (rx_drop_csum: memif frames are checked when the option is set). Then
# held frames leave on time (a ping-pong with delay=5 both ways), and a
# malformed value is one line naming ACCEL_TEST_IMPAIR and the program runs
# on the kernel. Loss rates stay low and transfers small: lwIP's sender
# recovers slowly from loss for now.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
lab_has_memif_ns || fail "lab has no netns $NS_M"

SIZE=$((4 * 1024 * 1024))
mkfile "$T/srv.send" "$SIZE"
mkfile "$T/cli.send" "$SIZE"

# run_pair NAME SERVER_IMPAIR CLIENT_IMPAIR: one exchange; sets SRV_ERR and
# CLI_ERR (the stats dumps).
run_pair() {
    local name=$1 sock="$T/m-$1.sock" t0 ms
    rm -f "$T/srv.recv" "$T/cli.recv"
    bg_start "srv-$name" MX ACCEL_STATS=2 "ACCEL_TEST_IMPAIR=$2" \
        "ACCEL_VDEV=net_memif0,role=server,socket=$sock" "ACCEL_IP=$MIP_SRV/24" \
        socat -t 60 TCP-LISTEN:9000,reuseaddr "OPEN:$T/srv.send!!CREATE:$T/srv.recv"
    slowwait 20 memif_listening "$sock" || fail "$name: the memif server never listened on $sock"
    t0=$(date +%s%3N)
    MX ACCEL_STATS=2 "ACCEL_TEST_IMPAIR=$3" \
        "ACCEL_VDEV=net_memif0,role=client,socket=$sock" "ACCEL_IP=$MIP_CLI/24" \
        timeout 120 socat -t 60 "OPEN:$T/cli.send!!CREATE:$T/cli.recv" "TCP:$MIP_SRV:9000" \
        >"$T/cli-$name.out" 2>"$T/cli-$name.err"
    check_eq "$name: client exit status" "$?" 0
    ms=$(($(date +%s%3N) - t0))
    busywait 30000 dead "$(bg_pid "srv-$name")" || check_fail "$name: the server did not finish"
    bg_stop "srv-$name"
    log "$name: 2 x $SIZE bytes in $ms ms"
    check_eq "$name: client -> server, sha256" "$(sha "$T/srv.recv" 2>/dev/null)" "$(sha "$T/cli.send")"
    check_eq "$name: server -> client, sha256" "$(sha "$T/cli.recv" 2>/dev/null)" "$(sha "$T/srv.send")"
    SRV_ERR=$T/srv-$name.err
    CLI_ERR=$T/cli-$name.err
    check "$name: the server warned it impairs (TEST-ONLY)" grep -q "ACCEL_TEST_IMPAIR=$2: TEST-ONLY" "$SRV_ERR"
    check "$name: the client ran over memif" grep -q "data path: net_memif" "$CLI_ERR"
}

# counters_moved NAME WHO FILE COUNTER...: each counter of the dump > 0.
counters_moved() {
    local name=$1 who=$2 f=$3 c
    shift 3
    for c in "$@"; do
        check_ge "$name: $who $c" "$(stat_get "$f" "$c")" 1
    done
}

run_pair loss "loss=0.3,seed=1" "loss=0.3,seed=2"
counters_moved loss server "$SRV_ERR" test_impair_dropped
counters_moved loss client "$CLI_ERR" test_impair_dropped
check_eq "loss: nothing else impaired" \
    "$(stat_get "$CLI_ERR" test_impair_duplicated)$(stat_get "$CLI_ERR" test_impair_delayed)" 00

ALL="loss=0.2,dup=0.5,reorder=1,corrupt=0.5,delay=1:0.5,rate=200"
run_pair all "$ALL,seed=3,dir=both" "$ALL,seed=4"
for who in server client; do
    f=$SRV_ERR
    [[ $who == client ]] && f=$CLI_ERR
    counters_moved all "$who" "$f" test_impair_dropped test_impair_duplicated \
        test_impair_corrupted test_impair_reordered test_impair_delayed \
        test_impair_rate_held rx_drop_csum
done

# Held frames leave on time: a TCP ping-pong (sockperf) with delay=5 on
# both sides has a 10 ms round trip, reported as a 5 ms latency; a frame
# left waiting past its due time (for the progress thread's 10 ms, or for
# the next frame) would push it to 10 ms and more. The waits sleep
# between frames (memif: naps of up to 1 ms).
sock=$T/m-delay.sock
bg_start srv-delay MX "ACCEL_TEST_IMPAIR=delay=5" \
    "ACCEL_VDEV=net_memif0,role=server,socket=$sock" "ACCEL_IP=$MIP_SRV/24" \
    sockperf server --tcp -i "$MIP_SRV" -p 11111
slowwait 20 memif_listening "$sock" || fail "delay: the memif server never listened on $sock"
MX "ACCEL_TEST_IMPAIR=delay=5" "ACCEL_VDEV=net_memif0,role=client,socket=$sock" \
    "ACCEL_IP=$MIP_CLI/24" timeout 60 sockperf ping-pong --tcp -i "$MIP_SRV" \
    -p 11111 -m 64 -t 2 >"$T/cli-delay.out" 2>"$T/cli-delay.err"
check_eq "delay: sockperf ping-pong exit status" "$?" 0
p50=$(cat "$T/cli-delay.out" "$T/cli-delay.err" | awk '/percentile 50.000/ {print int($NF)}')
log "delay: sockperf p50 ${p50:-none} us"
check_ge "delay: p50 latency (us) at least the delay" "${p50:-}" 5000
check_le "delay: p50 latency (us) not much past it" "${p50:-}" 8000
bg_stop srv-delay INT

# A malformed value: one line naming the variable; the program runs on the
# kernel (accel-run checks it first; the library alone says the same).
M env ${ACCEL_LIBRARY:+ACCEL_LIBRARY=$ACCEL_LIBRARY} ACCEL_TEST_IMPAIR=loss=x,dir=tx \
    "ACCEL_VDEV=net_memif0,role=server,socket=$T/bad.sock" "ACCEL_IP=$MIP_SRV/24" \
    "$ACCEL_RUN" echo ran >"$T/bad.out" 2>"$T/bad.err"
check_eq "malformed: exit status" "$?" 0
check_eq "malformed: the program ran" "$(cat "$T/bad.out")" ran
check_eq "malformed: one line on stderr" "$(grep -c . "$T/bad.err")" 1
check "malformed: the line names the variable and the item" \
    grep -q "ACCEL_TEST_IMPAIR=loss=x,dir=tx: 'loss=x' is not a percentage" "$T/bad.err"
finish
