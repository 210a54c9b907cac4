#!/bin/bash
# Scenario (fork model d, stock binaries): programs exec'd by an
# accelerated server join its port (runtime/share_join.c, docs/DESIGN.md
# section 8) instead of falling back to the kernel, which has no address in
# the accelerated netns.
#
#  1. An exec'd client: socat TCP-LISTEN,fork relays each connection to a
#     socat it execs (EXEC:), which connects to a kernel echo peer from
#     10.200.0.2 (only the stack can: the veth has no kernel IP there). A
#     kernel client sends payloads up to 4 MB, one connection at a time,
#     then 4 at a time, and checks each echo's sha256. Checks: every echo
#     intact; the peer saw every connection come from 10.200.0.2 and end
#     with EOF; the relay's ACCEL_STATS counts one join per connection.
#  2. An exec'd server: each connection to the relay execs a socat that
#     listens on another port; a kernel client connects there and both
#     directions carry 2 MB (sha256 checked): the SYN, and every segment
#     after it, are dispatched to the joined process.
#     The relay here is a second program in the netns: it joins the first
#     relay's port, and so do its fork children and what they exec.
#  3. A joined process killed with SIGKILL: the relay's sweep frees its
#     slot (its connection is released), and new joins keep working.
#  4. A process spawned (posix_spawn) by an accelerated Python server
#     joins, echoes, and outlives the server: it says once, in one line,
#     that its port is gone (tests/integration/fork/spawn_orphan.py).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$(dirname "$(readlink -f "$0")")/fork/lib.sh"

fork_lab_up

echo_peer 7300 "$T/peer.log"

# -t 30 on both socats: after one side's EOF, socat closes the other after
# -t seconds (0.5 by default) whether the data is through or not.
log "check: socat relay execs a client socat per connection"
sx_bg relay ACCEL_STATS=2 socat -t 30 "TCP-LISTEN:7400,bind=$AIP,fork,reuseaddr" \
    "EXEC:socat -t 30 - TCP\:$KIP\:7300"
wait_tcp K "$AIP" 7400 || fail "the relay did not start"
peer bulk "$AIP" 7400 6 1 4000000,100000 >"$T/relay-seq.out" 2>&1
check_rc "exec'd client: 6 sequential connections relayed and echoed (sha256)" "$?" "$T/relay-seq.out"
peer bulk "$AIP" 7400 8 4 1000000 >"$T/relay-conc.out" 2>&1
check_rc "exec'd client: 8 connections, 4 at a time, relayed and echoed (sha256)" "$?" "$T/relay-conc.out"
# 15: and the relayed connection of wait_tcp's probe.
slowwait 20 eval "(( \$(wc -l <'$T/peer.log') >= 15 ))"
check_eq "exec'd client: the echo peer saw 15 connections from $AIP, each ended with EOF" \
    "$(awk '{print $2, $3}' "$T/peer.log" | sort | uniq -c | awk '{$1=$1; print}')" "15 from=$AIP result=eof"
check "exec'd client: the relay is still alive" alive "$(bg_pid relay)"

log "check: socat relay execs a listening socat per connection"
sx_bg relay2 ACCEL_STATS=2 socat -t 30 "TCP-LISTEN:7401,bind=$AIP,fork,reuseaddr" \
    "EXEC:socat -t 30 - TCP-LISTEN\:7402\,bind=$AIP\,reuseaddr"
# No wait_tcp probe here: each connection to 7401 starts a server on 7402
# that waits for its own client (a probe's would take the next round's).
# pair's connects retry while refused.
for i in 1 2 3; do
    peer pair "$AIP" 7401 7402 2000000 >"$T/pair-$i.out" 2>&1
    check_rc "exec'd server, round $i: 2 MB each way between the relay's client and the exec'd server's (sha256)" "$?" "$T/pair-$i.out"
done

if ((!FORK_KERNEL)); then
    log "check: a joined process killed with SIGKILL"
    # A client that keeps its relayed connection open: the exec'd socat
    # (the relay's grandchild) is then killed.
    timeout 60 ip netns exec "$NS_K" "$PY" -c "
