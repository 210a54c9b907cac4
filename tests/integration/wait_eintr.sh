#!/bin/bash
# Scenario: a signal handler interrupts a blocking call on an accelerated
# socket the way Linux does (signal(7)), also while the call spins in the
# library. wait_eintr (tests/integration/wait/wait_eintr.c) runs 15 cases
# against a kernel echo peer: recv/read/accept without SA_RESTART -> EINTR;
# with SA_RESTART recv and accept go on (and return the data / connection
# that comes later) unless SO_RCVTIMEO is set; epoll_wait, epoll_pwait,
# poll, ppoll, select, pselect -> EINTR even with SA_RESTART; a send
# blocked on a full window -> the bytes sent so far, then EINTR.
#   1. On the kernel (the kernel IP on veth-a for that run): the program's
#      output is the expected list, so the expectations are Linux's.
#   2. Under accel-run with ACCEL_POLL_USEC=10000000: the same output. Every
#      timed wait there lasts 3 s, shorter than the 10 s spin, so a spin
#      that missed the signal would end in a timeout (rc=0 / EAGAIN), not
#      EINTR; the counter wait_spin_signals shows each interrupted spin,
#      wait_signals_early each handler that ran in the call before its
#      wait began (on a loaded machine the 200 ms timer can fire while
#      the call is still working): together, all 15.
#   3. ACCEL_POLL_USEC=0 with every ACCEL_POLL_USEC_* override at 10 s: the
#      same, the spins now coming from the per-call options.
#   4. ACCEL_POLL_USEC=0 and ACCEL_SPIN_AFTER_RX_USEC=0: the same output and
#      no spin at all (wait_spin_signals 0).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

WAIT_BIN=${IT_WAIT_BINDIR:-}
WAIT_DIR=$(dirname "$(readlink -f "$0")")/wait
[[ -n $WAIT_BIN && -x $WAIT_BIN/wait_eintr ]] ||
    fail "IT_WAIT_BINDIR='$WAIT_BIN' does not hold the built wait programs"

EXPECTED="recv_norestart rc=-1 errno=EINTR handlers=1
recv_norestart_rcvtimeo rc=-1 errno=EINTR handlers=1
read_restart_rcvtimeo rc=-1 errno=EINTR handlers=1
recv_restart rc=data errno=0 handlers=1
accept_norestart_rcvtimeo rc=-1 errno=EINTR handlers=1
accept_norestart rc=-1 errno=EINTR handlers=1
accept_restart rc=fd errno=0 handlers=1
epoll_wait_restart rc=-1 errno=EINTR handlers=1
epoll_pwait_restart rc=-1 errno=EINTR handlers=1
poll_restart rc=-1 errno=EINTR handlers=1
ppoll_restart rc=-1 errno=EINTR handlers=1
select_restart rc=-1 errno=EINTR handlers=1
pselect_restart rc=-1 errno=EINTR handlers=1
send_norestart rc=partial errno=0 handlers=1
send_full_norestart rc=-1 errno=EINTR handlers=1
END"
NSPINS=15 # the cases whose wait a signal ends (recv_restart's first one too)
PEER_PORT=7300
LPORT=7310
SPIN=10000000

lab_up
bg_start peer K "$PY" "$WAIT_DIR/wait_peer.py" serve "$KIP" "$PEER_PORT"
slowwait 20 grep -q '^listening' "$T/peer.out" || fail "kernel peer did not start"

# check_cases NAME OUTFILE: the program's output is the expected list.
check_cases() {
    local got
    got=$(grep -v '^FAIL' "$2")
    if [[ $got == "$EXPECTED" ]]; then
        pass "$1: all 15 cases as Linux"
    else
        check_fail "$1: output differs from Linux's (< got, > expected): $(diff <(echo "$got") <(echo "$EXPECTED") | tr '\n' ' ')"
    fi
}

log "---- 1. kernel reference"
A ip addr add "$AIP/24" dev "$VETH_A" || fail "cannot add $AIP to $VETH_A"
timeout -k 5 60 ip netns exec "$NS_A" "$WAIT_BIN/wait_eintr" "$KIP" "$PEER_PORT" "$AIP" "$LPORT" \
    >"$T/kernel.out" 2>"$T/kernel.err"
check_eq "kernel: exit status" "$?" 0
A ip addr del "$AIP/24" dev "$VETH_A"
check_cases kernel "$T/kernel.out"

# run NAME ENV...: wait_eintr under accel-run with ENV.
run() {
    local name=$1
    shift
    log "---- $name: $*"
    IT_FG_TIMEOUT=60 AX ACCEL_STATS=2 "$@" "$WAIT_BIN/wait_eintr" "$KIP" "$PEER_PORT" "$AIP" "$LPORT" \
        >"$T/$name.out" 2>"$T/$name.err"
    check_eq "$name: exit status" "$?" 0
    check_cases "$name" "$T/$name.out"
}

# check_signals NAME: every signal ended a spin, or a wait at its start.
check_signals() {
    local spin early
    spin=$(stat_get "$T/$1.err" wait_spin_signals)
    early=$(stat_get "$T/$1.err" wait_signals_early)
    log "$1: wait_spin_signals $spin, wait_signals_early $early"
    check_ge "$1: signals that ended a spin or a wait at its start" "$((spin + early))" $NSPINS
    check_ge "$1: signals that ended a spin (most of them)" "$spin" $((NSPINS - 3))
}

run spin ACCEL_POLL_USEC=$SPIN
check_signals spin

overrides=()
for k in RECV SEND ACCEPT CONNECT EPOLL POLL SELECT; do overrides+=("ACCEL_POLL_USEC_$k=$SPIN"); done
run per_call ACCEL_POLL_USEC=0 "${overrides[@]}"
check_signals per_call

run nospin ACCEL_POLL_USEC=0 ACCEL_SPIN_AFTER_RX_USEC=0
check_eq "nospin: wait_spin_signals" "$(stat_get "$T/nospin.err" wait_spin_signals)" 0
check_eq "nospin: wait_spin_hits" "$(stat_get "$T/nospin.err" wait_spin_hits)" 0
finish
