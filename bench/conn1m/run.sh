#!/bin/bash
# A million idle keep-alive connections on one nginx worker (issue 24):
# how many does it hold, at what setup rate, does every one still answer
# after a hold, what does an idle connection cost in memory, and how long
# do they take to close? Stock nginx (one process, `master_process off`,
# CPU 1, worker_connections above N, keep-alive for an hour and a million
# requests, `return 200 "ok"`, stub_status) in netns accel-a, once on the
# kernel (accel-a's veth holds 10.200.0.2 for that series) and once under
# accel-run (af_xdp on the veth). In netns accel-k, conn1m.c (CPU 0) opens
# N connections from S source addresses (10.200.0.10 on, added to
# accel-k's veth for the run; each source gives the kernel ~64k ports),
# at most --inflight connecting at a time, one GET on each; holds them
# idle --hold seconds while the memory is measured; sends a second GET on
# every one; closes them all and waits until nginx's stub_status shows
# none left.
#
# nginx's CPU while the connections are idle: its ticks (all its threads)
# over the hold, after the memory figures are taken.
#
# Memory per series, across the N idle connections (before the client
# starts -> during the hold): nginx's RSS (accel: nginx + libaccel + the
# stack), the kernel's slab (/proc/meminfo Slab and SUnreclaim, and the
# /proc/slabinfo caches that grew) and `TCP: mem` (/proc/net/sockstat,
# pages). The kernel's figures are machine-wide and the client's sockets
# live in the same kernel: the kernel series counts both ends, the accel
# series the client's end only (and whatever the accelerated server keeps
# in the kernel: its fd count is recorded); the report gives the server
# end's kernel cost as the difference. Other work on the machine adds
# noise to the slab figures (recorded: the load average).
#
# Writes <out>/conn1m-<date>.json, .md and .png.
#
# usage: bench/conn1m/run.sh [--smoke] [--conns N] [--sources S] [--hold S]
#                            [--inflight N] [--out DIR]
#   --smoke       CI: 10000 connections, 2 sources, a 2 s hold (unless
#                 given); every connection must answer its second request
#   --conns N     connections (default 1000000; 1 to 5400000)
#   --sources S   source addresses (default ceil(N / 50000); 1 to 90, at
#                 most 60000 connections each)
#   --hold S      seconds the connections stay idle (default 30)
#   --inflight N  connections in progress at a time (default 2000)
# Exit: 0 when the files were written and every connection of both series
# answered its second request, 1 otherwise, 2 on bad arguments, 4 when not
# root.
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/../lib/common.sh"
NCONN=""
NSRC=""
HOLD=""
INFLIGHT=2000
while [[ $# -gt 0 ]]; do
    OPT_SHIFT=2
    case $1 in
    --conns) NCONN=${2-} ;;
    --sources) NSRC=${2-} ;;
    --hold) HOLD=${2-} ;;
    --inflight) INFLIGHT=${2-} ;;
    *) bench_opt "$@" ;;
    esac
    shift "$OPT_SHIFT"
done
if ((SMOKE)); then
    NCONN=${NCONN:-10000}
    NSRC=${NSRC:-2}
    HOLD=${HOLD:-2}
fi
NCONN=${NCONN:-1000000}
HOLD=${HOLD:-30}
[[ $NCONN =~ ^[1-9][0-9]{0,6}$ ]] && NSRC=${NSRC:-$(((NCONN + 49999) / 50000))}
if [[ ! $NCONN =~ ^[1-9][0-9]{0,6}$ || ! $NSRC =~ ^[1-9][0-9]?$ || ! $HOLD =~ ^[0-9]{1,5}$ ||
    ! $INFLIGHT =~ ^[1-9][0-9]{0,5}$ ]] || ((NSRC > 90 || NCONN > NSRC * 60000)); then
    echo "run.sh: --conns takes 1 to 5400000, --sources 1 to 90 (at most 60000" \
        "connections each), --hold seconds, --inflight 1 to 999999" >&2
    exit 2
fi
DUR=$HOLD

. "$HERE/../../tests/lib/netns.sh"

bench_files conn1m
TOPO=A
SRC_FIRST=10.200.0.10
SRC_LAST=10.200.0.$((10 + NSRC - 1))

# The client: the build tree's (CMake target conn1m), or compiled here.
bench_tool CONN1M conn1m

# --- limits, sysctls and the source addresses (all restored at the end) ---

