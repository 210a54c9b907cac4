#!/bin/bash
# Scenario: the spin settings change what blocking waits do, measured by
# the counters (no timing is asserted). An accelerated `sockperf
# ping-pong` (UDP, 1 s) in the accelerated netns against a kernel sockperf
# server waits for each reply in recvfrom (-F r), epoll_wait (-F e), poll
# (-F p) or select (-F s). ACCEL_SPIN_AFTER_RX_USEC=0 throughout, so only
# the ACCEL_POLL_USEC options decide. From the client's ACCEL_STATS:
#   sleeps          blocking waits that slept in the kernel
#   wait_spins      blocking waits that spun first
#   wait_spin_hits  blocking waits satisfied while spinning
# (A reply that comes before the thread blocks needs no wait at all, so
# the counts are below the number of round trips; thousands all the same.)
#   1. ACCEL_POLL_USEC=0: the waits sleep (sleeps >= 10, none spins);
#   2. ACCEL_POLL_USEC=100000: the waits spin and the replies are caught
#      spinning (wait_spins >= 10, wait_spin_hits >= 10, sleeps at most
#      1 per 20 spinning waits);
#   3. per kind of call X (RECV/EPOLL/POLL/SELECT, with the matching -F):
#      ACCEL_POLL_USEC=100000 ACCEL_POLL_USEC_X=0 sleeps like 1, and
#      ACCEL_POLL_USEC=0 ACCEL_POLL_USEC_X=100000 spins like 2.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

PORT=11111
MIN=10 # waits in 1 s: thousands; 10 leaves a wide margin

lab_up
echo "U:$KIP:$PORT" >"$T/feed" # -F needs a feed file
bg_start srv K sockperf server -i "$KIP" -p $PORT
slowwait 20 eval "K ss -lunH | grep -q ':$PORT'" || fail "the kernel sockperf server did not start"

# pingpong NAME FLAG ENV...: fills SLEEPS, SPINS and HITS from the
# client's stats.
pingpong() {
    local name=$1 flag=$2
    shift 2
    AX ACCEL_STATS=2 ACCEL_SPIN_AFTER_RX_USEC=0 "$@" \
        sockperf ping-pong -f "$T/feed" -F "$flag" -m 64 -t 1 \
        >"$T/$name.out" 2>"$T/$name.err"
    check_eq "$name: sockperf exit status" "$?" 0
    check "$name: sockperf completed the run" grep -q 'Summary: Latency is' "$T/$name.out"
    SLEEPS=$(stat_get "$T/$name.err" sleeps)
    SPINS=$(stat_get "$T/$name.err" wait_spins)
    HITS=$(stat_get "$T/$name.err" wait_spin_hits)
    log "$name: sleeps=$SLEEPS wait_spins=$SPINS wait_spin_hits=$HITS"
}

expect_sleeps() {
    check_ge "$1: sleeps" "$SLEEPS" $MIN
    check_eq "$1: wait_spins" "$SPINS" 0
    check_eq "$1: wait_spin_hits" "$HITS" 0
}

expect_spins() {
    check_ge "$1: wait_spins" "$SPINS" $MIN
    check_ge "$1: wait_spin_hits" "$HITS" $MIN
    check_le "$1: sleeps (at most 1 per 20 spinning waits)" "$SLEEPS" $((${SPINS:-0} / 20))
}

pingpong nospin r ACCEL_POLL_USEC=0
expect_sleeps nospin
pingpong spin r ACCEL_POLL_USEC=100000
expect_spins spin

for kv in RECV:r EPOLL:e POLL:p SELECT:s; do
    k=${kv%:*} f=${kv#*:}
    pingpong "${k}_off" "$f" ACCEL_POLL_USEC=100000 "ACCEL_POLL_USEC_$k=0"
    expect_sleeps "ACCEL_POLL_USEC=100000 ACCEL_POLL_USEC_$k=0 (-F $f)"
    pingpong "${k}_on" "$f" ACCEL_POLL_USEC=0 "ACCEL_POLL_USEC_$k=100000"
    expect_spins "ACCEL_POLL_USEC=0 ACCEL_POLL_USEC_$k=100000 (-F $f)"
done
finish
