#!/bin/bash
# Scenario (fork model, UDP): `socat UDP-RECVFROM:PORT,fork EXEC:cat`, the
# inetd "wait" pattern for datagrams: the parent peeks at a datagram to
# learn its sender, forks, and the child reads it and answers through cat.
# On Linux the socket's one queue gives the datagram to the child and the
# parent then waits for the next; under accel both processes held a copy
# of the queued datagram (the stack is copied by fork) and the parent
# forked again and again: some hundred answers to one datagram. Checks,
# over IPv4 and IPv6: three datagrams sent one after the other from the
# kernel peer each get exactly one answer, with their own content; the
# socat parent is still alive at the end. IT_FORK_KERNEL=1 runs the same
# on the kernel (the expected behaviour).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$(dirname "$(readlink -f "$0")")/fork/lib.sh"

fork_lab_up
if ((FORK_KERNEL)); then
    # The lab's accelerated veth has IPv6 off in the kernel: on for the run.
    trap 'rc=$?; A sysctl -qw "net.ipv6.conf.$VETH_A.disable_ipv6=1"; (exit $rc); fork_cleanup' EXIT
    A sysctl -qw "net.ipv6.conf.$VETH_A.disable_ipv6=0" || fail "cannot enable IPv6 on $VETH_A"
    A ip -6 addr add "$AIP6/64" dev "$VETH_A" nodad || fail "cannot add $AIP6"
    FORK_EXTRA_ADDR="$AIP6/64"
fi

# one_answer FAM ADDR PORT N: datagram N to ADDR:PORT gets exactly one
# answer, its own.
one_answer() {
    local fam=$1 addr=$2 port=$3 n=$4 got
    got=$(echo "datagram $n" | K timeout 5 socat -t 1 - "UDP$fam:$addr:$port" 2>&1)
    check_eq "IPv$fam datagram $n: one answer, its own" "$got" "datagram $n"
}

for fam in 4 6; do
    port=$((7300 + fam))
    if [[ $fam == 4 ]]; then addr=$AIP; else addr="[$AIP6]"; fi
    sx_bg "udp$fam" socat "UDP$fam-RECVFROM:$port,fork" EXEC:cat
    # socat says nothing when it listens (its socket may have no kernel
    # side to see with ss): give it the time to start.
    sleep 2
    for n in 1 2 3; do
        one_answer "$fam" "$addr" "$port" "$n"
    done
    check "IPv$fam: the socat parent is still alive" alive "$(bg_pid "udp$fam")"
    bg_stop "udp$fam"
done
finish
