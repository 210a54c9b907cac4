#!/bin/bash
# Scenario: accel-stat watches running accelerated processes through their
# live state regions (/dev/shm/accel-stat-<pid>, base/statreg.c).
# Checks:
#   - stock nginx (master + one worker) under accel-run: accel-stat lists
#     both processes; after N requests from the kernel peer, each on a new
#     connection (curl), the workers' tcp_accept grew by exactly N, read
#     live with --json, and the same with --prometheus (which passes the
#     Prometheus text-format parser of python3-prometheus-client);
#     tx_bytes grew by at least the bytes curl received;
#   - accel-stat -t -l shows nginx's listener on :80; a connection held
#     open by the peer shows as ESTAB with the peer's address;
#   - a process with a socket left on the kernel (bound to loopback):
#     accel-stat --reasons shows its fd with the reason; once the process
#     closes that fd, it is not shown any more;
#   - the region is 0600 and its process's user's: nginx's worker runs as
#     nobody and its region is nobody's; user nobody can neither read the
#     root master's region nor get that process from accel-stat (exit 1);
#   - a process killed with SIGKILL leaves its region: accel-stat removes
#     it (and says so), and the listing no longer has the pid;
#   - at a clean exit the region is gone; with ACCEL_STATS_LIVE=0 none is
#     made.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
STAT=$(dirname "$ACCEL_RUN")/accel-stat
[[ -x $STAT ]] || fail "accel-stat not found next to $ACCEL_RUN"
region() { echo "/dev/shm/accel-stat-$1"; }

# json_sum FILE COMM COUNTER: COUNTER summed over the processes named COMM
json_sum() {
    "$PY" - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(p["counters"].get(sys.argv[3], 0) for p in d["processes"]
          if p["comm"] == sys.argv[2]))
EOF
}
PY=/usr/bin/python3

mkdir -p "$T/www"
mkfile "$T/www/f.bin" 300000
nginx_conf "$T/n.conf" "$AIP:80" "$T/www" on
bg_start nginx AX nginx -c "$T/n.conf" -p "$T" -e "$T/n.error.log"
wait_tcp K "$AIP" 80 || fail "accelerated nginx does not answer on $AIP:80"
MASTER=$(bg_pid nginx)
slowwait 10 test -e "$(region "$MASTER")" || fail "no region for nginx's master $MASTER"
WORKER=$(pgrep -P "$MASTER" nginx | head -1)
[[ -n $WORKER ]] || fail "no nginx worker"
slowwait 10 test -e "$(region "$WORKER")" || fail "no region for nginx's worker $WORKER"

"$STAT" >"$T/list.txt" 2>"$T/list.err"
check_eq "accel-stat: exit status" "$?" 0
check "accel-stat lists the master" grep -Eq "^ *$MASTER +root +nginx +up" "$T/list.txt"
# nginx started as root runs its workers as user nobody: the worker's
# region is made after that, so it is nobody's own.
check "accel-stat lists the worker (user nobody)" grep -Eq "^ *$WORKER +nobody +nginx +up" "$T/list.txt"
check_eq "the worker's region belongs to nobody" "$(stat -c %U "$(region "$WORKER")")" nobody
check_eq "a region is mode 0600" "$(stat -c %a "$(region "$WORKER")")" 600

# --- counters against generated traffic ---------------------------------------
"$STAT" --json "$WORKER" >"$T/before.json" || fail "accel-stat --json $WORKER failed"
N=25
got=0
for ((i = 0; i < N; i++)); do
    b=$(K curl -s -o /dev/null -w '%{size_download}' "http://$AIP/f.bin") || fail "curl $i failed"
    got=$((got + b))
done
check_eq "curl received $N files" "$got" $((N * 300000))
sleep 0.5 # a snapshot interval: the port part; the counters are live
"$STAT" --json "$WORKER" >"$T/after.json" || fail "accel-stat --json $WORKER failed"
check "--json parses" "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/after.json"
acc0=$(json_sum "$T/before.json" nginx tcp_accept)
acc1=$(json_sum "$T/after.json" nginx tcp_accept)
check_eq "the worker's tcp_accept grew by the $N requests" $((acc1 - acc0)) "$N"
tx0=$(json_sum "$T/before.json" nginx tx_bytes)
tx1=$(json_sum "$T/after.json" nginx tx_bytes)
check_ge "the worker's tx_bytes grew by at least what curl received" $((tx1 - tx0)) "$got"
check_le "... and by less than 10 % more (headers)" $((tx1 - tx0)) $((got * 11 / 10))

