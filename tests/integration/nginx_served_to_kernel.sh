#!/bin/bash
# Scenario: a stock nginx (master_process off, one process) under accel-run
# in the accelerated netns serves a kernel curl and wrk in the peer netns.
# Checks: 50 MB download sha256 equal; small page twice on one keep-alive
# connection; `wrk -t1 -c64 -d5s` with zero socket errors and no non-2xx;
# nginx still alive afterwards and its ACCEL_STATS show accepted connections.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
mkdir -p "$T/www"
mkfile "$T/www/big.bin" 50000000
echo "small page $RANDOM$RANDOM" >"$T/www/small.html"
nginx_conf "$T/a.conf" "$AIP:80" "$T/www" off
bg_start anginx AX ACCEL_STATS=2 nginx -c "$T/a.conf" -p "$T" -e "$T/a.error.log"
wait_tcp K "$AIP" 80 30 || fail "accelerated nginx not reachable at $AIP:80"
pass "accelerated nginx reachable from $NS_K"

log "check: 50 MB file to a kernel curl"
K curl -sS -m 120 -o "$T/big.got" "http://$AIP/big.bin"
check_eq "kernel curl 50 MB: exit status" "$?" 0
check_eq "50 MB sha256 equal" "$(sha "$T/big.got" 2>/dev/null)" "$(sha "$T/www/big.bin")"

log "check: small page twice on one keep-alive connection"
K curl -sS -m 20 -w '%{num_connects}\n' -o "$T/s1.got" "http://$AIP/small.html" \
    -o "$T/s2.got" "http://$AIP/small.html" >"$T/conns.txt"
check_eq "kernel curl keep-alive: exit status" "$?" 0
check "small page 1 equal" cmp "$T/www/small.html" "$T/s1.got"
check "small page 2 equal" cmp "$T/www/small.html" "$T/s2.got"
check_eq "connections opened for the 2 requests (1st, 2nd)" "$(tr '\n' ' ' <"$T/conns.txt")" "1 0 "

log "check: wrk -t1 -c64 -d5s"
K timeout 60 wrk -t1 -c64 -d5s "http://$AIP/hello" >"$T/wrk.txt" 2>&1
check_eq "wrk exit status" "$?" 0
cat "$T/wrk.txt"
reqs=$(awk '/requests in/ {print $1}' "$T/wrk.txt")
check_ge "wrk requests completed" "$reqs" 1000
if grep -q "Socket errors" "$T/wrk.txt"; then
    check_fail "wrk: $(grep 'Socket errors' "$T/wrk.txt")"
else
    pass "wrk: no socket errors"
fi
if grep -q "Non-2xx" "$T/wrk.txt"; then
    check_fail "wrk: $(grep 'Non-2xx' "$T/wrk.txt")"
else
    pass "wrk: no non-2xx responses"
fi

pid=$(bg_pid anginx)
check "accelerated nginx still alive after wrk" alive "$pid"
K curl -sS -m 10 -o "$T/s3.got" "http://$AIP/small.html"
check "small page after wrk equal" cmp "$T/www/small.html" "$T/s3.got"

bg_stop anginx QUIT
# nginx points its stderr at its error log, so the ACCEL_STATS dump is there.
check_ge "nginx stats tcp_accept" "$(stat_get "$T/a.error.log" tcp_accept)" 64
check_ge "nginx stats tx_frames" "$(stat_get "$T/a.error.log" tx_frames)" 30000
finish
