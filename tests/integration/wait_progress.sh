#!/bin/bash
# Scenario: TCP keeps moving while no application thread is in the library
# (the progress thread), and an idle process costs no CPU unless asked.
# wait_idle (tests/integration/wait/wait_idle.c) runs under accel-run in the
# accelerated netns and spends its time blocked in read() on a FIFO (a
# kernel fd); between the commands the test writes there, nothing of it
# runs in the stack. Kernel peers (wait/wait_peer.py) in the peer netns:
#   1. backlog: 8 clients connect to a listener nobody accepts on and each
#      sends 200 KB: every connect completes and every byte is ACKed
#      (the client's SIOCOUTQ reaches 0);
#   2. keep-alive: a client probing every second (2 unanswered probes are
#      fatal) stays connected for 5 s and sent at least 3 probes, so they
#      were answered;
#   3. retransmission and timers: the peer's address is removed (its kernel
#      drops what comes), the server sends 100 KB on an accepted connection
#      and goes back to its FIFO; 6 s later the address is back and the
#      client receives all 100 KB (retransmitted while the server slept).
#      Meanwhile the server's keep-alive (1 s idle, 1 s apart, 2 probes) on
#      another accepted connection went unanswered: a non-blocking recv on
#      it then fails with ETIMEDOUT at once (the keep-alive timer ran);
#   4. the server accepts the 8 backlog connections and reads 200 KB from
#      each (the ACKed data was kept);
#   5. idle CPU: the server uses at most 10 % of a CPU over 2 s.
# The whole scenario runs twice: with the default progress thread (which
# sleeps), and with ACCEL_PROGRESS_SPIN=1 ACCEL_PROGRESS_CPU=1, where the
# progress thread must be pinned to CPU 1 and burn at least 25 % of a CPU
# over the 2 s (it never sleeps; the margin allows for a loaded machine).
# The default scenario then checks TIME-WAIT expiry (60 s, 2 * TCP_MSL, as
# Linux): the server connects from a fixed port to a kernel echo peer and
# closes first; a bind to that port without SO_REUSEADDR is EADDRINUSE
# while the connection is in TIME-WAIT (as on Linux), and succeeds 62 s
# later, the server having spent the whole time in read() on its FIFO
# (the progress thread ran the timer).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

WAIT_BIN=${IT_WAIT_BINDIR:-}
WAIT_DIR=$(dirname "$(readlink -f "$0")")/wait
[[ -n $WAIT_BIN && -x $WAIT_BIN/wait_idle ]] ||
    fail "IT_WAIT_BINDIR='$WAIT_BIN' does not hold the built wait programs"
PEER=$WAIT_DIR/wait_peer.py
NHOLD=8
HOLD_BYTES=200000
SEND_BYTES=100000
IDLE_MAX_MS=200 # 10 % of a CPU over 2 s (a sleeping progress thread: ~1 %)
SPIN_MIN_MS=500 # 25 % of a CPU over 2 s (a spinning one: up to 100 %)

lab_up

# cmd FIFO LINE: send one command to the server (bounded: a dead server
# never opens the FIFO).
cmd() { timeout 20 bash -c 'echo "$2" >"$1"' _ "$1" "$2"; }