# fds of one process: nginx's N connections, plus its listener, logs,
# epoll and accel's own (DPDK, eventfds; run.sh records the count), or the
# client's N.
NOFILE=$((NCONN + 512))
SYSCTL_RESTORE=()
# set_sysctl NS KEY VALUE: NS is K, A or "" (global); the old value is
# restored by env_down.
set_sysctl() {
    local ns=$1 key=$2 val=$3 old
    old=$($ns sysctl -n "$key") || fail "cannot read sysctl $key"
    [[ $old == "$val" ]] && return 0
    SYSCTL_RESTORE+=("$ns|$key|$old")
    $ns sysctl -qw "$key=$val" || fail "cannot set sysctl $key=$val"
}

# Memory: measured here, a held connection costs about 9.5 kB on either
# series (kernel: both ends' sockets and nginx; accel: the client's socket,
# nginx, libaccel and the stack); 12 kB each leaves a margin.
NEED_KB=$((NCONN * 12))

ENV_UP=0
env_up() {
    local i fmax avail
    avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    ((avail >= NEED_KB)) ||
        fail "$NCONN connections need about $((NEED_KB / 1024)) MB; $((avail / 1024)) MB available"
    ENV_UP=1
    (($(sysctl -n fs.nr_open) >= NOFILE)) || set_sysctl "" fs.nr_open "$NOFILE"
    fmax=$(sysctl -n fs.file-max)
    ((fmax >= 2 * NCONN + 1000000)) || set_sysctl "" fs.file-max $((2 * NCONN + 1000000))
    set_sysctl K net.ipv4.ip_local_port_range "1024	65535"
    if (($(ulimit -Hn) < NOFILE)) && ! ulimit -Hn "$NOFILE" 2>/dev/null; then
        fail "$NCONN connections need $NOFILE fds in one process (nginx's, the client's)" \
            "and the hard RLIMIT_NOFILE is $(ulimit -Hn), which this process may not raise" \
            "(no CAP_SYS_RESOURCE: a container's limit); at most" \
            "$(($(ulimit -Hn) - 512)) connections here"
    fi
    ulimit -Sn "$(ulimit -Hn)" || fail "cannot raise RLIMIT_NOFILE's soft limit"
    for ((i = 10; i < 10 + NSRC; i++)); do
        K ip addr add "10.200.0.$i/32" dev "$VETH_K" || fail "cannot add 10.200.0.$i to $VETH_K"
    done
}

env_down() {
    local i e ns key old
    ((ENV_UP)) || return 0
    ENV_UP=0
    for ((i = 10; i < 10 + NSRC; i++)); do
        K ip addr del "10.200.0.$i/32" dev "$VETH_K" 2>/dev/null
    done
    for e in "${SYSCTL_RESTORE[@]}"; do
        IFS='|' read -r ns key old <<<"$e"
        $ns sysctl -qw "$key=$old" || log "warning: cannot restore sysctl $key=$old"
    done
}
# netns.sh's cleanup takes the exit status from $?: keep it. env_down may
# run before cleanup stops the lab's processes: a lower fs.nr_open or
# file-max does not touch the files already open.
trap 'rc=$?; env_down; (exit $rc); cleanup' EXIT

# --- one series ----------------------------------------------------------

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# snap FILE: the machine's memory figures now (point.py reads them).
snap() {
    {
        echo "## meminfo"
        cat /proc/meminfo
        echo "## slabinfo"
        cat /proc/slabinfo
        echo "## sockstat_k"
        K cat /proc/net/sockstat
        echo "## sockstat_a"
        A cat /proc/net/sockstat
        echo "## conntrack"
        for ns in K A; do
            echo "$ns $($ns cat /proc/sys/net/netfilter/nf_conntrack_count 2>/dev/null || echo -)"
        done
    } >"$1" 2>&1
}

# nginx_conn1m_conf FILE: one process, connections above N that stay: with
# fewer than 1/16 of worker_connections free, nginx closes idle keep-alive
# connections (ngx_drain_connections), so N + N/8 + 1024. Its RLIMIT_NOFILE
# is run.sh's: worker_rlimit_nofile applies to worker processes only, not
# to `master_process off`.
nginx_conn1m_conf() {
    local base
    base=$(basename "$1" .conf)
    cat >"$1" <<NGX
master_process off; daemon off; worker_processes 1;
pid $T/$base.pid; error_log $T/$base.error.log warn;
events { worker_connections $((NCONN + NCONN / 8 + 1024)); }
http {
    access_log off;
    client_body_temp_path $T/$base.body; proxy_temp_path $T/$base.proxy;
    fastcgi_temp_path $T/$base.fcgi; uwsgi_temp_path $T/$base.uwsgi;
    scgi_temp_path $T/$base.scgi;
    keepalive_timeout 3600s;
    keepalive_requests 1000000;
    server {
        listen $AIP:80 backlog=4096;
        location = /ok { default_type text/plain; return 200 "ok"; }
        location = /status { stub_status; }
    }
}
NGX
}

