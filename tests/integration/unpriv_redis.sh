#!/bin/bash
# Scenario: stock redis-server accelerated as the user redis (no
# capability), its port through accel-broker (docs/DESIGN.md section 3,
# "Privileges"); redis-cli and redis-benchmark from the kernel peer.
#
# Checks:
#   1. PING and a 256 KiB value intact, on the stack's address, from a
#      process of user redis with no capability;
#   2. redis-benchmark (8 connections, SET/GET) to the end, with a BGSAVE
#      (fork: the child shares the port) that succeeds;
#   3. the files, sockets and memory accel made are owner- or group-only
#      while it runs (check_private);
#   4. SHUTDOWN NOSAVE exits 0; its counters show the connections and
#      frames on the stack; the broker released the interface and, redis
#      running with ACCEL_XDP_KEEP=0, detached accel's program.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$LIBDIR/unpriv.sh"

need_programs redis-server redis-cli redis-benchmark
PORT=6379
lab_up
unpriv_setup redis
install -d -o redis -g redis -m 0700 "$T/redis"

log "---- 1. redis-server as redis, accelerated"
bg_start_as redis redis ACCEL_STATS=2 ACCEL_XDP_KEEP=0 redis-server --bind "$AIP" --port "$PORT" \
    --protected-mode no --save "" --appendonly no --dir "$T/redis" \
    --dbfilename dump.rdb --daemonize no --logfile "$T/redis/redis.log"
rpid=$(bg_pid redis)
wait_tcp K "$AIP" "$PORT" || fail "redis-server did not start"
check_eq "redis-server's user" "$(stat -c %U "/proc/$rpid")" redis
check_eq "redis-server has no capability" \
    "$(awk '/^CapEff/ {print $2}' "/proc/$rpid/status")" 0000000000000000
RC() { K timeout 20 redis-cli -h "$AIP" -p "$PORT" "$@"; }
check_eq "PING" "$(RC ping)" PONG
redis_big_roundtrip

log "---- 2. redis-benchmark with a BGSAVE during it"
bg_start bench K timeout 90 redis-benchmark -h "$AIP" -p "$PORT" -c 8 -n 100000 \
    -t set,get -q
bench_pid=$(bg_pid bench)
sleep 0.3
check_eq "BGSAVE during the load" "$(RC bgsave)" "Background saving started"
slowwait 90 dead "$bench_pid"
wait "$bench_pid"
check_eq "redis-benchmark: exit status" "$?" 0
check_eq "redis-benchmark: SET and GET reported" \
    "$(tr '\r' '\n' <"$T/bench.out" | grep -cE '^(SET|GET): [0-9.]+ requests per second')" 2
slowwait 20 eval '[[ $(RC info persistence | tr -d "\r" | sed -n "s/^rdb_bgsave_in_progress://p") == 0 ]]'
check_eq "the snapshot succeeded" \
    "$(RC info persistence | tr -d '\r' | sed -n 's/^rdb_last_bgsave_status://p')" ok

log "---- 3. what accel made is not open to others"
check_private "$rpid"

log "---- 4. shutdown, counters, the broker's cleanup"
RC shutdown nosave >/dev/null 2>&1
busywait 10000 dead "$rpid" || check_fail "redis-server did not exit"
wait "$rpid" 2>/dev/null
check_eq "redis-server: exit status" "$?" 0
check_on_stack redis redis 10 1000 gone
finish
