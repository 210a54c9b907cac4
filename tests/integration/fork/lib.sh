# shellcheck shell=bash
# Helpers for the fork tests (tests/integration/fork_*.sh), sourced after
# tests/lib/netns.sh.
#
# The subject programs run in the accelerated netns under accel-run (the
# default), or on the kernel with IT_FORK_KERNEL=1: then veth-a gets the
# kernel IP 10.200.0.2/24 for the run (removed at exit), and the same
# programs run without accel-run, which validates the tests themselves.
#   IT_FORK_BINDIR  where fork_server, fork_inetd, fork_keep, fork_exec are
#                   (set by ctest: the build tree's tests/integration/fork)

FORK_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
FORK_PEER="$FORK_DIR/fork_peer.py"
FORK_BIN=${IT_FORK_BINDIR:-}
FORK_KERNEL=${IT_FORK_KERNEL:-0}

[[ -n $FORK_BIN && -x $FORK_BIN/fork_server ]] ||
    fail "IT_FORK_BINDIR='$FORK_BIN' does not hold the built fork programs"

# fork_lab_up: lab_up, plus the kernel IP on veth-a in kernel mode.
fork_lab_up() {
    lab_up
    if ((FORK_KERNEL)); then
        A ip addr add "$AIP/24" dev "$VETH_A" || fail "cannot add $AIP to $VETH_A"
        FORK_KIP_ADDED=1
        log "mode: kernel (subject programs without accel-run, $AIP on $VETH_A)"
    else
        log "mode: accel (subject programs under accel-run)"
    fi
}

fork_cleanup() {
    local rc=$?
    if [[ -n ${FORK_KIP_ADDED:-} ]]; then
        ip -n "$NS_A" addr del "$AIP/24" dev "$VETH_A" 2>/dev/null
    fi
    # A kernel address a test added for a part of its run.
    if [[ -n ${FORK_EXTRA_ADDR:-} ]]; then
        ip -n "$NS_A" addr del "$FORK_EXTRA_ADDR" dev "$VETH_A" 2>/dev/null
    fi
    (exit "$rc")
    cleanup
}
trap fork_cleanup EXIT

# SX ARGS...: run a subject program in the accelerated netns in the
# foreground (bounded like AX); leading NAME=value words are environment.
SX() {
    if ((FORK_KERNEL)); then
        timeout -k 5 "${IT_FG_TIMEOUT:-180}" ip netns exec "$NS_A" env "$@"
    else
        AX "$@"
    fi
}

# sx_bg NAME ARGS...: the same in the background (bg_start).
sx_bg() {
    local name=$1
    shift
    if ((FORK_KERNEL)); then
        bg_start "$name" A env "$@"
    else
        bg_start "$name" AX "$@"
    fi
}

# echo_peer PORT LOG: the kernel echo peer (fork_peer.py echo-server) on
# $KIP:PORT in the background (bg name "echo"), logging each connection to
# LOG (emptied once it listens).
echo_peer() {
    bg_start echo K "$PY" "$FORK_PEER" echo-server "$KIP" "$1" "$2"
    wait_line "$T/echo.out" '^listening' || fail "kernel echo peer did not start"
    : >"$2"
}

# peer ARGS...: fork_peer.py in the kernel peer netns (bounded).
peer() { timeout -k 5 "${IT_FG_TIMEOUT:-180}" ip netns exec "$NS_K" "$PY" "$FORK_PEER" "$@"; }

# check_rc DESC RC OUTFILE: RC is 0; otherwise name the program's first
# "FAIL: ..." line from OUTFILE.
check_rc() {
    if [[ $2 == 0 ]]; then
        pass "$1"
    else
        check_fail "$1: exit status $2: $(grep -m1 '^FAIL' "$3" 2>/dev/null)"
    fi
}
