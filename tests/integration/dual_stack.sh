#!/bin/bash
# Scenario: stock servers that open AF_INET6 sockets, as their runtimes do
# by default, accelerated under accel-run and answering kernel clients over
# IPv4 and IPv6 (issue 21), and the reason a socket left on the kernel
# gives. The stack has ACCEL_IP6 (fd00:200::2, the lab's), veth-a has no
# kernel address of either family, so an answer over IPv6 came from the
# stack. Checks, each server's response bodies and its ACCEL_STATS
# (tcp_accept: the connections came through the stack):
#   * nginx `listen [::]:80 ipv6only=off` (one dual-stack listener): a
#     kernel curl over IPv4 and one over IPv6;
#   * nginx `listen 80; listen [::]:80` as Debian's default site has it
#     (nginx's ipv6only=on default), master and worker: both families
#     served, no socket left on the kernel;
#   * the same without ACCEL_IP6: IPv4 served, the IPv6-only listener on
#     the kernel with a warning and kernel_why_v6only 1;
#   * a JVM com.sun.net.httpserver bound to the stack's IPv4 address with
#     the JVM's default flags (AF_INET6 socket on ::ffff:10.200.0.2);
#   * Node's http server listen(port) without a host (:: dual stack), over
#     both families;
#   * python3 -m http.server --bind :: (both families) and without --bind;
#   * curl -6 accelerated, against a kernel nginx in the peer namespace;
#   * nginx and curl both accelerated over memif, IPv6 only (fd00:201::/64):
#     a 5 MB file, sha256 equal;
#   * listeners on ::1 and 127.0.0.1 stay on the kernel with reason
#     local_addr, one info line each naming the fd and the address.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
HERE=$(dirname "$(readlink -f "$0")")/dual

lab_up
mkdir -p "$T/www"
echo "dual page $RANDOM$RANDOM" >"$T/www/page.html"

# served NAME URL EXPECT: a kernel curl of URL answers EXPECT (a file to
# compare with, or a string the body must contain).
served() {
    local name=$1 url=$2 want=$3
    K curl -sS -m 10 -o "$T/$name.got" "$url"
    check_eq "$name: kernel curl of $url exit status" "$?" 0
    if [[ -f $want ]]; then
        check "$name: body equal" cmp "$want" "$T/$name.got"
    else
        check "$name: body has '$want'" grep -q "$want" "$T/$name.got"
    fi
}

# stat_sum FILE NAME: counter NAME summed over the processes whose
# ACCEL_STATS dumps FILE holds (nginx's master and workers).
stat_sum() {
    grep -Eo "stats: $2 +[0-9]+" "$1" | awk '{s += $NF} END {print s + 0}'
}

# accepted NAME FILE: the ACCEL_STATS in FILE count a stack accept.
accepted() {
    check_ge "$1: tcp_accept (through the stack)" "$(stat_sum "$2" tcp_accept)" 1
    check_ge "$1: sock_accel" "$(stat_sum "$2" sock_accel)" 1
}

log "nginx: listen [::]:80 ipv6only=off"
nginx_conf "$T/n1.conf" "[::]:80 ipv6only=off" "$T/www" off
bg_start n1 AX ACCEL_STATS=2 nginx -c "$T/n1.conf" -p "$T" -e "$T/n1.error.log"
wait_tcp K "$AIP" 80 30 || fail "nginx [::]:80 not reachable at $AIP:80"
served "nginx [::]:80 over IPv4" "http://$AIP/page.html" "$T/www/page.html"
served "nginx [::]:80 over IPv6" "http://[$AIP6]/page.html" "$T/www/page.html"
served "nginx [::]:80 over IPv6 again" "http://[$AIP6]/hello" "hello from nginx"
bg_stop n1 QUIT
check_ge "nginx [::]:80: tcp_accept (both families)" "$(stat_get "$T/n1.error.log" tcp_accept)" 3
check_eq "nginx [::]:80: no socket on the kernel" "$(stat_get "$T/n1.error.log" sock_kernel)" 0

