#!/bin/bash
# HTTP benchmark: the same stock nginx (master + `worker_processes 1`,
# `return 200` with a small body) on the kernel and under accel-run, loaded
# by wrk, in one run, with the same pinning: the load on CPU 0, nginx (master
# and worker) on CPU 1.
#
#   kernel series: wrk in netns accel-k, nginx in netns accel-a; accel-a's
#     veth gets the kernel IP 10.200.0.2/24 for this series only. It is the
#     kernel baseline of both topologies (measured once: the kernel ends of
#     A and B are the same processes, namespaces, veth, pinning and config).
#   topology A (kernel client): the same kernel wrk in accel-k against
#     nginx under accel-run in accel-a (af_xdp on the same veth).
#   topology A with a shared address (series accel_as, right after A in
#     every round): the same, with the kernel IP on accel-a's veth and
#     ACCEL_IP unset, so the stack shares the kernel's address (its XDP
#     program takes port 80 and leaves the rest to the kernel); compared
#     with A (an address of the stack's own): what the sharing costs.
#   topology B (both ends accelerated): wrk under accel-run against nginx
#     under accel-run, over memif, both in netns accel-m.
#   topology B without the live state region (series accel_bq, right
#     after B in every round): the same two ends with ACCEL_STATS_LIVE=0,
#     so nothing is published for accel-stat; compared with B: what the
#     live counters and snapshots cost (issue 23: under 2 %).
#   topology B over IPv6 (series accel_b6, right after B in every round):
#     the same, nginx `listen [fd00:201::1]:80` and wrk to
#     http://[fd00:201::1]/, both ends with ACCEL_IP6 besides ACCEL_IP;
#     compared with B (IPv4): the issue's "IPv6 within 5 % of IPv4".
#
# Points of every series: keep-alive with 1, 32 and 256 connections, and
# `Connection: close` (a new connection per request, so req/s = conn/s) with
# 32; B over IPv6 only keep-alive and close with 32. Per point: req/s,
# p50/p99 (`wrk --latency`), wrk's errors, and CPU seconds per 100k
# requests of the server (master + worker) and of wrk. A
# point that fails is recorded as failed with its reason and the run goes on.
# Right before and right after every wrk run (nginx idle), bench/lib/c2c.c
# measures what a cache line's round trip between CPU 0 and CPU 1 costs:
# this VM's two placements of its vCPUs (about 95 and 415 ns) change
# topology B's figures by some 2.5x; the .md reports it per point.
# Writes <out>/http-<date>.json, .md (conditions, tables, ratios accel/kernel,
# the issue's targets met/missed) and .png (accel vs kernel, every point).
#
# usage: bench/http/run.sh [--smoke] [--duration S] [--out DIR] [--rounds N]
#                          [--single-process] [--perf] [--topology A|B|all]
#                          [--many N]
#   --smoke           2 s per point (CI: checks that the pipeline produces
#                     its files; a failed accelerated point is only reported)
#   --duration S      seconds per point (default 10)
#   --single-process  nginx with `master_process off` (one process) instead
#                     of master + one worker
#   --perf            one more c=32 keep-alive run per accelerated series,
#                     right after the measured one and not counted, with
#                     `perf record -g` on the nginx worker; the top of
#                     `perf report --no-children` goes into the .md
#   --topology T      A, B (B and B over IPv6) or all (default); the kernel
#                     series always runs
#   --many N          one more keep-alive point with N connections (1000
#                     to 30000; nginx's worker_connections and both ends'
#                     open-file limits are raised to fit), before the
#                     close point: a burst of N requests at once, beyond
#                     what the port's rings hold
#   --rounds N        run the series N times, one round after the other
#                     (kernel, A, A shared, B, B quiet, B over IPv6; kernel, A, ...): the tables show
#                     each point's median round, and each target the median
#                     of its per-round ratios (each round's accel against
#                     that round's kernel) with every round's ratio. This
#                     VM's run-to-run spread is +-10 %; 3 rounds make a
#                     verdict near a bound meaningful. Default 1.
# Exit: 0 when every file was written and every point worked (--smoke: every
# kernel point), 1 otherwise, 4 when not root.
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/../lib/common.sh"
SINGLE=0
PERF=0
ROUNDS=1
MANY=0
while [[ $# -gt 0 ]]; do
    OPT_SHIFT=1
    case $1 in
    --single-process) SINGLE=1 ;;
    --rounds)
        ROUNDS=${2-}
        OPT_SHIFT=2
        [[ $ROUNDS =~ ^[1-9][0-9]?$ ]] || { echo "--rounds: a count from 1 to 99" >&2; exit 2; }
        ;;
    --perf) PERF=1 ;;
    --many)
        MANY=${2-}
        OPT_SHIFT=2
        [[ $MANY =~ ^[0-9]+$ ]] && ((MANY >= 1000 && MANY <= 30000)) ||
            { echo "--many: a connection count from 1000 to 30000" >&2; exit 2; }
        ;;
    --memif) ;; # topology B always runs now; kept for old command lines
    *) bench_opt "$@" ;;
    esac
    shift "$OPT_SHIFT"
