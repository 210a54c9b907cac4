#!/bin/bash
# Scenario: an unmodified curl under accel-run in the accelerated netns (no
# kernel IP there) downloads a small page and a 50 MB file from a kernel
# nginx in the peer netns. Checks: contents/sha256 equal, and the process's
# ACCEL_STATS counters show frames both ways and at least one active TCP
# connection (proof that the userspace stack carried the traffic). Then an
# accelerated wrk (epoll, non-blocking connects, fds sized by its own event
# loop: fd numbers must stay as low as on the kernel) runs 16 connections
# for 3 s against the same nginx with no socket errors.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
mkdir -p "$T/www"
mkfile "$T/www/big.bin" 50000000
echo "small page $RANDOM$RANDOM" >"$T/www/small.html"
nginx_conf "$T/k.conf" "$KIP:80" "$T/www"
bg_start knginx K nginx -c "$T/k.conf" -p "$T" -e "$T/k.error.log"
wait_tcp K "$KIP" 80 || fail "kernel nginx in $NS_K did not start"
pass "kernel nginx listening on $KIP:80"

log "check: small page through accel-run curl"
AX ACCEL_STATS=2 curl -sS -m 30 -o "$T/small.got" "http://$KIP/small.html" 2>"$T/curl-small.err"
rc=$?
check_eq "accel-run curl small page: exit status" "$rc" 0
check "small page content equal" cmp "$T/www/small.html" "$T/small.got"

log "check: 50 MB file through accel-run curl"
AX ACCEL_STATS=2 curl -sS -m 120 -o "$T/big.got" "http://$KIP/big.bin" 2>"$T/curl-big.err"
rc=$?
check_eq "accel-run curl 50 MB: exit status" "$rc" 0
check_eq "50 MB sha256 equal" "$(sha "$T/big.got" 2>/dev/null)" "$(sha "$T/www/big.bin")"

log "check: bypass evidence in ACCEL_STATS of the 50 MB curl"
check_ge "stats rx_frames" "$(stat_get "$T/curl-big.err" rx_frames)" 30000
check_ge "stats rx_bytes" "$(stat_get "$T/curl-big.err" rx_bytes)" 50000000
check_ge "stats tx_frames" "$(stat_get "$T/curl-big.err" tx_frames)" 1
check_ge "stats tcp_connect" "$(stat_get "$T/curl-big.err" tcp_connect)" 1
check_ge "small page stats tcp_connect" "$(stat_get "$T/curl-small.err" tcp_connect)" 1

log "check: accel-run wrk -t1 -c16 -d3s against the kernel nginx"
IT_FG_TIMEOUT=60 AX wrk -t1 -c16 -d3s "http://$KIP/hello" >"$T/wrk.txt" 2>&1
check_eq "accel-run wrk exit status" "$?" 0
cat "$T/wrk.txt"
check_ge "accel-run wrk requests completed" "$(awk '/requests in/ {print $1}' "$T/wrk.txt")" 1000
if grep -q "Socket errors" "$T/wrk.txt"; then
    check_fail "accel-run wrk: $(grep 'Socket errors' "$T/wrk.txt")"
else
    pass "accel-run wrk: no socket errors"
fi
finish
