#!/bin/bash
# Scenario: per-application rules (ACCEL_RULES) route sockets as written.
# The accelerated netns has no kernel IP and no route, so a socket the
# rules leave on the kernel cannot reach the peer netns (connect/sendto:
# ENETUNREACH; a kernel listener is invisible from the peer: the stack
# answers its SYNs with RST), while an accelerated one can. Each check
# below would fail if its rule were ignored:
#  1. listen + local port ranges: one nginx listening on 8080 and 8081 with
#     "kernel ... local *:8081" and "accel ... local *:8080-8090 prog nginx":
#     8080 is served to the peer netns, 8081 is refused there but served on
#     the accelerated netns's loopback (it listens, on the kernel);
#  2. connect + remote + prog: a python client reaches the peer's port 7000
#     and gets ENETUNREACH for 7001 ("kernel ... remote 10.200.0.1:7001");
#     socat, matched by "kernel prog soc?t", gets ENETUNREACH for 7000;
#  3. udp-send + DNS: without rules a datagram to port 53 stays on the kernel
#     (built-in default: ENETUNREACH); "accel udp remote 10.200.0.1:53"
#     accelerates it (echoed back); "kernel ... remote *:5002" keeps 5002 on
#     the kernel; udp-recv: a bind to 5003 stays on the kernel, 5004 is
#     accelerated (ACCEL_STATS counts);
#  4. bad files (unknown keyword, bad prefix, bad port range, missing file):
#     exactly one stderr line naming FILE:LINE (or the file) and the
#     problem, and the program runs to its end on the kernel: loopback works,
#     the peer is unreachable (ENETUNREACH where case 2 connected).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
A ip link set lo up

# probe.py [tcp|udp] HOST:PORT...: one new socket per target; TCP connects
# and expects "ping" echoed, UDP sends and expects it echoed; prints
# "HOST:PORT ok" or "HOST:PORT ERRNONAME" per target. "udp bind:PORT"
# binds a UDP socket to 0.0.0.0:PORT and prints "bind:PORT bound".
cat >"$T/probe.py" <<'PY'
import errno, socket, sys
proto = sys.argv[1]
for t in sys.argv[2:]:
    host, port = t.rsplit(":", 1)
    kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
    s = socket.socket(socket.AF_INET, kind)
    s.settimeout(10)
    try:
        if host == "bind":
            s.bind(("0.0.0.0", int(port)))
            print(t, "bound", flush=True)
            continue
        if proto == "tcp":
            s.connect((host, int(port)))
            s.sendall(b"ping")
        else:
            s.sendto(b"ping", (host, int(port)))
        got = s.recv(16)
        print(t, "ok" if got == b"ping" else "bad reply %r" % got, flush=True)
    except OSError as e:
        print(t, errno.errorcode.get(e.errno, str(e)), flush=True)
PY