done
bench_check_opts

. "$HERE/../../tests/lib/netns.sh"

bench_files http
POINTS=("1 1" "32 1" "256 1" "32 0") # conns keepalive
# The many-connection point runs before the close point: after 200-400k
# connections closed in 10 s, the kernel client holds thousands of its own
# sockets in TIME-WAIT when the server's FIN reached it after wrk had
# closed (2.4 % of connections against accel, 0.03 % against the kernel),
# and its connect() then spends seconds in __inet_hash_connect choosing
# ports for 10000 new connections: that measures the client's port search.
((MANY)) && POINTS=("1 1" "32 1" "256 1" "$MANY 1" "32 0")
# B over IPv6: the target's point (keep-alive c=32) and the close point
# (IPv6 connection setup), to keep the run's length.
POINTS_B6=("32 1" "32 0")
# nginx's connections (each client connection, plus the listeners) and
# open files; wrk gets its own limit (wrk_cmd).
WORKER_CONNS=$((MANY * 2 + 64 > 4096 ? MANY * 2 + 64 : 4096))
NOFILE=$((WORKER_CONNS * 2 + 256))
DIED="" # pid of an nginx whose exit a point already reported
MASTER=on
((SINGLE)) && MASTER=off

# nginx_bench_conf FILE LISTEN
nginx_bench_conf() {
    local base
    base=$(basename "$1" .conf)
    cat >"$1" <<NGX
master_process $MASTER; daemon off; worker_processes 1;
worker_rlimit_nofile $NOFILE;
pid $T/$base.pid; error_log $T/$base.error.log error;
events { worker_connections $WORKER_CONNS; }
http {
    access_log off;
    client_body_temp_path $T/$base.body; proxy_temp_path $T/$base.proxy;
    fastcgi_temp_path $T/$base.fcgi; uwsgi_temp_path $T/$base.uwsgi;
    scgi_temp_path $T/$base.scgi;
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    server {
        listen $2;
        location / { default_type text/plain; return 200 "hello from the bench\\n"; }
    }
}
NGX
}

# The nginx processes: SPID is the master (or the only process); the
# worker is its child (server_ticks, bench/lib/common.sh, counts both).
worker_pid() {
    if [[ $MASTER == off ]]; then echo "$SPID"; else pgrep -P "$SPID" | head -1; fi
}
has_worker() { [[ -n $(worker_pid) ]]; }
worker_or_gave_up() { has_worker || grep -q "cannot be respawned" "$1"; }
lines() { if [[ -f $1 ]]; then wc -l <"$1"; else echo 0; fi; }
nolog() { grep -hv "stats:" "$@" 2>/dev/null; } # log lines without ACCEL_STATS

