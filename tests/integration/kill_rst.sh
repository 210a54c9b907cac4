#!/bin/bash
# Scenario: processes that die (issue 24, item 5).
#   1. An accelerated echo server (IPv4 and IPv6, the stack's own
#      addresses) holding a connection of each family from the kernel peer
#      is killed with SIGKILL. At their next segment the peers get a RST
#      (the XDP program answers for the address once no XSK serves it,
#      runtime/xdp/reset.bpf.h, as a dead kernel socket's host would): the
#      client's recv fails with ECONNRESET instead of retransmitting for
#      minutes. The time from that send to the error is logged.
#   2. What the dead process held is gone or reclaimable: no hugepage file
#      of its own is left (--huge-unlink), its live-state region is removed
#      by the next accelerated process, its interface lock is free.
#   3. The next process on the interface starts cleanly and serves both
#      families on the same ports.
#   4. A graceful exit delivers every byte written before it: a server
#      with a 4 MB SO_SNDBUF writes 6 MB to a client that reads slowly
#      (it starts 2 s later and reads 64 KB per 100 ms, so several seconds
#      of data are still queued) and exits at once (os._exit after sendall);
#      the client gets all of it, intact, then EOF (Linux's orphaned
#      socket sends the rest; accel's exit lingers while the peer
#      acknowledges, runtime/start.c).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
P4=7710
P6=7711
SERVER='
import os, socket, sys, threading
def serve(l):
    while True:
        c, _ = l.accept()
        threading.Thread(target=echo, args=(c,), daemon=True).start()
def echo(c):
    while True:
        d = c.recv(65536)
        if not d:
            return
        c.sendall(d)
ls = []
for fam, ip, port in ((socket.AF_INET, sys.argv[1], int(sys.argv[3])),
                      (socket.AF_INET6, sys.argv[2], int(sys.argv[4]))):
    l = socket.socket(fam)
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind((ip, port))
    l.listen(8)
    ls.append(l)
    threading.Thread(target=serve, args=(l,), daemon=True).start()
print("listening", os.getpid(), flush=True)
threading.Event().wait()
'
# The kernel client: one connection per family, an echo on each, then
# waits for $T/killed, sends again and reports how each connection ended.
CLIENT='
import os, socket, sys, time
conns = []
for fam, ip, port in ((socket.AF_INET, sys.argv[1], int(sys.argv[3])),
                      (socket.AF_INET6, sys.argv[2], int(sys.argv[4]))):
    s = socket.create_connection((ip, port), timeout=10)
    s.sendall(b"ping")
    assert s.recv(10) == b"ping"
    conns.append(("v4" if fam == socket.AF_INET else "v6", s))
print("echoed", flush=True)
while not os.path.exists(sys.argv[5]):
    time.sleep(0.01)
time.sleep(0.2)
for name, s in conns:
    s.settimeout(10)
    t0 = time.monotonic()
    try:
        s.sendall(b"after")
        d = s.recv(10)
        print(name, "no reset: recv returned", d, flush=True)
    except ConnectionResetError:
        print(name, "reset after %.1f ms" % ((time.monotonic() - t0) * 1e3), flush=True)
    except socket.timeout:
        print(name, "no reset in 10 s", flush=True)
'

# On a veth, XDP_TX hands the frame to the peer device's XDP ring, which
# exists only while the peer has an XDP program of its own (a NIC sends
# XDP_TX frames itself): the kernel peer's end gets a pass-through program
# for this test (without it the RSTs count as veth-a's xdp_tx_errors).
printf '%s\n' '#include <linux/bpf.h>' '#include <bpf/bpf_helpers.h>' \
    'SEC("xdp") int pass(struct xdp_md *ctx) { return XDP_PASS; }' \
    'char _license[] SEC("license") = "GPL";' >"$T/pass.bpf.c"
clang -O2 -target bpf -I"/usr/include/$(gcc -print-multiarch)" -c "$T/pass.bpf.c" \
    -o "$T/pass.o" || fail "cannot build the pass-through XDP program"
K ip link set dev "$VETH_K" xdpdrv obj "$T/pass.o" sec xdp ||
    fail "cannot attach an XDP program to $VETH_K"
