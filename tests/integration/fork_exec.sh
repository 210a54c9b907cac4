#!/bin/bash
# Scenario (fork model d): exec. fork_exec (tests/integration/fork/fork_exec.c)
# runs in the accelerated netns with a connection of its own to a kernel
# echo peer, then runs itself again through fork + execv, and through
# system(). The exec'd program checks that the fds without O_CLOEXEC (a
# pipe, a file) still work, that the close-on-exec ones (pipe, file,
# F_SETFD, the parent's SOCK_CLOEXEC connection) are closed (EBADF), and
# that it can open a TCP connection of its own from 10.200.0.2 (which in
# the accelerated netns only the stack can do: its veth has no kernel IP)
# and echo 256 KB. The parent then echoes 1 MB on its own connection.
# Checks: every step ok in both; the peer saw both connections come from
# 10.200.0.2 and end with EOF.
#
# Under accel the exec'd program (LD_PRELOAD is inherited) finds the
# interface driven by its parent and joins its parent's port
# (runtime/share_join.c, docs/DESIGN.md section 8): its ACCEL_STATS line
# names the joined data path, the parent's counts the join, and its
# connection is the stack's (the only way to 10.200.0.2 here). With
# ACCEL_JOIN=0 it must instead say in one line that the interface is
# taken, run on the kernel (its connect fails at once: no kernel address
# here) and leave the parent's connection intact; and with a kernel address
# of its own on the veth (10.200.0.3, for that part only), the exec'd
# program on the kernel must connect from it and echo: accel's XDP program
# leaves the kernel its frames.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$(dirname "$(readlink -f "$0")")/fork/lib.sh"

fork_lab_up

echo_peer 7300 "$T/peer.log"
n=0
# exec_run NAME MODE EXPECT ENV...: fork_exec with the exec'd program
# through MODE (fork or system); EXPECT 1: it connects and echoes, 0: it is
# on the kernel and its connect fails at once.
exec_run() {
    local name=$1 mode=$2 expect=$3 out
    shift 3
    mkdir -p "$T/exec-$name"
    out="$T/exec-$name.out"
    SX FORK_EXEC_EXPECT="$expect" "$@" "$FORK_BIN/fork_exec" "$KIP" 7300 "$AIP" "$T/exec-$name" "$mode" >"$out" 2>"$T/exec-$name.err"
    check_rc "$name: fork_exec exit status" "$?" "$out"
    check "$name: exec'd program: close-on-exec fds closed" grep -q "^ok: exec'd: 5 close-on-exec fds are closed" "$out"
    check "$name: exec'd program: inherited file usable" grep -q "^ok: exec'd: inherited file read and written" "$out"
    if ((expect)); then
        check "$name: exec'd program: own connection from $AIP" grep -q "^ok: exec'd: connected from $AIP" "$out"
        n=$((n + 2))
    else
        # The interface is its parent's: the exec'd program is on the
        # kernel, says so in one line, and fails to connect at once.
        check "$name: exec'd program: on the kernel, connect failed at once" grep -q "^ok: exec'd: on the kernel, connect failed at once" "$out"
        check "$name: exec'd program: one line names the interface's owner" grep -q "already driven by accel process" "$T/exec-$name.err"
        n=$((n + 1))
    fi
    check "$name: parent connection works after the exec'd program" grep -qx "ALL OK" "$out"
    slowwait 20 eval "(( \$(wc -l <'$T/peer.log') >= $n ))"
    check_eq "$name: the peer's connections came from $AIP and ended with EOF" \
        "$(tail -$((expect ? 2 : 1)) "$T/peer.log" | awk '{print $2, $3}' | sort -u)" "from=$AIP result=eof"
}
for mode in fork system; do
    if ((FORK_KERNEL)); then
        exec_run "$mode" "$mode" 1
        continue
    fi
    # The exec'd program joins its parent's port: its connection is the
    # stack's, through the parent's port (cells in, its own packet socket
    # out).
    exec_run "$mode" "$mode" 1 ACCEL_STATS=2
    err=$T/exec-$mode.err
    check "$mode: the exec'd program's data path is the joined port" \
        grep -Eq "stats: data path: joined af_(xdp|packet) on $VETH_A .*\(process [0-9]+'s port\)" "$err"
    check "$mode: the exec'd program received through its cells" \
        eval "grep -E '^accel\[[0-9]+\] stats: +join_rx_frames +[1-9]' '$err' >/dev/null"
    check "$mode: the parent served one join" \
        eval "grep -E '^accel\[[0-9]+\] stats: +join_served +1\$' '$err' >/dev/null"
    check "$mode: the parent copied frames into the joined cells" \
        eval "grep -E '^accel\[[0-9]+\] stats: +share_pumped +[1-9]' '$err' >/dev/null"
    # ACCEL_JOIN=0: the exec'd program stays on the kernel.
    exec_run "$mode-nojoin" "$mode" 0 ACCEL_JOIN=0
done
if ((!FORK_KERNEL)); then
    # With a kernel address of its own on the interface, the exec'd program
    # (on the kernel with ACCEL_JOIN=0, as above) reaches the network there: accel's XDP
    # program gives the kernel every frame that is not the stack's
    # (docs/DESIGN.md section 2). It connects from that address and echoes
    # 256 KB while its parent's accelerated connection keeps working.
    KIP2=10.200.0.3
    A ip addr add "$KIP2/24" dev "$VETH_A" || fail "cannot add $KIP2 to $VETH_A"
    FORK_EXTRA_ADDR="$KIP2/24"
    mkdir -p "$T/exec-kaddr"
    out=$T/exec-kaddr.out
    SX FORK_EXEC_EXPECT=1 ACCEL_JOIN=0 "$FORK_BIN/fork_exec" "$KIP" 7300 "$KIP2" "$T/exec-kaddr" fork >"$out" 2>"$T/exec-kaddr.err"
    check_rc "kernel address: fork_exec exit status" "$?" "$out"
    check "kernel address: exec'd program connected from $KIP2 on the kernel" grep -q "^ok: exec'd: connected from $KIP2" "$out"
    check "kernel address: parent connection works after the exec'd program" grep -qx "ALL OK" "$out"
    n=$((n + 2))
    slowwait 20 eval "(( \$(wc -l <'$T/peer.log') >= $n ))"
    check_eq "kernel address: the peer saw the exec'd program from $KIP2, the parent from $AIP" \
        "$(tail -2 "$T/peer.log" | awk '{print $2, $3}' | sort | tr '\n' ' ')" \
        "from=$AIP result=eof from=$KIP2 result=eof "
    A ip addr del "$KIP2/24" dev "$VETH_A"
    FORK_EXTRA_ADDR=
fi
finish