# nginx_start NAME MODE LISTEN [ENV...]: nginx pinned to CPU_SERVER; sets
# SNAME, SPID. Returns 1 with START_ERR set when it did not come up.
nginx_start() {
    local name=$1 mode=$2 listen=$3
    shift 3
    SNAME=$name
    nginx_bench_conf "$T/$name.conf" "$listen"
    bg_start "$name" "$mode" "$@" taskset -c "$CPU_SERVER" nginx -c "$T/$name.conf" -p "$T/" \
        -e "$T/$name.error.log"
    SPID=$(bg_pid "$name")
    # nginx writes its pid file after its listening sockets are open.
    if ! slowwait 30 test -s "$T/$name.pid"; then
        START_ERR="nginx did not start: $(nolog "$T/$name.err" "$T/$name.error.log" | tail -3 |
            tr '\n' ' ')"
        return 1
    fi
    slowwait 10 worker_or_gave_up "$T/$name.error.log"
    if ! has_worker; then
        START_ERR="nginx has no worker: $(nolog "$T/$name.error.log" | tail -2 | tr '\n' ' ')"
        return 1
    fi
    log "$name: master $SPID, worker $(worker_pid)"
}

# server_start SERIES: start (or restart) the nginx of SERIES and wait until
# it serves; sets SNAME, SPID, WPID, START_ERR (empty when it came up).
declare -A STARTS
server_start() {
    local series=$1 name
    STARTS[$series]=$((${STARTS[$series]:-0} + 1))
    name=$series-${STARTS[$series]}
    START_ERR=""
    MASTER=on
    ((SINGLE)) && MASTER=off
    case $series in
    kernel)
        nginx_start "$name" A "$AIP:80" &&
            { wait_tcp K "$AIP" 80 || START_ERR="kernel nginx does not accept on $AIP:80"; }
        ;;
    accel_a | accel_as)
        if [[ $series == accel_a ]]; then
            nginx_start "$name" AX "$AIP:80" ACCEL_STATS=2
        else
            nginx_start "$name" AX "$AIP:80" ACCEL_STATS=2 ACCEL_IP= ACCEL_IP6=
        fi &&
            { slowwait 20 K curl -sf -m 2 -o /dev/null "http://$AIP/" ||
                log "$name: no HTTP answer to curl yet; measuring anyway"; }
        ;;
    accel_b | accel_b6 | accel_bq)
        if [[ $series == accel_b ]]; then
            nginx_start "$name" MX "$MIP_SRV:80" ACCEL_STATS=2 "${MEMIF_SERVER_ENV[@]}"
        elif [[ $series == accel_bq ]]; then
            nginx_start "$name" MX "$MIP_SRV:80" ACCEL_STATS=2 ACCEL_STATS_LIVE=0 \
                "${MEMIF_SERVER_ENV[@]}"
        else
            nginx_start "$name" MX "[$MIP6_SRV]:80" ACCEL_STATS=2 "${MEMIF_SERVER_ENV[@]}" \
                "ACCEL_IP6=$MIP6_SRV/64"
        fi &&
            { slowwait 20 memif_listening "$MEMIF_SOCK" ||
                START_ERR="the memif server does not listen on $MEMIF_SOCK: $(nolog \
                    "$T/$name.err" | tail -2 | tr '\n' ' ')"; }
        ;;
    esac
    WPID=$(worker_pid)
    [[ ${STARTS[$series]} != 1 ]] || meta "nginx_conf_$series" "$T/$name.conf"
}

# server_stop: graceful (QUIT), so an accelerated nginx dumps ACCEL_STATS
# (to its stderr, which nginx points at its error log once it runs).
server_stop() {
    local t0=$SECONDS
    if alive "$SPID"; then
        # nginx's graceful exit may wait on connections whose peer is gone
        # (lingering close): more than bg_stop's 5 s.
        kill -QUIT "$SPID"
        busywait 20000 dead "$SPID" || log "$SNAME did not exit 20 s after SIGQUIT"
        ((SECONDS - t0 < 3)) || log "$SNAME took $((SECONDS - t0)) s to exit after SIGQUIT"
        bg_stop "$SNAME" QUIT || log "$SNAME exited with status $?"
    fi
    cat "$T/$SNAME.err" "$T/$SNAME.error.log" >"$T/$SNAME.stats" 2>/dev/null
    grep -h "stats: data path" "$T/$SNAME.stats" | sed "s/^/[$TEST_NAME] $SNAME: /"
    meta "stats/${SNAME%-*}/${SNAME##*-}" "$T/$SNAME.stats"
}

# kernel_says PID: the kernel's last line about PID (a segfault report).
kernel_says() {
    dmesg 2>/dev/null | grep "\[$1\]: " | tail -1 | sed 's/^\[[^]]*\] //' | cut -c1-200
}