"$STAT" --prometheus >"$T/prom.txt" || fail "accel-stat --prometheus failed"
check "--prometheus passes the Prometheus text-format parser" "$PY" -c '
import sys, prometheus_client.parser as p
list(p.text_string_to_metric_families(open(sys.argv[1]).read()))' "$T/prom.txt"
check_eq "--prometheus: the worker's accel_tcp_accept_total" \
    "$(grep -E "^accel_tcp_accept_total\{pid=\"$WORKER\"" "$T/prom.txt" | awk '{print $2}')" "$acc1"
check_eq "--prometheus: one # TYPE per metric" \
    "$(grep -c '^# TYPE accel_tcp_accept_total ' "$T/prom.txt")" 1

# --- the socket view ---------------------------------------------------------
"$STAT" -t -l "$WORKER" >"$T/listen.txt" || fail "accel-stat -t -l failed"
check "-t -l: nginx's listener on $AIP:80" grep -Eq "^tcp +LISTEN .*$AIP:80 " "$T/listen.txt"
# a keep-alive request of 27 bytes, answered, and the connection held
K bash -c "exec 3<>/dev/tcp/$AIP/80; printf 'GET / HTTP/1.1\r\nHost: a\r\n\r\n' >&3; sleep 4" &
HOLD=$!
sleep 1
"$STAT" -t "$WORKER" >"$T/estab.txt" || fail "accel-stat -t failed"
check "-t: the held connection is ESTAB with the peer $KIP" \
    grep -Eq "^tcp +ESTAB .*$AIP:80 +$KIP:[0-9]+ " "$T/estab.txt"
"$STAT" -t -i "$WORKER" >"$T/estab-i.txt" || fail "accel-stat -t -i failed"
check "-t -i: the held connection received the request's 27 bytes" \
    grep -q " bytes_received:27 " "$T/estab-i.txt"
acked=$(grep -o ' bytes_acked:[0-9]*' "$T/estab-i.txt" | head -1 | cut -d: -f2)
check "-t -i: the response's bytes acked (SYN-ACK and more than 100: $acked)" \
    test "${acked:-0}" -gt 100
"$STAT" -t --dport 1 "$WORKER" >"$T/none.txt"
check_not "-t --dport 1: no row" grep -q "ESTAB" "$T/none.txt"
wait "$HOLD"

# --- why a socket stays on the kernel -----------------------------------------
bg_start why AX "$PY" -c '
import socket, time
k = socket.socket()
k.bind(("127.0.0.1", 0))
print("bound", flush=True)
time.sleep(2)
k.close()
print("closed", flush=True)
time.sleep(30)'
WPY=$(bg_pid why)
wait_line "$T/why.out" bound 20 || fail "the loopback socket process did not start"
"$STAT" --reasons "$WPY" >"$T/reasons.txt" 2>&1
check "--reasons: the loopback socket with its reason" \
    grep -Eq "bind +127\.0\.0\.1:.*not the stack's" "$T/reasons.txt"
wait_line "$T/why.out" closed 20 || fail "the process did not close its socket"
"$STAT" --reasons "$WPY" >"$T/reasons2.txt" 2>&1
check_not "--reasons: a closed fd is not shown" grep -Eq "bind +127\.0\.0\.1" "$T/reasons2.txt"

# --- other users ---------------------------------------------------------------
check_not "user nobody cannot read root's region (nginx's master)" \
    runuser -u nobody -- cat "$(region "$MASTER")"
runuser -u nobody -- "$STAT" "$MASTER" >"$T/nobody.out" 2>&1
check_eq "accel-stat as nobody on root's process: exit 1" "$?" 1
check "accel-stat as nobody reads its own process (the worker)" \
    runuser -u nobody -- "$STAT" "$WORKER"

# --- stale regions -------------------------------------------------------------
bg_stop why KILL
check "a process killed with SIGKILL leaves its region" test -e "$(region "$WPY")"
"$STAT" >"$T/list2.txt" 2>"$T/list2.err"
check "accel-stat says it removed the stale region" grep -q "stale region.*$WPY" "$T/list2.err"
check_not "... and it is gone" test -e "$(region "$WPY")"
check_not "... and not listed" grep -Eq "^ *$WPY " "$T/list2.txt"

# --- exit, and ACCEL_STATS_LIVE=0 ------------------------------------------------
bg_stop nginx QUIT
check_not "nginx's regions are gone after its exit" \
    eval "test -e $(region "$MASTER") || test -e $(region "$WORKER")"
bg_start quiet AX ACCEL_STATS_LIVE=0 "$PY" -c '
import socket, time
s = socket.socket(); s.bind(("10.200.0.2", 8090)); s.listen(); print("up", flush=True)
time.sleep(30)'
wait_line "$T/quiet.out" up 20 || fail "the quiet process did not start"
sleep 0.5
check_not "ACCEL_STATS_LIVE=0: no region" test -e "$(region "$(bg_pid quiet)")"
bg_stop quiet
finish