import socket, time
s = socket.create_connection(('$AIP', 7400), timeout=10)
s.sendall(b'hold\n')
assert s.recv(5) == b'hold\n'
time.sleep(30)" >"$T/hold.out" 2>&1 &
    hold=$!
    victim=
    for _ in $(seq 50); do
        victim=$(pgrep -f "socat -t 30 - TCP:$KIP:7300" | head -1)
        [[ -n $victim ]] && break
        sleep 0.1
    done
    if [[ -n $victim ]]; then
        kill -KILL "$victim"
        pass "exec'd client $victim killed with SIGKILL"
    else
        check_fail "no exec'd client to kill"
    fi
    sleep 0.5
    peer bulk "$AIP" 7400 4 2 300000 >"$T/relay-after.out" 2>&1
    check_rc "after the kill: 4 more connections relayed and echoed (sha256)" "$?" "$T/relay-after.out"
    kill "$hold" 2>/dev/null
    wait "$hold" 2>/dev/null
fi

check "the relay is still alive" alive "$(bg_pid relay)"
bg_stop relay
bg_stop relay2
if ((!FORK_KERNEL)); then
    # The relay parent is the port's owner: it answered every join: one per
    # relayed connection (19, and wait_tcp's probe), the second relay (a
    # program of its own in the netns) and the servers its children exec
    # (3).
    served=$(awk '/stats: +join_served/ {s += $NF} END {print s + 0}' "$T/relay.err")
    check "the owner served a join per exec'd program and the second relay (at least 24, got $served)" test "$served" -ge 24
    check "every exec'd client's data path was the joined port (at least 19)" \
        eval "(( \$(grep -Ec \"stats: data path: joined af_(xdp|packet) on $VETH_A\" '$T/relay.err') >= 19 ))"
    # The second relay joined the first's port; so did its fork children
    # (a joined process's children are joined) and the servers they exec.
    check "the second relay and its children all ran on the joined port" \
        eval "! grep -q 'data path was not started' '$T/relay2.err'"
    check "the second relay's processes (itself, 3 children, 3 exec'd servers): at least 7 joined" \
        eval "(( \$(grep -Ec \"stats: data path: joined af_(xdp|packet) on $VETH_A\" '$T/relay2.err') >= 7 ))"
    check "no exec'd program fell back to the kernel" \
        eval "! grep -q 'cannot join it' '$T/relay.err' '$T/relay2.err'"
fi

if ((!FORK_KERNEL)); then
    log "check: a joined process outliving the port's owner"
    # With the relays gone, a Python server (the port's owner) starts a
    # child with subprocess
    # (posix_spawn: no fork handler runs, the region is made on the join);
    # the child joins, echoes a line through the peer, and outlives its
    # parent: it must say, once, that its port is gone.
    SX ACCEL_STATS=2 "$PY" "$FORK_DIR/spawn_orphan.py" parent "$AIP" 7600 "$KIP" 7300 \
        >"$T/orphan.out" 2>"$T/orphan.err"
    check_eq "orphan: the spawned child echoed through the joined port" "$(cat "$T/orphan.out")" "child echoed"
    # The child's stats come at its exit, after up to 3.5 s of linger (its
    # FIN goes unanswered: nothing receives for it any more).
    slowwait 20 eval "(( \$(grep -c 'stats: data path' '$T/orphan.err') >= 2 ))"
    check "orphan: the child's data path was the joined port" \
        grep -Eq "stats: data path: joined af_(xdp|packet) on $VETH_A" "$T/orphan.err"
    check "orphan: the child said once that the processes driving the port are gone" \
        eval "(( \$(grep -c 'have all exited: this process joined their port' '$T/orphan.err') == 1 ))"
    check "orphan: its stats count it" \
        eval "grep -Eq 'stats: +join_family_gone +1\$' '$T/orphan.err'"
fi

finish
