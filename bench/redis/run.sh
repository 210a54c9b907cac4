#!/bin/bash
# Redis benchmark: the same stock redis-server (Debian's, unmodified, no
# persistence) on the kernel and under accel-run, loaded by
# redis-benchmark, in one run, with the same pinning: redis-benchmark on
# CPU 0, redis-server on CPU 1.
#
#   kernel series: redis-benchmark in netns accel-k, redis-server in netns
#     accel-a; accel-a's veth gets the kernel IP 10.200.0.2/24 for this
#     series only. The kernel baseline of both topologies.
#   topology A (kernel client): the same kernel redis-benchmark against
#     redis-server under accel-run in accel-a (af_xdp on the same veth).
#   topology B (both ends accelerated): redis-benchmark under accel-run
#     against redis-server under accel-run, over memif, both in accel-m.
#
# Points: SET and GET (redis-benchmark's 3-byte values) with 1 and 32
# connections, and GET with 32 connections pipelining 16 requests each
# (-P 16). A point sends the same number of requests in every series: the
# kernel's rate for it (a short calibration run before the kernel's point)
# times the duration; the kernel series runs first.
# Per point: requests/s, p50 and p99 latency (redis-benchmark --csv) and
# the server's CPU seconds per 100k requests. Writes
# <out>/redis-<date>.json, .md (conditions, tables, ratios accel/kernel)
# and .png (accel vs kernel, every point).
#
# usage: bench/redis/run.sh [--smoke] [--duration S] [--out DIR]
#                           [--topology A|B|all]
#   --smoke      2 s per point (CI: checks that it produces its files)
#   --duration S seconds per point at the kernel's rate (default 10)
#   --topology T A, B or all (default); the kernel series always runs
# Exit: 0 when every file was written and every point worked (--smoke:
# every kernel point), 1 otherwise, 4 when not root.
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/../lib/common.sh"
while [[ $# -gt 0 ]]; do
    bench_opt "$@"
    shift "$OPT_SHIFT"
done
bench_check_opts

. "$HERE/../../tests/lib/netns.sh"

bench_files redis
for p in redis-server redis-benchmark; do
    command -v "$p" >/dev/null ||
        fail "$p is not installed (tools/setup.sh installs redis-server and redis-tools)"
done
PORT=6379
POINTS=("set 1 1" "get 1 1" "set 32 1" "get 32 1" "get 32 16") # test conns pipeline
declare -A NREQ # requests of each point, from the kernel series

# server_start SERIES MODE IP [ENV...]: redis-server pinned to CPU_SERVER;
# sets SNAME, SPID; START_ERR empty when it serves.
server_start() {
    local series=$1 mode=$2 ip=$3
    shift 3
    SNAME=redis-$series
    START_ERR=""
    bg_start "$SNAME" "$mode" "$@" taskset -c "$CPU_SERVER" redis-server --bind "$ip" \
        --port "$PORT" --protected-mode no --save "" --appendonly no --dir "$T" \
        --daemonize no --logfile "$T/$SNAME.log"
    SPID=$(bg_pid "$SNAME")
    case $mode in
    MX) slowwait 20 memif_listening "$MEMIF_SOCK" ||
        START_ERR="the memif server does not listen: $(grep -v stats: "$T/$SNAME.err" | tail -2)" ;;
    *) wait_tcp K "$ip" "$PORT" || START_ERR="redis-server does not accept on $ip:$PORT" ;;
    esac
    [[ -z $START_ERR ]] && log "$SNAME: pid $SPID"
}

server_stop() {
    bg_stop "$SNAME" TERM || log "$SNAME exited with status $?"
    meta "stats/$1" "$T/$SNAME.err"
}

