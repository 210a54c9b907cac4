#!/bin/bash
# Scenario: stock Redis (Debian's redis-server, unmodified) under accel-run
# in the accelerated netns, driven from the kernel netns by redis-cli and
# redis-benchmark. Redis is a single-threaded epoll server that forks for
# its snapshots (BGSAVE): the child writes the data set to disk and
# _exit()s, never touching the client connections it copied, while the
# parent goes on serving them. Every fork freezes the copied connections
# until a process uses them (docs/DESIGN.md §8), and for an epoll server
# the next epoll_wait is that use: before it was, the clients' requests
# were held and redis-benchmark stalled at the first BGSAVE.
#
# Checks:
#   1. PING, and a 1 MiB value stored and read back intact (sha256);
#   2. redis-benchmark (16 connections, SET then GET) runs to the end, with
#      3 BGSAVEs during its SET phase, and each snapshot succeeds;
#   3. a connection opened before the snapshots, idle while they run,
#      still answers afterwards (PING, INCR);
#   4. the snapshot file is a valid RDB (redis-check-rdb) and the 1 MiB
#      value is still intact;
#   5. SHUTDOWN NOSAVE ends the server with exit status 0.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

for p in redis-server redis-cli redis-benchmark redis-check-rdb; do
    command -v "$p" >/dev/null ||
        fail "$p is not installed (tools/setup.sh installs redis-server and redis-tools)"
done

PORT=6379
lab_up
bg_start redis AX ACCEL_STATS=2 redis-server --bind "$AIP" --port "$PORT" \
    --protected-mode no --save "" --appendonly no --dir "$T" \
    --dbfilename dump.rdb --daemonize no --logfile "$T/redis.log"
wait_tcp K "$AIP" "$PORT" || fail "redis-server did not start"

RC() { K timeout 20 redis-cli -h "$AIP" -p "$PORT" "$@"; }
# info_field NAME: a field of INFO persistence.
info_field() { RC info persistence | tr -d '\r' | sed -n "s/^$1://p"; }

log "---- 1. PING and a 1 MiB value"
check_eq "PING" "$(RC ping)" PONG
head -c 786432 /dev/urandom | base64 -w0 >"$T/big"
check_eq "SET of 1 MiB" "$(RC -x set big <"$T/big")" OK
want=$(sha256sum <"$T/big" | cut -d' ' -f1)
got=$(RC --raw get big | head -c "$(stat -c %s "$T/big")" | sha256sum | cut -d' ' -f1)
check_eq "GET of 1 MiB: sha256" "$got" "$want"

log "---- 3. (set up) a connection held across the snapshots"
cat >"$T/held.py" <<'PY'
import os, socket, sys, time
ip, port, go = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection((ip, port), timeout=20)
def cmd(line):
    s.sendall(line.encode() + b"\r\n")
    return s.recv(256).decode().strip()
print("before", cmd("PING"), flush=True)
while not os.path.exists(go):
    time.sleep(0.05)
print("after", cmd("PING"), cmd("INCR held"), flush=True)
PY
bg_start held K "$PY" "$T/held.py" "$AIP" "$PORT" "$T/go"
wait_line "$T/held.out" '^before' || fail "the held connection got no first answer"
check_eq "held connection: PING before" "$(cat "$T/held.out")" "before +PONG"

log "---- 2. redis-benchmark with 3 BGSAVEs during it"
bg_start bench K timeout 90 redis-benchmark -h "$AIP" -p "$PORT" -c 16 \
    -n 600000 -t set,get -q
bench_pid=$(bg_pid bench)
sleep 0.5
saves=0
for i in 1 2 3; do
    slowwait 20 eval '[[ $(info_field rdb_bgsave_in_progress) == 0 ]]' ||
        check_fail "snapshot $((i - 1)) did not finish"
    [[ $(RC bgsave) == "Background saving started" ]] && saves=$((saves + 1))
    sleep 0.7
done
check_eq "BGSAVE accepted during the load" "$saves" 3
slowwait 90 dead "$bench_pid"
wait "$bench_pid"
check_eq "redis-benchmark: exit status" "$?" 0
tr '\r' '\n' <"$T/bench.out" | grep -E '^(SET|GET): [0-9.]+ requests per second' >"$T/bench.final"
check_eq "redis-benchmark: SET and GET ran to the end" \
    "$(cut -d: -f1 "$T/bench.final" | tr '\n' ' ')" "SET GET "
log "redis-benchmark: $(tr '\n' ';' <"$T/bench.final")"
slowwait 20 eval '[[ $(info_field rdb_bgsave_in_progress) == 0 ]]'
check_eq "last snapshot status" "$(info_field rdb_last_bgsave_status)" ok
check_ge "snapshots that ended with success (server log)" \
    "$(grep -c 'Background saving terminated with success' "$T/redis.log")" 3

log "---- 3. the held connection after the snapshots"
touch "$T/go"
slowwait 20 grep -q '^after' "$T/held.out" || check_fail "the held connection got no answer after the snapshots"
check_eq "held connection: PING and INCR after" "$(sed -n 2p "$T/held.out")" "after +PONG :1"

log "---- 4. the snapshot file and the data"
check_eq "redis-check-rdb" "$(redis-check-rdb "$T/dump.rdb" 2>&1 | grep -c 'RDB looks OK')" 1
got=$(RC --raw get big | head -c "$(stat -c %s "$T/big")" | sha256sum | cut -d' ' -f1)
check_eq "GET of 1 MiB after the snapshots: sha256" "$got" "$want"

log "---- 5. SHUTDOWN NOSAVE"
RC shutdown nosave >/dev/null 2>&1
pid=$(bg_pid redis)
slowwait 20 dead "$pid" || check_fail "redis-server did not exit after SHUTDOWN"
wait "$pid"
check_eq "redis-server: exit status" "$?" 0
log "server: share_claims $(stat_get "$T/redis.err" share_claims), share_held $(stat_get "$T/redis.err" share_held)"
finish