log "nginx: listen 80 and listen [::]:80 (ipv6only=on, nginx's default), master and worker"
nginx_conf "$T/n2.conf" "80" "$T/www" on "listen [::]:80;"
bg_start n2 AX ACCEL_STATS=2 nginx -c "$T/n2.conf" -p "$T" -e "$T/n2.error.log"
wait_tcp K "$AIP" 80 30 || fail "nginx listen 80 not reachable at $AIP:80"
served "nginx listen 80 + [::]:80 over IPv4" "http://$AIP/page.html" "$T/www/page.html"
served "nginx listen 80 + [::]:80 over IPv6" "http://[$AIP6]/page.html" "$T/www/page.html"
bg_stop n2 QUIT
check_ge "nginx listen 80 + [::]:80: tcp_accept" "$(stat_sum "$T/n2.error.log" tcp_accept)" 2
check_eq "nginx listen 80 + [::]:80: no socket on the kernel" "$(stat_sum "$T/n2.error.log" sock_kernel)" 0

log "nginx: the same without ACCEL_IP6"
bg_start n3 AX ACCEL_IP6= ACCEL_STATS=2 ACCEL_LOG_FILE="$T/n3.accel.log" nginx -c "$T/n2.conf" -p "$T" -e "$T/n3.error.log"
wait_tcp K "$AIP" 80 30 || fail "nginx listen 80 (no ACCEL_IP6) not reachable at $AIP:80"
served "nginx without ACCEL_IP6 over IPv4" "http://$AIP/page.html" "$T/www/page.html"
bg_stop n3 QUIT
cat "$T/n3.accel.log" "$T/n3.error.log" >"$T/n3.all" 2>/dev/null
accepted "nginx without ACCEL_IP6" "$T/n3.all"
check_eq "IPv6-only listener without ACCEL_IP6: kernel_why_v6only" "$(stat_sum "$T/n3.all" kernel_why_v6only)" 1
check "IPv6-only listener without ACCEL_IP6: a warning names the reason and the fix" \
    grep -Eq 'warn.*bind \[::\]:80 stays on the kernel: an IPV6_V6ONLY socket.*set ACCEL_IP6' "$T/n3.all"

log "JVM HttpServer on $AIP with default flags"
bg_start jvm AX ACCEL_STATS=2 java "$HERE/HttpServe.java" "$AIP" 8081 20
wait_line "$T/jvm.out" listening 60 || fail "JVM server did not start: $(tail -3 "$T/jvm.err")"
served "JVM HttpServer" "http://$AIP:8081/" "java $AIP"
pid=$(bg_pid jvm)
busywait 30000 dead "$pid"
bg_stop jvm
accepted "JVM HttpServer" "$T/jvm.err"

log "node: listen(port) without a host"
bg_start node AX ACCEL_STATS=2 node "$HERE/serve.js" 8082 8
wait_line "$T/node.out" listening 30 || fail "node did not start: $(tail -3 "$T/node.err")"
check "node listens on :: (dual stack)" grep -q '"address":"::"' "$T/node.out"
served "node listen(port) over IPv4" "http://$AIP:8082/" "node"
served "node listen(port) over IPv6" "http://[$AIP6]:8082/" "node"
pid=$(bg_pid node)
busywait 20000 dead "$pid"
bg_stop node
check_ge "node listen(port): tcp_accept (both families)" "$(stat_get "$T/node.err" tcp_accept)" 2

n=0
for bind in "--bind ::" ""; do
    n=$((n + 1))
    log "python3 -m http.server ${bind:-without --bind}"
    # A background job of a script ignores SIGINT, and so would python's
    # KeyboardInterrupt (its clean exit, with the ACCEL_STATS dump):
    # timeout(1) restores it and interrupts the server after 8 s. With
    # --foreground it sends one SIGINT to the server only; without, it sends
    # one to the server and one to its process group, and when the second
    # lands while python finalizes (SIGINT back to its default), python dies
    # of it before the atexit dump (seen in 3 of ~25 runs).
    bg_start "py$n" AX ACCEL_STATS=2 timeout --foreground -s INT 8 "$PY" -m http.server $bind \
        --directory "$T/www" 8083
    wait_tcp K "$AIP" 8083 30 || fail "python http.server ${bind} not reachable"
    served "python http.server ${bind:-default}" "http://$AIP:8083/page.html" "$T/www/page.html"
    [[ -z $bind ]] ||
        served "python http.server $bind over IPv6" "http://[$AIP6]:8083/page.html" "$T/www/page.html"
    check "python http.server ${bind:-default}: exits at SIGINT" \
        busywait 15000 dead "$(bg_pid "py$n")"
    bg_stop "py$n"
    check_eq "python http.server ${bind:-default}: exit status" "$?" 124
    accepted "python http.server ${bind:-default}" "$T/py$n.err"