xdp_off() { K ip link set dev "$VETH_K" xdpdrv off 2>/dev/null; }
trap 'rc=$?; xdp_off; (exit $rc); cleanup' EXIT

log "---- 1. kill -9 of an accelerated server with live connections"
bg_start srv1 AX "$PY" -c "$SERVER" "$AIP" "$AIP6" "$P4" "$P6"
wait_line "$T/srv1.out" '^listening' || fail "the server did not start: $(tail -3 "$T/srv1.err")"
SPID=$(bg_pid srv1)
bg_start cli K "$PY" -c "$CLIENT" "$AIP" "$AIP6" "$P4" "$P6" "$T/killed"
wait_line "$T/cli.out" '^echoed' || fail "the client did not connect: $(tail -3 "$T/cli.err")"
kill -KILL "$SPID"
busywait 5000 dead "$SPID" || fail "server $SPID alive after SIGKILL"
touch "$T/killed"
wait_line "$T/cli.out" '^v6 ' 30 || fail "the client did not finish: $(tail -3 "$T/cli.err")"
cat "$T/cli.out" | sed "s/^/[$TEST_NAME] client: /"
check "IPv4 peer reset at its next segment" grep -q '^v4 reset after' "$T/cli.out"
check "IPv6 peer reset at its next segment" grep -q '^v6 reset after' "$T/cli.out"
bg_stop cli

log "---- 2. what the dead process held"
left=$(find /dev/hugepages -maxdepth 1 -name "accel-$SPID*" 2>/dev/null | head -3)
check_eq "no hugepage file of the killed process" "$left" ""
REGION=/dev/shm/accel-stat-$SPID
[[ -e $REGION ]] && log "the killed process left $REGION (removed by the next one)"

log "---- 3. the next process on the interface"
bg_start srv2 AX "$PY" -c "$SERVER" "$AIP" "$AIP6" "$P4" "$P6"
wait_line "$T/srv2.out" '^listening' || fail "the next server did not start: $(tail -3 "$T/srv2.err")"
ECHO='
import socket, sys
for fam, ip, port in ((socket.AF_INET, sys.argv[1], int(sys.argv[3])),
                      (socket.AF_INET6, sys.argv[2], int(sys.argv[4]))):
    s = socket.create_connection((ip, port), timeout=10)
    s.sendall(b"again")
    print(s.recv(10).decode(), flush=True)
'
got=$(K timeout 20 "$PY" -c "$ECHO" "$AIP" "$AIP6" "$P4" "$P6" 2>&1 | paste -sd' ')
check_eq "the next server answers on both families" "$got" "again again"
check "the killed process's region was removed" test ! -e "$REGION"
check_not "the next server logged no error" grep -qiE 'error|refused|busy' "$T/srv2.err"
bg_stop srv2

log "---- 4. a graceful exit delivers every byte written before it"
SIZE=$((6 << 20))
WRITER='
import os, socket, sys
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((sys.argv[1], int(sys.argv[2])))
l.listen(1)
print("listening", flush=True)
c, _ = l.accept()
c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
data = open(sys.argv[3], "rb").read()
c.sendall(data)
print("written", flush=True)
os._exit(0)
'
READER='
import hashlib, socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
time.sleep(2)
h = hashlib.sha256()
n = 0
while True:
    d = s.recv(65536)
    if not d:
        break
    h.update(d)
    n += len(d)
    time.sleep(0.1)
print(n, h.hexdigest(), flush=True)
'
mkfile "$T/data" "$SIZE"
WANT="$SIZE $(sha "$T/data")"
bg_start writer AX "$PY" -c "$WRITER" "$AIP" "$P4" "$T/data"
wait_line "$T/writer.out" '^listening' || fail "the writer did not start: $(tail -3 "$T/writer.err")"
t0=$SECONDS
got=$(K timeout 120 "$PY" -c "$READER" "$AIP" "$P4" 2>&1 | tail -1)
check_eq "the slow reader got every byte the writer wrote before exiting" "$got" "$WANT"
busywait 10000 dead "$(bg_pid writer)"
check "the writer exited" dead "$(bg_pid writer)"
bg_stop writer
check_eq "the writer's exit status" "$?" 0
log "slow read of $SIZE bytes took $((SECONDS - t0)) s"
finish
