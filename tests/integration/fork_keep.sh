#!/bin/bash
# Scenario (fork model c): the parent keeps using a connection after
# forking a child that never touches it. fork_keep
# (tests/integration/fork/fork_keep.c) runs in the accelerated netns with
# a connection it made to a kernel echo peer (connect), or accepted from a
# kernel client (accept); it forks a child that _exit()s, exit()s (atexit
# handlers and library destructors run), runs system("true"), execs true,
# or exits while the parent is blocked in read(). After the child is gone
# the parent echoes 4 MB through the connection and closes it. Checks:
# every step ok (data intact after the fork), and the kernel peer saw the
# whole stream and then EOF (not RST, not a timeout).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$(dirname "$(readlink -f "$0")")/fork/lib.sh"

BYTES=4000000
MODES=(_exit exit system exec recvblock)
fork_lab_up

# peer_result LOG N: line N of a peer log, once it is there.
peer_result() {
    slowwait 20 eval "(( \$(wc -l <'$1') >= $2 ))"
    sed -n "$2p" "$1"
}

log "check: parent connected to a kernel echo server"
echo_peer 7200 "$T/peer-connect.log"
i=0
for mode in "${MODES[@]}"; do
    i=$((i + 1))
    out="$T/keep-connect-$mode.out"
    SX "$FORK_BIN/fork_keep" connect "$KIP" 7200 "$mode" "$BYTES" >"$out" 2>"$T/keep-connect-$mode.err"
    rc=$?
    check_rc "connect/$mode: fork_keep exit status" "$rc" "$out"
    check "connect/$mode: every step ok" grep -qx "ALL OK" "$out"
    check_eq "connect/$mode: the peer saw all data, then EOF" \
        "$(peer_result "$T/peer-connect.log" "$i")" "conn from=$AIP result=eof bytes=$((BYTES + 6))"
done

log "check: parent accepted the connection of a kernel client"
port=7210
for mode in "${MODES[@]}"; do
    port=$((port + 1))
    name="keep-accept-$mode"
    sx_bg "$name" "$FORK_BIN/fork_keep" accept "$AIP" "$port" "$mode" "$BYTES"
    peer echo-client "$AIP" "$port" "$T/peer-$name.log" >"$T/client-$name.out" 2>&1
    pid=$(bg_pid "$name")
    slowwait 60 dead "$pid" || log "$name still running; stopping it"
    bg_stop "$name"
    rc=$?
    check_rc "accept/$mode: fork_keep exit status" "$rc" "$T/$name.out"
    check "accept/$mode: every step ok" grep -qx "ALL OK" "$T/$name.out"
    check_eq "accept/$mode: the client saw all data, then EOF" \
        "$(peer_result "$T/peer-$name.log" 1)" "conn from=$KIP result=eof bytes=$((BYTES + 6))"
done
finish
