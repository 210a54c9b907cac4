#!/bin/bash
# Scenario: stock servers that open AF_INET6 sockets, as their runtimes do
# by default, accelerated under accel-run and answering a kernel client
# over IPv4 (issue 21 item 1), and the reason a socket left on the kernel
# gives (item 4).
# Checks, each server's response body and its ACCEL_STATS (tcp_accept > 0,
# so the connection came through the stack):
#   * nginx `listen [::]:80 ipv6only=off` (dual stack, one AF_INET6
#     listener);
#   * nginx `listen 80; listen [::]:80` as Debian's default site has it
#     (nginx's ipv6only=on default): the IPv4 listener on the stack, the
#     IPv6-only one on the kernel with reason v6only (a warning line and
#     kernel_why_v6only 1);
#   * a JVM com.sun.net.httpserver bound to the stack's IPv4 address with
#     the JVM's default flags (AF_INET6 socket on ::ffff:10.200.0.2);
#   * Node's http server listen(port) without a host (:: dual stack);
#   * python3 -m http.server --bind :: (and without --bind);
#   * a listener on 127.0.0.1 stays on the kernel with reason local_addr,
#     one info line naming the fd and the address.
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

# accepted NAME FILE: the ACCEL_STATS in FILE count a stack accept.
accepted() {
    check_ge "$1: tcp_accept (through the stack)" "$(stat_get "$2" tcp_accept)" 1
    check_ge "$1: sock_accel" "$(stat_get "$2" sock_accel)" 1
}

log "nginx: listen [::]:80 ipv6only=off"
nginx_conf "$T/n1.conf" "[::]:80 ipv6only=off" "$T/www" off
bg_start n1 AX ACCEL_STATS=1 nginx -c "$T/n1.conf" -p "$T" -e "$T/n1.error.log"
wait_tcp K "$AIP" 80 30 || fail "nginx [::]:80 not reachable at $AIP:80"
served "nginx [::]:80" "http://$AIP/page.html" "$T/www/page.html"
served "nginx [::]:80 again" "http://$AIP/hello" "hello from nginx"
bg_stop n1 QUIT
accepted "nginx [::]:80" "$T/n1.error.log"
check_eq "nginx [::]:80: no socket on the kernel" "$(stat_get "$T/n1.error.log" sock_kernel)" 0

log "nginx: listen 80 and listen [::]:80 (ipv6only=on, nginx's default)"
nginx_conf "$T/n2.conf" "80" "$T/www" off "listen [::]:80;"
bg_start n2 AX ACCEL_STATS=1 ACCEL_LOG_FILE="$T/n2.accel.log" nginx -c "$T/n2.conf" -p "$T" -e "$T/n2.error.log"
wait_tcp K "$AIP" 80 30 || fail "nginx listen 80 not reachable at $AIP:80"
served "nginx listen 80 + [::]:80" "http://$AIP/page.html" "$T/www/page.html"
bg_stop n2 QUIT
cat "$T/n2.accel.log" "$T/n2.error.log" >"$T/n2.all" 2>/dev/null
accepted "nginx listen 80 + [::]:80" "$T/n2.all"
check_eq "ipv6only listener: kernel_why_v6only" "$(stat_get "$T/n2.all" kernel_why_v6only)" 1
check "ipv6only listener: a warning names the reason" \
    grep -Eq 'warn.*bind \[::\]:80 stays on the kernel: an IPV6_V6ONLY socket' "$T/n2.all"

log "JVM HttpServer on $AIP with default flags"
bg_start jvm AX ACCEL_STATS=1 java "$HERE/HttpServe.java" "$AIP" 8081 20
wait_line "$T/jvm.out" listening 60 || fail "JVM server did not start: $(tail -3 "$T/jvm.err")"
served "JVM HttpServer" "http://$AIP:8081/" "java $AIP"
pid=$(bg_pid jvm)
busywait 30000 dead "$pid"
bg_stop jvm
accepted "JVM HttpServer" "$T/jvm.err"

log "node: listen(port) without a host"
bg_start node AX ACCEL_STATS=1 node "$HERE/serve.js" 8082 6
wait_line "$T/node.out" listening 30 || fail "node did not start: $(tail -3 "$T/node.err")"
check "node listens on :: (dual stack)" grep -q '"address":"::"' "$T/node.out"
served "node listen(port)" "http://$AIP:8082/" "node"
pid=$(bg_pid node)
busywait 20000 dead "$pid"
bg_stop node
accepted "node listen(port)" "$T/node.err"

n=0
for bind in "--bind ::" ""; do
    n=$((n + 1))
    log "python3 -m http.server ${bind:-without --bind}"
    # A background job of a script ignores SIGINT, and so would python's
    # KeyboardInterrupt (its clean exit, with the ACCEL_STATS dump):
    # timeout(1) restores it and interrupts the server after 8 s.
    bg_start "py$n" AX ACCEL_STATS=1 timeout -s INT 8 "$PY" -m http.server $bind \
        --directory "$T/www" 8083
    wait_tcp K "$AIP" 8083 30 || fail "python http.server ${bind} not reachable"
    served "python http.server ${bind:-default}" "http://$AIP:8083/page.html" "$T/www/page.html"
    busywait 15000 dead "$(bg_pid "py$n")"
    bg_stop "py$n"
    accepted "python http.server ${bind:-default}" "$T/py$n.err"
done

log "a listener on 127.0.0.1 says why it is on the kernel"
AX ACCEL_STATS=1 ACCEL_LOG_LEVEL=info "$PY" -c '
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