done

log "curl -6 accelerated against a kernel nginx"
nginx_conf "$T/k.conf" "[$KIP6]:8090" "$T/www" off
bg_start kng K nginx -c "$T/k.conf" -p "$T" -e "$T/k.error.log"
wait_tcp K "$KIP6" 8090 30 || fail "kernel nginx not listening on [$KIP6]:8090"
AX ACCEL_STATS=2 curl -6 -sS -m 10 -o "$T/c6.got" "http://[$KIP6]:8090/page.html" 2>"$T/c6.err"
check_eq "accelerated curl -6: exit status" "$?" 0
check "accelerated curl -6: body equal" cmp "$T/www/page.html" "$T/c6.got"
check_ge "accelerated curl -6: tcp_connect (through the stack)" "$(stat_get "$T/c6.err" tcp_connect)" 1
bg_stop kng QUIT

log "nginx and curl both accelerated over memif, IPv6 only"
lab_has_memif_ns || fail "lab has no netns $NS_M"
mkfile "$T/www/five.bin" 5000000
SOCK=$T/memif6.sock
nginx_conf "$T/m.conf" "[$MIP6_SRV]:80" "$T/www" off
bg_start mng MX ACCEL_STATS=2 "ACCEL_VDEV=net_memif0,role=server,socket=$SOCK" \
    "ACCEL_IP=$MIP_SRV/24" "ACCEL_IP6=$MIP6_SRV/64" nginx -c "$T/m.conf" -p "$T" -e "$T/m.error.log"
slowwait 20 memif_listening "$SOCK" || fail "the memif server never listened on $SOCK"
MX ACCEL_STATS=2 "ACCEL_VDEV=net_memif0,role=client,socket=$SOCK" "ACCEL_IP=$MIP_CLI/24" \
    "ACCEL_IP6=$MIP6_CLI/64" curl -6 -sS -m 30 -o "$T/m6.got" "http://[$MIP6_SRV]/five.bin" 2>"$T/m6.err"
check_eq "memif IPv6 curl: exit status" "$?" 0
check_eq "memif IPv6: 5 MB sha256 equal" "$(sha "$T/m6.got" 2>/dev/null)" "$(sha "$T/www/five.bin")"
check_ge "memif IPv6 curl: tcp_connect" "$(stat_get "$T/m6.err" tcp_connect)" 1
bg_stop mng QUIT
check_ge "memif IPv6 nginx: tcp_accept" "$(stat_get "$T/m.error.log" tcp_accept)" 1

log "a listener on 127.0.0.1 says why it is on the kernel"
AX ACCEL_STATS=2 ACCEL_LOG_LEVEL=info "$PY" -c '
import socket
s = socket.socket(socket.AF_INET6)
s.bind(("::1", 8084)); s.listen()
t = socket.socket()
t.bind(("127.0.0.1", 8085)); t.listen()
print("fds", s.fileno(), t.fileno())
' >"$T/lo.out" 2>"$T/lo.err"
check_eq "loopback listeners: exit status" "$?" 0
check "::1 listener: info line with fd, call, address and reason" \
    grep -Eq 'info fd: fd [0-9]+: bind \[::1\]:8084 stays on the kernel: bound to an address that is not the stack' "$T/lo.err"
check "127.0.0.1 listener: info line with the reason" \
    grep -Eq 'info fd: fd [0-9]+: bind 127\.0\.0\.1:8085 stays on the kernel: bound to an address that is not the stack' "$T/lo.err"
check_eq "kernel_why_local_addr" "$(stat_get "$T/lo.err" kernel_why_local_addr)" 2
check_eq "sock_kernel is the sum" "$(stat_get "$T/lo.err" sock_kernel)" 2
finish
