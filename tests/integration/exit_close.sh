#!/bin/bash
# Scenario: a server closes a connection and exits at once; the client
# reads the EOF and closes its side 100 ms later. Linux answers that FIN
# after the server process is gone (the orphaned socket acknowledges it);
# accel's stack leaves with the process, so its exit waits (up to 0.5 s)
# for the peer's FIN and acknowledges it. Checks: the echo arrived, the
# server exited 0, and the client's connection is not left in LAST-ACK
# (before the wait, it stayed there for about 100 s, sending its FIN to
# nobody: nginx -s quit left one such client behind almost every run).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
PORT=7600
SERVER='
import socket, sys
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((sys.argv[1], int(sys.argv[2])))
l.listen(1)
print("listening", flush=True)
c, _ = l.accept()
c.sendall(b"bye\n")
c.close()
l.close()
'
CLIENT='
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
got = b""
while True:
    d = s.recv(100)
    if not d:
        break
    got += d
time.sleep(0.1)
s.close()
print(got.decode().strip(), flush=True)
'
for round in 1 2 3; do
    bg_start srv$round AX "$PY" -c "$SERVER" "$AIP" "$PORT"
    wait_line "$T/srv$round.out" '^listening' || fail "the server did not start"
    got=$(K timeout 20 "$PY" -c "$CLIENT" "$AIP" "$PORT" 2>&1)
    check_eq "round $round: the client got the server's line" "$got" "bye"
    busywait 5000 dead "$(bg_pid srv$round)"
    check "round $round: the server exited by itself" dead "$(bg_pid srv$round)"
    bg_stop srv$round
    check_eq "round $round: the server's exit status" "$?" 0
    sleep 1
    left=$(K ss -Htn state last-ack state fin-wait-1 state closing "( dst $AIP and dport = :$PORT )")
    check_eq "round $round: client connection not left in LAST-ACK 1 s after the close" "$left" ""
    # A connection left behind would still hold the 4-tuple's state:
    # wait for it to go before the next round (it does within ~2 min).
    [[ -z $left ]] || busywait 150000 eval "[[ -z \$(K ss -Htn state last-ack '( dst $AIP and dport = :$PORT )') ]]"
done
finish