# server_died: why the nginx process SPID is gone (exit status, segfault).
server_died() { echo "nginx $SPID $(exit_status "$SPID"); $(kernel_says "$SPID")"; }

# point_failed SERIES CONNS KA REASON: record a point that was not run.
point_failed() {
    "$PY" "$HERE/wrkparse.py" --series "$1" --conns "$2" --keepalive "$3" --failed "$4" \
        --round "$ROUND" \
        --log-prefix "[$TEST_NAME] " >>"$RAW"
}

# wrk_cmd CONNS KA: fill NSARGV with the wrk of the current series (CMODE,
# URL, CLIENT_ENV).
wrk_cmd() {
    local hdr=()
    (($2)) || hdr=(-H "Connection: close")
    ns_argv "$CMODE" "${CLIENT_ENV[@]}" prlimit --nofile=$(($1 + 1024)) \
        taskset -c "$CPU_CLIENT" wrk -t1 -c"$1" -d"${DUR}s" --latency "${hdr[@]}" "$URL"
}

# wrk_point SERIES CONNS KA [NOTE]: one point against the running server.
wrk_point() {
    local series=$1 conns=$2 ka=$3 note=${4:-} f=$T/wrk-$1-$2-$3-r$ROUND t0 t1 why="" errl
    local c2c0 c2c1
    errl=$(lines "$T/$SNAME.error.log")
    c2c_probe c2c0 # nginx is idle: between points an accelerated one sleeps too
    t0=$(server_ticks)
    wrk_cmd "$conns" "$ka"
    timed_client "$f.cpu" $((DUR + 10)) "$f.txt"
    t1=$(server_ticks)
    c2c_probe c2c1
    if ! alive "$SPID"; then
        why="during the point: $(server_died)"
        DIED=$SPID
    elif [[ $(worker_pid) != "$WPID" ]]; then
        why="the nginx worker $WPID exited during the point (new worker: $(worker_pid)); $(
            kernel_says "$WPID")"
        WPID=$(worker_pid)
    fi
    if (($(lines "$T/$SNAME.error.log") > errl)); then
        note="${note:+$note; }nginx error.log: $(tail -n +$((errl + 1)) "$T/$SNAME.error.log" |
            nolog | tail -3 | sed 's/^[0-9/]* [0-9:]* //' | paste -sd'|' | cut -c1-400)"
    fi
    "$PY" "$HERE/wrkparse.py" --series "$series" --conns "$conns" --keepalive "$ka" --wrk "$f.txt" \
        --round "$ROUND" \
        --client-cpu "$f.cpu" ${t0:+${t1:+--server-ticks $((t1 - t0))}} ${why:+--failed "$why"} \
        ${note:+--note "$note"} "${MACHINE_ARGS[@]}" ${C2C:+--c2c-ns "$c2c0,$c2c1"} \
        --log-prefix "[$TEST_NAME] " >>"$RAW"
}

# perf_point SERIES: a c=32 keep-alive run (not counted) with
# `perf record -g` on the nginx worker.
perf_point() {
    local series=$1 pp data=$T/perf-$1.data
    [[ -z $START_ERR && -n $WPID ]] && alive "$WPID" || return 0
    taskset -c "$CPU_CLIENT" perf record -g -o "$data" -p "$WPID" >"$T/perf-$series.log" 2>&1 &
    pp=$!
    sleep 0.5 # perf attaches to the worker
    wrk_cmd 32 1
    "$PY" "$CPURUN" "$T/perf-$series.cpu" $((DUR + 10)) "${NSARGV[@]}" \
        >"$T/perf-$series.wrk" 2>&1 </dev/null
    kill -INT "$pp"
    wait "$pp"
    {
        echo "by shared object:"
        perf report -i "$data" --no-children --stdio -g none --sort dso --percent-limit 1 \
            2>/dev/null | grep -v '^#' | grep -v '^$'
        echo
        echo "by symbol (top 40):"
        perf report -i "$data" --no-children --stdio -g none --sort dso,sym 2>/dev/null |
            grep -v '^#' | grep -v '^$' | sed 's/[[:space:]]*-[[:space:]]*-[[:space:]]*$//' |
            head -40
    } >"$T/perf-$series.txt"
    if grep -q '%' "$T/perf-$series.txt"; then
        meta "perf_$series" "$T/perf-$series.txt"
        meta "perf_wrk_$series" "$T/perf-$series.wrk"
        log "perf profile of $series (worker $WPID) in the report"
    else
        log "perf recorded nothing for $series: $(tail -2 "$T/perf-$series.log" | tr '\n' ' ')"
    fi
}