# Kernel echo servers in the peer netns: TCP 7000 and 7001, UDP 53, 5001
# and 5002; and a TCP echo server on the accelerated netns's loopback.
cat >"$T/udpecho.py" <<'PY'
import selectors, socket, sys
sel = selectors.DefaultSelector()
for p in sys.argv[2:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((sys.argv[1], int(p)))
    sel.register(s, selectors.EVENT_READ)
print("ready", flush=True)
while True:
    for key, _ in sel.select():
        data, peer = key.fileobj.recvfrom(2048)
        key.fileobj.sendto(data, peer)
PY
bg_start kecho0 K socat "TCP-LISTEN:7000,bind=$KIP,fork,reuseaddr" PIPE
bg_start kecho1 K socat "TCP-LISTEN:7001,bind=$KIP,fork,reuseaddr" PIPE
bg_start kudp K "$PY" "$T/udpecho.py" "$KIP" 53 5001 5002
bg_start loecho A socat "TCP-LISTEN:7005,bind=127.0.0.1,fork,reuseaddr" PIPE
wait_tcp K "$KIP" 7000 || fail "kernel echo server 7000 did not start"
wait_tcp K "$KIP" 7001 || fail "kernel echo server 7001 did not start"
wait_tcp A 127.0.0.1 7005 || fail "loopback echo server did not start"
slowwait 10 grep -q ready "$T/kudp.out" || fail "kernel UDP echo server did not start"

# ---- 1. listen, local port ranges, prog --------------------------------
log "check: listen rules (nginx on 8080 accelerated, 8081 on the kernel)"
cat >"$T/listen.rules" <<'EOF'
# nginx listens on 8080 and 8081
kernel tcp role listen local *:8081
accel  tcp role listen local *:8080-8090  prog nginx
EOF
mkdir -p "$T/www"
nginx_conf "$T/n.conf" 8080 "$T/www" on "listen 8081;"
bg_start nginx AX ACCEL_RULES="$T/listen.rules" nginx -c "$T/n.conf" -p "$T" -e "$T/n.error.log"
wait_tcp K "$AIP" 8080 || fail "accelerated nginx did not serve port 8080 to $NS_K"
out=$(K curl -sS -m 10 "http://$AIP:8080/hello" 2>&1)
check_eq "8080 (accel rule): served to the peer netns" "$out" "hello from nginx"
K curl -sS -m 10 -o /dev/null "http://$AIP:8081/hello" 2>"$T/c8081.err"
check_eq "8081 (kernel rule): refused from the peer netns (curl exit 7)" "$?" 7
out=$(A curl -sS -m 10 "http://127.0.0.1:8081/hello" 2>&1)
check_eq "8081 (kernel rule): nginx listens on the kernel (loopback)" "$out" "hello from nginx"
check "8081 listed by ss in $NS_A" bash -c "ip netns exec $NS_A ss -ltnH | grep -q ':8081 '"
check_eq "nginx: no rules error" "$(grep -c 'error rules' "$T/nginx.err")" 0
bg_stop nginx

# ---- 2. connect, remote, prog -------------------------------------------
log "check: connect rules"
cat >"$T/connect.rules" <<'EOF'
kernel prog soc?t
kernel tcp role connect remote 10.200.0.1:7001   # the second echo server
accel  tcp role connect remote 10.200.0.0/24:7000-7001
EOF
AX ACCEL_RULES="$T/connect.rules" ACCEL_STATS=2 "$PY" "$T/probe.py" tcp \
    "$KIP:7000" "$KIP:7001" >"$T/connect.out" 2>"$T/connect.err"
check_eq "probe exit status" "$?" 0
check_eq "connect 7000 (accel rule): echoed" "$(grep "^$KIP:7000 " "$T/connect.out")" "$KIP:7000 ok"
check_eq "connect 7001 (kernel rule): kernel, no route" "$(grep "^$KIP:7001 " "$T/connect.out")" "$KIP:7001 ENETUNREACH"
check_eq "stats sock_accel" "$(stat_get "$T/connect.err" sock_accel)" 1
echo ping | AX ACCEL_RULES="$T/connect.rules" socat -T 5 - "TCP:$KIP:7000" >"$T/socat.out" 2>"$T/socat.err"
check_eq "socat (kernel prog rule): exit status" "$?" 1
check "socat (kernel prog rule): kernel, no route" grep -q "Network is unreachable" "$T/socat.err"

# ---- 3. udp-send, DNS, udp-recv -----------------------------------------
log "check: udp rules and the DNS default"
# ACCEL_RULES=/dev/null: no rules (and not the system file either). The
# first datagram waits in the stack for ARP while the probe waits for the
# echo.
AX ACCEL_RULES=/dev/null "$PY" "$T/probe.py" udp "$KIP:5001" "$KIP:53" >"$T/udp0.out" 2>"$T/udp0.err"
check_eq "no rules: udp 5001 accelerated" "$(grep "^$KIP:5001 " "$T/udp0.out")" "$KIP:5001 ok"
check_eq "no rules: udp 53 stays on the kernel (built-in DNS default)" "$(grep "^$KIP:53 " "$T/udp0.out")" "$KIP:53 ENETUNREACH"
cat >"$T/udp.rules" <<'EOF'
accel  udp role udp-send remote 10.200.0.1:53
kernel udp role udp-send remote *:5002
kernel udp role udp-recv local *:5003
EOF
AX ACCEL_RULES="$T/udp.rules" ACCEL_STATS=2 "$PY" "$T/probe.py" udp \
    "$KIP:53" "$KIP:5002" "$KIP:5001" bind:5003 bind:5004 >"$T/udp.out" 2>"$T/udp.err"
check_eq "udp probe exit status" "$?" 0
check_eq "udp 53 (accel rule): accelerated, echoed" "$(grep "^$KIP:53 " "$T/udp.out")" "$KIP:53 ok"
check_eq "udp 5002 (kernel rule): kernel, no route" "$(grep "^$KIP:5002 " "$T/udp.out")" "$KIP:5002 ENETUNREACH"
check_eq "udp 5001 (no rule): accelerated, echoed" "$(grep "^$KIP:5001 " "$T/udp.out")" "$KIP:5001 ok"
check_eq "udp binds done" "$(grep -c bound "$T/udp.out")" 2
# 53, 5001 and the bind to 5004 on the stack; 5002 and 5003 on the kernel.
check_eq "stats sock_accel (53, 5001, bind 5004)" "$(stat_get "$T/udp.err" sock_accel)" 3
check_eq "stats sock_kernel (5002, bind 5003)" "$(stat_get "$T/udp.err" sock_kernel)" 2

# ---- 4. bad files -------------------------------------------------------
log "check: bad rules files"
printf '# comment\nkernel tcp\naccel tcp lcoal *:80\n' >"$T/bad1.rules"
printf 'kernel udp remote 10.0.0.0/8:53\nkernel remote 10.1.0.0/8\n' >"$T/bad2.rules"
printf '\n\n\nkernel tcp local *:9000-8000\n' >"$T/bad3.rules"
# bad_file FILE WANT: the one stderr line names WANT; the program runs on
# the kernel to its end.
bad_file() {
    local f=$1 want=$2 tag
    tag=$(basename "$f")
    AX ACCEL_RULES="$f" "$PY" "$T/probe.py" tcp 127.0.0.1:7005 "$KIP:7000" \
        >"$T/$tag.out" 2>"$T/$tag.err"
    check_eq "[$tag] exit status" "$?" 0
    check_eq "[$tag] stderr is one line" "$(wc -l <"$T/$tag.err")" 1
    check "[$tag] the line names $want" grep -qF -- "$want" "$T/$tag.err"
    check "[$tag] the line says the program runs on the kernel" grep -q "runs on the kernel" "$T/$tag.err"
    check_eq "[$tag] loopback works" "$(grep '^127.0.0.1:7005 ' "$T/$tag.out")" "127.0.0.1:7005 ok"
    check_eq "[$tag] nothing accelerated: peer unreachable" "$(grep "^$KIP:7000 " "$T/$tag.out")" "$KIP:7000 ENETUNREACH"
}
bad_file "$T/bad1.rules" "$T/bad1.rules:3: unknown keyword 'lcoal'"
bad_file "$T/bad2.rules" "$T/bad2.rules:2: remote '10.1.0.0/8': bad prefix"
bad_file "$T/bad3.rules" "$T/bad3.rules:4: local: bad port range '9000-8000'"
bad_file "$T/missing.rules" "$T/missing.rules: cannot open the rules file: No such file or directory"
finish