# progress_tid PID: the thread named accel-progress.
progress_tid() {
    local t
    for t in /proc/"$1"/task/*; do
        [[ $(cat "$t/comm" 2>/dev/null) == accel-progress ]] && basename "$t" && return 0
    done
    return 1
}

# timewait NAME FIFO OUT PORT: TIME-WAIT made and expired while idle.
timewait() {
    local name=$1 fifo=$2 out=$3 port=$4 lport=$(($4 + 1000))
    bg_start "echo-$name" K "$PY" "$PEER" serve "$KIP" "$port"
    wait_line "$T/echo-$name.out" '^listening' || fail "$name: the echo peer did not start"
    cmd "$fifo" "twclose $port $lport"
    wait_line "$out" '^(done twclose|FAIL)' 30
    check "$name: connected, exchanged a line and closed first" grep -qx "twclose ok" "$out"
    sleep 1 # the peer's FIN arrives: TIME-WAIT
    cmd "$fifo" "rebind $lport"
    wait_line "$out" '^done rebind' 20
    check_eq "$name: the port is held in TIME-WAIT" \
        "$(grep '^rebind ' "$out" | tail -1)" "rebind rc=-1 errno=EADDRINUSE"
    sleep 62 # TIME-WAIT is 60 s; nothing of the server runs meanwhile
    cmd "$fifo" "rebind $lport"
    slowwait 20 test "$(grep -c '^done rebind' "$out")" -ge 2
    check_eq "$name: TIME-WAIT expired while the server slept" \
        "$(grep '^rebind ' "$out" | tail -1)" "rebind rc=0 errno=0"
    bg_stop "echo-$name"
}

# scenario NAME PORT ENV...
scenario() {
    local name=$1 port=$2
    shift 2
    local fifo="$T/$name.fifo" srv="srv-$name" pid out line t0 used tid
    mkfifo "$fifo"
    log "---- $name: $*"
    bg_start "$srv" AX ACCEL_STATS=2 PEER_IP="$KIP" "$@" "$WAIT_BIN/wait_idle" "$AIP" "$port" "$fifo"
    out="$T/$srv.out"
    wait_line "$out" '^listening' 30 || fail "$name: the server did not start"
    pid=$(bg_pid "$srv")
    bg_start "rc-$name" K "$PY" "$PEER" recvconn "$AIP" $((port + 1)) $SEND_BYTES
    wait_line "$out" '^ready' || fail "$name: the server did not accept its two connections"

    # 1. handshakes and ACKs for a listener nobody accepts on
    bg_start "hold-$name" K "$PY" "$PEER" hold "$AIP" "$port" $NHOLD $HOLD_BYTES
    wait_line "$T/hold-$name.out" '^(acked|FAIL)' 60
    check "$name: $NHOLD connections completed unaccepted" grep -qx "connected $NHOLD" "$T/hold-$name.out"
    check "$name: all bytes sent to them were ACKed" grep -qx "acked $NHOLD" "$T/hold-$name.out"

    # 2. keep-alive probes answered
    bg_start "ka-$name" K "$PY" "$PEER" keepalive "$AIP" "$port" 5
    wait_line "$T/ka-$name.out" '^(alive|dead|FAIL)' 40
    line=$(grep -E '^(alive|dead|FAIL)' "$T/ka-$name.out")
    if [[ $line =~ ^alive\ probes=([0-9]+)$ ]]; then
        check_ge "$name: keep-alive probes answered (client alive after 5 s)" "${BASH_REMATCH[1]}" 3
    else
        check_fail "$name: keep-alive client: '$line'"
    fi

    # 3. retransmission and the keep-alive timer while the server sleeps
    K ip addr del "$KIP/24" dev "$VETH_K" || fail "cannot remove $KIP"
    cmd "$fifo" "send $SEND_BYTES"
    wait_line "$out" '^done send' || check_fail "$name: the server did not send"
    sleep 6 # the probes go unanswered and the first transmission is lost
    K ip addr add "$KIP/24" dev "$VETH_K" || fail "cannot restore $KIP"
    wait_line "$T/rc-$name.out" '^got ' 60
    check "$name: data sent while the peer was away arrived (retransmitted)" \
        grep -qx "got $SEND_BYTES" "$T/rc-$name.out"
    cmd "$fifo" check
    wait_line "$out" '^done check'
    check_eq "$name: the server's keep-alive timed the connection out" \
        "$(grep '^check ' "$out")" "check rc=-1 errno=ETIMEDOUT"

    # 4. the data behind the handshakes
    cmd "$fifo" "accept $NHOLD $HOLD_BYTES"
    wait_line "$out" '^(done accept|FAIL)' 60
    check "$name: accepted and read the backlog's data" \
        grep -qx "accepted $NHOLD bytes $((NHOLD * HOLD_BYTES))" "$out"

    # 5. CPU while idle
    t0=$(cpu_ticks "$pid")
    sleep 2 # measuring idle CPU time over a fixed interval is the point here
    used=$((($(cpu_ticks "$pid") - t0) * 1000 / CLK_TCK))
    if [[ $name == default ]]; then
        check_le "$name: CPU ms used over 2 s idle" "$used" $IDLE_MAX_MS
    else
        check_ge "$name: CPU ms used over 2 s idle by the spinning progress thread" "$used" $SPIN_MIN_MS
        tid=$(progress_tid "$pid")
        check_eq "$name: the progress thread is pinned to CPU 1" \
            "$(awk '/^Cpus_allowed_list/ {print $2}' "/proc/$pid/task/$tid/status" 2>/dev/null)" 1
    fi

    [[ $name == default ]] && timewait "$name" "$fifo" "$out" $((port + 2))

    cmd "$fifo" exit
    slowwait 20 dead "$pid" || check_fail "$name: the server did not exit"
    bg_stop "$srv"
    check_eq "$name: server exit status" "$?" 0
    for p in rc hold ka; do bg_stop "$p-$name"; done
}

scenario default 7400
scenario spin 7500 ACCEL_PROGRESS_SPIN=1 ACCEL_PROGRESS_CPU=1
finish