# run_series SERIES CLIENT_MODE URL [CLIENT_ENV...]: start the series'
# nginx, run every point, stop it. A server that exits is restarted for the
# next point (the point it died in is failed, the restart noted).
run_series() {
    local series=$1 p note points=("${POINTS[@]}")
    CMODE=$2
    URL=$3
    CLIENT_ENV=("${@:4}")
    [[ $series != accel_b6 && $series != accel_as && $series != accel_bq ]] ||
        points=("${POINTS_B6[@]}")
    server_start "$series"
    for p in "${points[@]}"; do
        note=""
        if [[ -z $START_ERR ]] && ! alive "$SPID"; then
            if [[ $DIED == "$SPID" ]]; then
                note="nginx restarted for this point (it exited in the previous one)"
            else
                note="after the previous point $(server_died); restarted for this point"
            fi
            server_stop
            log "$series: $note"
            server_start "$series"
        fi
        if [[ -n $START_ERR ]]; then
            point_failed "$series" ${p% *} ${p#* } "$START_ERR"
            continue
        fi
        wrk_point "$series" ${p% *} ${p#* } "$note"
        # Profile before the close point, which leaves TIME-WAIT state behind.
        if [[ $p == "32 1" && $series != kernel ]] && ((PERF && ROUND == 1)); then
            perf_point "$series"
        fi
    done
    server_stop
}

lab_up
log "points of $DUR s, $ROUNDS round(s); wrk on CPU $CPU_CLIENT, nginx (master_process" \
    "$MASTER) on CPU $CPU_SERVER"
meta_conditions
meta master_process "$MASTER"
meta rounds "$ROUNDS"
c2c_build

MEMIF_SOCK=$T/bench-memif.sock
MEMIF_SERVER_ENV=("ACCEL_VDEV=net_memif0,role=server,socket=$MEMIF_SOCK" "ACCEL_IP=$MIP_SRV/24")
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
    ((ROUNDS == 1)) || log "round $ROUND of $ROUNDS"
    # kernel series: the same veth, with the kernel IP for this series only
    with_kernel_ip run_series kernel K "http://$AIP/"

    # topology A: kernel wrk, nginx under accel-run (af_xdp on the same veth)
    [[ $TOPO == B ]] || run_series accel_a K "http://$AIP/"

    # topology A, the stack sharing the kernel's address on the veth
    [[ $TOPO == B ]] || with_kernel_ip run_series accel_as K "http://$AIP/"

    # topology B: wrk and nginx both under accel-run over memif in accel-m
    [[ $TOPO == A ]] || run_series accel_b MX "http://$MIP_SRV/" ACCEL_STATS=2 \
        "ACCEL_VDEV=net_memif0,role=client,socket=$MEMIF_SOCK" "ACCEL_IP=$MIP_CLI/24"

    # topology B with nothing published for accel-stat (both ends)
    [[ $TOPO == A ]] || run_series accel_bq MX "http://$MIP_SRV/" ACCEL_STATS=2 \
        ACCEL_STATS_LIVE=0 "ACCEL_VDEV=net_memif0,role=client,socket=$MEMIF_SOCK" \
        "ACCEL_IP=$MIP_CLI/24"

    # topology B over IPv6: the same two ends, wrk to nginx's IPv6 address
    [[ $TOPO == A ]] || run_series accel_b6 MX "http://[$MIP6_SRV]/" ACCEL_STATS=2 \
        "ACCEL_VDEV=net_memif0,role=client,socket=$MEMIF_SOCK" "ACCEL_IP=$MIP_CLI/24" \
        "ACCEL_IP6=$MIP6_CLI/64"
done

bench_report
check_points '{series} c={conns} keepalive={keepalive:d} round {round}'
cat "$BASE.md"
finish