# calibrate CMODE IP TEST CONNS PIPELINE: the kernel's rate for the point
# from a short run (20k requests, 20x that pipelined), times the duration,
# into NREQ.
calibrate() {
    local n=$((20000 * $5)) f=$T/rb-calibrate-$3-$4-$5
    ns_argv "$1" taskset -c "$CPU_CLIENT" redis-benchmark -h "$2" -p "$PORT" --csv \
        -t "$3" -c "$4" -P "$5" -n "$n"
    timed_client "$f.cpu" 60 "$f.csv"
    NREQ[$3-$4-$5]=$("$PY" -c 'import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith(chr(34)))]
print(max(1000, int(float(rows[0]["rps"]) * int(sys.argv[2]))) if rows else "")' "$f.csv" "$DUR")
    log "kernel $3 c=$4 P=$5: ${NREQ[$3-$4-$5]:-?} requests per point"
}

# point SERIES CMODE IP TEST CONNS PIPELINE [CLIENT_ENV...]
point() {
    local series=$1 cmode=$2 ip=$3 test=$4 conns=$5 pl=$6 f t0 t1 n why=""
    shift 6
    f=$T/rb-$series-$test-$conns-$pl
    [[ $series == kernel ]] && calibrate "$cmode" "$ip" "$test" "$conns" "$pl"
    n=${NREQ[$test-$conns-$pl]:-$((DUR * 20000))}
    t0=$(cpu_ticks "$SPID")
    ns_argv "$cmode" "$@" taskset -c "$CPU_CLIENT" redis-benchmark -h "$ip" -p "$PORT" --csv \
        -t "$test" -c "$conns" -P "$pl" -n "$n"
    timed_client "$f.cpu" $((DUR * 10 + 30)) "$f.csv"
    t1=$(cpu_ticks "$SPID")
    alive "$SPID" || why="redis-server $SPID $(exit_status "$SPID")"
    "$PY" "$HERE/rbparse.py" --series "$series" --test "$test" --conns "$conns" \
        --pipeline "$pl" --requests "$n" --csv "$f.csv" --client-cpu "$f.cpu" \
        ${t0:+${t1:+--server-ticks $((t1 - t0))}} --clk-tck "$CLK_TCK" \
        ${why:+--failed "$why"} --log-prefix "[$TEST_NAME] " >>"$RAW"
}

# run_series SERIES SERVER_MODE CLIENT_MODE IP [SERVER_ENV -- CLIENT_ENV]
run_series() {
    local series=$1 smode=$2 cmode=$3 ip=$4 p senv=() cenv=()
    shift 4
    while [[ $# -gt 0 && $1 != -- ]]; do
        senv+=("$1")
        shift
    done
    [[ ${1:-} == -- ]] && shift
    cenv=("$@")
    server_start "$series" "$smode" "$ip" "${senv[@]}"
    for p in "${POINTS[@]}"; do
        read -r test conns pl <<<"$p"
        if [[ -n $START_ERR ]] || ! alive "$SPID"; then
            "$PY" "$HERE/rbparse.py" --series "$series" --test "$test" --conns "$conns" \
                --pipeline "$pl" --failed "${START_ERR:-redis-server is gone}" >>"$RAW"
            continue
        fi
        point "$series" "$cmode" "$ip" "$test" "$conns" "$pl" "${cenv[@]}"
    done
    server_stop "$series"
}

lab_up
log "points of $DUR s at the kernel's rate; redis-benchmark on CPU $CPU_CLIENT, redis-server on CPU $CPU_SERVER"
meta_conditions
meta redis_version "$(redis-server --version)"

with_kernel_ip run_series kernel A K "$AIP"
[[ $TOPO == B ]] || run_series accel_a AX K "$AIP" ACCEL_STATS=2
MEMIF_SOCK=$T/bench-memif.sock
[[ $TOPO == A ]] || run_series accel_b MX MX "$MIP_SRV" ACCEL_STATS=2 \
    "ACCEL_VDEV=net_memif0,role=server,socket=$MEMIF_SOCK" "ACCEL_IP=$MIP_SRV/24" -- \
    "ACCEL_VDEV=net_memif0,role=client,socket=$MEMIF_SOCK" "ACCEL_IP=$MIP_CLI/24"

bench_report
check_points '{series} {test} c={conns} P={pipeline}'
cat "$BASE.md"
finish