# run_series SERIES MODE: nginx of SERIES, the client's run, nginx stopped;
# one point in $RAW.
run_series() {
    local series=$1 mode=$2 f=$T/$1 env=() why="" cpid r0 r1 r2 fds="" limit idle=()
    [[ $mode == AX ]] && env=(ACCEL_STATS=2)
    nginx_conn1m_conf "$f.conf"
    bg_start "$series" "$mode" "${env[@]}" taskset -c "$CPU_SERVER" nginx -c "$f.conf" \
        -p "$T/" -e "$f.error.log"
    SPID=$(bg_pid "$series")
    slowwait 30 K curl -sf -m 2 -o /dev/null "http://$AIP/ok" ||
        fail "$series: nginx does not answer on http://$AIP/ok"
    [[ $mode == A ]] || slowwait 10 test -e "/dev/shm/accel-stat-$SPID" ||
        fail "$series: nginx has no live state region"
    r0=$(rss_kb "$SPID")
    snap "$f.m0"
    rm -f "$f.go"
    bg_start "client-$series" K taskset -c "$CPU_CLIENT" "$CONN1M" "$AIP:80" "$SRC_FIRST" \
        "$NSRC" -n "$NCONN" -f "$INFLIGHT" -H "$HOLD" -g "$f.go"
    cpid=$(bg_pid "client-$series")
    # Setup at 1000 connections/s at the least (kernel: tens of thousands).
    limit=$((NCONN / 1000 + 60))
    if wait_line "$T/client-$series.err" "^conn1m: holding" "$limit"; then
        r1=$(rss_kb "$SPID")
        snap "$f.m1"
        fds=$(find "/proc/$SPID/fd" -mindepth 1 2>/dev/null | wc -l)
        log "$series: $(tail -1 "$T/client-$series.err"); nginx RSS $r0 -> $r1 kB, $fds fds"
        # nginx's CPU while the connections are idle: the hold's own time.
        idle=("$(cpu_ticks "$SPID")" "$(date +%s%3N)")
        sleep "$HOLD"
        idle=(--idle-cpu $(($(cpu_ticks "$SPID") - idle[0])) $(($(date +%s%3N) - idle[1])))
    else
        why="the client did not finish its setup in $limit s"
    fi
    touch "$f.go"
    # The second requests and the close: as long as the setup, plus the
    # client's own close limit.
    slowwait $((limit + 330)) dead "$cpid" || why="${why:+$why; }the client did not end"
    bg_stop "client-$series" KILL
    alive "$SPID" || why="${why:+$why; }nginx $SPID $(exit_status "$SPID")"
    r2=$(rss_kb "$SPID")
    kill -QUIT "$SPID"
    busywait 60000 dead "$SPID" || log "$series: nginx did not exit 60 s after SIGQUIT"
    bg_stop "$series" QUIT
    cat "$T/$series.err" "$f.error.log" >"$f.stats" 2>/dev/null
    meta "stats/$series" "$f.stats"
    "$PY" "$HERE/point.py" --series "$series" --client "$T/client-$series.out" \
        --client-err "$T/client-$series.err" --rss "$r0" "${r1:-}" "${r2:-}" \
        --mem "$f.m0" "$f.m1" --server-fds "$fds" --server-log "$f.stats" "${idle[@]}" \
        ${why:+--failed "$why"} >>"$RAW" || fail "point.py failed"
}

lab_up
meta_conditions
meta conns "$NCONN"
meta sources "$SRC_FIRST-$SRC_LAST"
meta nsources "$NSRC"
meta hold_s "$HOLD"
meta inflight "$INFLIGHT"
meta conn1m "$CONN1M"
meta mem_available_kb "$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)"
meta kernel_somaxconn "$(A sysctl -n net.core.somaxconn)"
meta kernel_tw_buckets_k "$(K sysctl -n net.ipv4.tcp_max_tw_buckets)"
env_up
meta nofile "$(ulimit -Sn)"
meta port_range_k "$(K sysctl -n net.ipv4.ip_local_port_range | tr '\t' ' ')"
log "$NCONN connections from $SRC_FIRST-$SRC_LAST ($INFLIGHT in flight), hold $HOLD s;" \
    "conn1m on CPU $CPU_CLIENT, nginx on CPU $CPU_SERVER"
with_kernel_ip run_series kernel A
run_series accel AX
env_down

bench_report
check "$BASE.json parses and has both series" "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["points"]) == 2, len(d["points"])' "$BASE.json"
check_points '{series} {conns} connections'
cat "$BASE.md"
finish
