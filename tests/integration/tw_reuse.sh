#!/bin/bash
# Scenario: a new client process reuses port pairs that a server keeps in
# TIME-WAIT (the server closed first), both ends accelerated over memif in
# the memif netns. Linux accepts such a SYN when its sequence number is past
# the old connection's, and a Linux client's always is: the kernel has one
# key for its initial sequence numbers per boot. The accel processes of a
# host share theirs likewise (runtime/isnkey.c); with a key per process,
# about half of these connects failed (the server's stack answered the SYN
# with an ACK, the client reset and retried, then gave up).
#
# A Python server under accel-run accepts, sends a line and closes first;
# two client processes in turn, each under accel-run, connect from the same
# 12 local ports, read the line and close. Every connect of both must
# succeed and read the line, and the server must have seen 24 connections.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
lab_has_memif_ns || fail "lab has no netns $NS_M"

SOCK=$T/memif.sock
PORT=7070
NPORTS=12
cat >"$T/server.py" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(64)
print("listening", flush=True)
n = 0
while True:
    c, _ = s.accept()
    c.sendall(b"hello\n")
    c.close()  # the server closes first: TIME-WAIT is on this side
    n += 1
    print("served", n, flush=True)
PY
cat >"$T/client.py" <<'PY'
import socket, sys
ip, port, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ok = 0
for lp in range(first, first + count):
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    c.settimeout(5)
    try:
        c.bind(("0.0.0.0", lp))
        c.connect((ip, port))
        data = b""
        while not data.endswith(b"\n"):
            chunk = c.recv(64)
            if not chunk:
                break
            data += chunk
        print(lp, "ok" if data == b"hello\n" else "short", flush=True)
        ok += data == b"hello\n"
    except OSError as e:
        print(lp, "error", e.errno, flush=True)
    finally:
        c.close()
print("done", ok, flush=True)
PY

bg_start srv MX "ACCEL_VDEV=net_memif0,role=server,socket=$SOCK" "ACCEL_IP=$MIP_SRV/24" \
    "$PY" "$T/server.py" "$MIP_SRV" "$PORT"
slowwait 20 memif_listening "$SOCK" || fail "the memif server never listened on $SOCK: $(tail -3 "$T/srv.err")"
busywait 10000 grep -q listening "$T/srv.out" || fail "server.py did not start: $(tail -3 "$T/srv.err")"
for pass in 1 2; do
    MX "ACCEL_VDEV=net_memif0,role=client,socket=$SOCK" "ACCEL_IP=$MIP_CLI/24" \
        "$PY" "$T/client.py" "$MIP_SRV" "$PORT" 42000 "$NPORTS" >"$T/cli$pass.out" 2>"$T/cli$pass.err"
    check_eq "pass $pass: client exit status" "$?" 0
    log "pass $pass: $(grep -v '^done' "$T/cli$pass.out" | awk '{print $2}' | sort | uniq -c | tr '\n' ' ')"
    check_eq "pass $pass: connections that read the server's line" \
        "$(awk '/^done/ {print $2}' "$T/cli$pass.out")" "$NPORTS"
done
busywait 5000 eval "grep -q 'served $((2 * NPORTS))' '$T/srv.out'"
check "the server accepted all $((2 * NPORTS)) connections" grep -q "served $((2 * NPORTS))$" "$T/srv.out"
bg_stop srv TERM
finish
