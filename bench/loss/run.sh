#!/bin/bash
# Loss benchmark: how long a 100 MB HTTP transfer takes through an impaired
# path, the kernel's TCP against accel's, in both directions, in one run,
# over the same veth, with the same pinning and the same impairment
# (`accel-lab impair` in netns accel-k, both directions of the path).
#
#   sender direction: a stock nginx (`sendfile on`, one worker) in netns
#     accel-a serves the file to bench/loss/fetch.py in accel-k; kernel
#     series: nginx on the kernel (accel-a's veth holds 10.200.0.2/24 for
#     that transfer only); accel series: the same nginx under accel-run.
#   receiver direction: a kernel nginx in accel-k (10.200.0.1) serves the
#     file to fetch.py in accel-a, once on the kernel (the veth gets the
#     IP) and once under accel-run.
#
# Points (--points): loss 0, 0.1, 0.5, 1, 2 and 5 %; reordering 1 and 5 %
# without loss; 1 and 10 ms of delay with 0.5 % loss (each impairment in
# each direction). Per point and side: the transfer time (connect to the
# last byte) and goodput, the longest stall (the largest gap between two
# successive receives), the sha256 of what arrived (a point whose data
# differs fails), and the retransmissions: accel's from ACCEL_STATS=2, the
# kernel's from nstat in the sender's netns. nginx on CPU 1, the client on
# CPU 0; accel-impaird (delay and reorder points) on the CPU of the end
# that is the kernel in both series of a direction (the client's in the
# sender direction, the server's in the receiver direction), so the
# measured end has its CPU to itself. Every server is started for its
# transfer and stopped after it (an accelerated one dumps its counters at
# exit). The kernel runs --kernel-cc (default cubic, Linux's upstream
# default; this machine's may differ) in both lab namespaces, restored at
# the end; accel runs the same algorithm (ACCEL_TCP_CC overrides).
# Writes <out>/loss-<date>.json, .md (conditions, tables, the issue's
# targets met or missed) and .png.
#
# usage: bench/loss/run.sh [--smoke] [--rounds N] [--size MB] [--points LIST]
#                          [--direction sender|receiver|both] [--out DIR]
#                          [--kernel-cc NAME] [--timeout S]
#   --smoke           5 MB, loss 0 and 1 %, one round (CI: every point,
#                     accelerated ones included, must complete intact)
#   --rounds N        every point N times, kernel and accel alternating
#                     (odd rounds kernel first, even rounds accel first);
#                     the tables show each point's median round and every
#                     round's ratio, the targets the medians of the ratios
#   --size MB         the file's size (default 100)
#   --points LIST     comma-separated points, each KIND:VALUE[+KIND:VALUE]
#                     with KIND loss, reorder, delay (MS or MS:JITTER), dup,
#                     corrupt or rate (Mbit/s), as accel-lab impair takes
#                     them (default: loss:0,loss:0.1,loss:0.5,loss:1,loss:2,
#                     loss:5,reorder:1,reorder:5,delay:1+loss:0.5,
#                     delay:10+loss:0.5)
#   --direction D     sender, receiver or both (default)
#   --kernel-cc NAME  the congestion control of both (default cubic; bbr
#                     is this machine's default); ACCEL_TCP_CC set in the
#                     environment gives accel another
#   --timeout S       limit of one transfer (default 600; --smoke 20): a
#                     transfer that has not ended fails its point
# Exit: 0 when every file was written and every point worked (with --smoke
# too), 1 otherwise, 2 on bad arguments, 4 when not root. ACCEL_LAB_TAG
# selects a private lab; ACCEL_LAB_IMPAIR_CPU, when set, pins accel-impaird
# there for every point.

# Unset variables are errors; not pipefail: the shared helpers
# (tests/lib/netns.sh) end pipes with grep -q, whose early exit can fail the
# writer with SIGPIPE.
set -u
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/../lib/common.sh"
ROUNDS=1
SIZE_MB=100
POINTS_ARG=loss:0,loss:0.1,loss:0.5,loss:1,loss:2,loss:5,reorder:1,reorder:5,delay:1+loss:0.5,delay:10+loss:0.5
DIRS=both
KCC=cubic
XFER_LIMIT=""
while [[ $# -gt 0 ]]; do
    OPT_SHIFT=2
    case $1 in
    --rounds)
        ROUNDS=${2-}
        [[ $ROUNDS =~ ^[1-9][0-9]?$ ]] || { echo "--rounds: a count from 1 to 99" >&2; exit 2; }
        ;;
    --size)
        SIZE_MB=${2-}
        [[ $SIZE_MB =~ ^[1-9][0-9]{0,4}$ ]] || { echo "--size: megabytes, 1 to 99999" >&2; exit 2; }
        ;;
    --points) POINTS_ARG=${2-} ;;
    --direction)
        DIRS=${2-}
        [[ $DIRS =~ ^(sender|receiver|both)$ ]] ||
            { echo "--direction: sender, receiver or both" >&2; exit 2; }
        ;;
    --kernel-cc)
        KCC=${2-}
        [[ $KCC =~ ^[a-z0-9_]+$ ]] || { echo "--kernel-cc: a congestion control name" >&2; exit 2; }
        ;;
    --timeout)
        XFER_LIMIT=${2-}
        [[ $XFER_LIMIT =~ ^[1-9][0-9]*$ ]] || { echo "--timeout: whole seconds" >&2; exit 2; }
        ;;
    --duration | --topology)
        echo "run.sh: $1 is not an option of the loss benchmark (see --help)" >&2
        exit 2
        ;;
    *) bench_opt "$@" ;;
    esac
    shift "$OPT_SHIFT"
done
if ((SMOKE)); then
    SIZE_MB=5
    POINTS_ARG=loss:0,loss:1
    ROUNDS=1
fi
: "${XFER_LIMIT:=$((SMOKE ? 20 : 600))}"

# impair_args SPEC: the accel-lab impair arguments of a point (KIND:VALUE
# joined by +), in IMPAIR_ARGS; returns 1 on a malformed SPEC.
impair_args() {
    local part kind val
    IMPAIR_ARGS=()
    local IFS=+
    for part in $1; do
        kind=${part%%:*}
        val=${part#*:}
        [[ $part == *:* && $kind =~ ^(loss|reorder|delay|dup|corrupt|rate)$ && -n $val ]] ||
            return 1
        IMPAIR_ARGS+=("--$kind" "$val")
    done
    ((${#IMPAIR_ARGS[@]})) || return 1
}
IFS=, read -ra POINTS <<<"$POINTS_ARG"
for p in "${POINTS[@]}"; do
    impair_args "$p" || { echo "--points: '$p' is not KIND:VALUE[+KIND:VALUE...]" >&2; exit 2; }
done

. "$HERE/../../tests/lib/netns.sh"

bench_files loss
SIZE=$((SIZE_MB * 1000000))
PORT=80
FETCH=$LIBDIR/fetch.py # tests/lib/fetch.py
ACC_CC=${ACCEL_TCP_CC:-$KCC}

# impair ARGS...: accel-lab impair of this build tree's daemon (ctest sets
# IT_IMPAIRD; accel-lab also finds ../build/tools/accel-impaird).
impair() { ACCEL_LAB_IMPAIRD=${IT_IMPAIRD:-} "$ACCEL_LAB" impair "$@"; }

# --- the kernel's congestion control ----------------------------------------
# A netns other than the initial one may only pick an algorithm listed in
# the initial netns's tcp_allowed_congestion_control: add KCC there when it
# is missing, then set it in both lab namespaces before any kernel socket of
# the benchmark exists (a socket takes the default when it is created).
# cc_restore, from the EXIT trap too, puts back the namespaces' defaults and
# takes out of the list only what cc_setup added (another program may have
# changed the list meanwhile; a namespace keeps its default when the list
# changes later).
CC_ADDED=0
CC_SAVED=() # "NETNS ALGORITHM": each namespace's default before the run
cc_setup() {
    local allowed ns
    grep -qw -- "$KCC" /proc/sys/net/ipv4/tcp_available_congestion_control ||
        modprobe "tcp_$KCC" 2>/dev/null
    grep -qw -- "$KCC" /proc/sys/net/ipv4/tcp_available_congestion_control ||
        fail "--kernel-cc $KCC: not available ($(cat /proc/sys/net/ipv4/tcp_available_congestion_control))"
    allowed=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
    if ! grep -qw -- "$KCC" <<<"$allowed"; then
        sysctl -qw "net.ipv4.tcp_allowed_congestion_control=$allowed $KCC" ||
            fail "cannot add $KCC to net.ipv4.tcp_allowed_congestion_control"
        CC_ADDED=1
    fi
    for ns in "$NS_A" "$NS_K"; do
        CC_SAVED+=("$ns $(ip netns exec "$ns" sysctl -n net.ipv4.tcp_congestion_control)")
        ip netns exec "$ns" sysctl -qw "net.ipv4.tcp_congestion_control=$KCC" ||
            fail "cannot set net.ipv4.tcp_congestion_control=$KCC in $ns"
    done
    log "kernel congestion control: $KCC in $NS_A and $NS_K (defaults before: ${CC_SAVED[*]})$(
        ((CC_ADDED)) && echo "; $KCC added to the allowed list ($allowed)")"
}
cc_restore() {
    local e now
    for e in "${CC_SAVED[@]}"; do
        ip netns exec "${e% *}" sysctl -qw "net.ipv4.tcp_congestion_control=${e#* }" 2>/dev/null
    done
    CC_SAVED=()
    if ((CC_ADDED)); then
        now=$(sysctl -n net.ipv4.tcp_allowed_congestion_control | tr ' ' '\n' | grep -vx -- "$KCC" |
            paste -sd' ')
        sysctl -qw "net.ipv4.tcp_allowed_congestion_control=$now"
        CC_ADDED=0
    fi
}
# At exit, interrupted or not: no impairment, the kernel's settings back,
# and no kernel IP left on accel-a's veth (a later lab_up refuses it).
trap 'rc=$?; impair --off >/dev/null 2>&1; cc_restore
    [[ -z ${VETH_A:-} ]] || A ip addr del "$AIP/24" dev "$VETH_A" 2>/dev/null
    (exit $rc); cleanup' EXIT

# --- servers ------------------------------------------------------------------

# nginx_loss_conf FILE LISTEN: stock nginx, one worker, sendfile, the file.
nginx_loss_conf() {
    local base
    base=$(basename "$1" .conf)
    cat >"$1" <<NGX
master_process on; daemon off; worker_processes 1;
pid $T/$base.pid; error_log $T/$base.error.log error;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    client_body_temp_path $T/$base.body; proxy_temp_path $T/$base.proxy;
    fastcgi_temp_path $T/$base.fcgi; uwsgi_temp_path $T/$base.uwsgi;
    scgi_temp_path $T/$base.scgi;
    server {
        listen $2;
        root $T/www;
    }
}
NGX
}

# nginx_start NAME MODE LISTEN NSMODE IP [ENV...]: nginx pinned to
# CPU_SERVER, reachable from NSMODE; sets SNAME, SPID; returns 1 with
# START_ERR when it did not come up.
nginx_start() {
    local name=$1 mode=$2 listen=$3 from=$4 ip=$5
    shift 5
    SNAME=$name
    START_ERR=""
    nginx_loss_conf "$T/$name.conf" "$listen"
    bg_start "$name" "$mode" "$@" taskset -c "$CPU_SERVER" nginx -c "$T/$name.conf" -p "$T/" \
        -e "$T/$name.error.log"
    SPID=$(bg_pid "$name")
    if ! slowwait 30 test -s "$T/$name.pid" || ! wait_tcp "$from" "$ip" "$PORT" 30; then
        START_ERR="nginx ($name) did not start: $(grep -hv stats: "$T/$name.err" \
            "$T/$name.error.log" 2>/dev/null | tail -3 | tr '\n' ' ')"
        return 1
    fi
}

# nginx_stop: graceful (QUIT), so an accelerated nginx dumps ACCEL_STATS
# (to its stderr, which nginx points at its error log once it runs); both
# files end up in $T/$SNAME.stats.
nginx_stop() {
    if alive "$SPID"; then
        kill -QUIT "$SPID"
        busywait 20000 dead "$SPID" || log "$SNAME did not exit 20 s after SIGQUIT"
        bg_stop "$SNAME" QUIT || log "$SNAME exited with status $?"
    fi
    cat "$T/$SNAME.err" "$T/$SNAME.error.log" >"$T/$SNAME.stats" 2>/dev/null
}

# --- one transfer -------------------------------------------------------------

# snap F: nstat of both namespaces, the impairment's counters and
# accel-impaird's CPU ticks (when it runs), to F.nk, F.na, F.imp, F.dt.
snap() {
    local dpid
    K nstat -asz --json >"$1.nk" 2>/dev/null
    A nstat -asz --json >"$1.na" 2>/dev/null
    impair --show >"$1.imp" 2>/dev/null
    dpid=$(sed -n 's/^daemon_pid=//p' "$1.imp")
    : >"$1.dt"
    [[ -z $dpid ]] || cpu_ticks "$dpid" >"$1.dt"
}

# transfer DIRECTION SERIES PI CMODE URL [CLIENT_ENV...]: fetch.py in
# CMODE pinned to CPU_CLIENT gets URL; the figures of the transfer go to
# $RAW (point POINTS[PI], round ROUND). The server (SPID) is up.
transfer() {
    local dir=$1 series=$2 pi=$3 cmode=$4 url=$5 f t0 t1 d0 d1
    shift 5
    f=$T/$dir-$series-p$pi-r$ROUND
    snap "$f.0"
    t0=$(server_ticks)
    ns_argv "$cmode" "$@" taskset -c "$CPU_CLIENT" "$PY" "$FETCH" --timeout "$XFER_LIMIT" "$url"
    timed_client "$f.cpu" $((XFER_LIMIT + 10)) "$f.out"
    t1=$(server_ticks)
    snap "$f.1"
    d0=$(cat "$f.0.dt")
    d1=$(cat "$f.1.dt")
    XFER_ARGS=(--fetch "$f.out" --client-cpu "$f.cpu" --nstat-k "$f.0.nk,$f.1.nk"
        --nstat-a "$f.0.na,$f.1.na" --impair "$f.0.imp,$f.1.imp"
        ${t0:+${t1:+--server-ticks $((t1 - t0))}} ${d0:+${d1:+--impaird-ticks $((d1 - d0))}}
        "${MACHINE_ARGS[@]}")
}

# record DIRECTION SERIES PI [PARSER_ARGS...]: one JSON line in $RAW.
record() {
    "$PY" "$HERE/lossparse.py" --direction "$1" --series "$2" --point "${POINTS[$3]}" \
        --round "$ROUND" --size "$SIZE" --want-sha "$WANT" --log-prefix "[$TEST_NAME] " \
        "${@:4}" >>"$RAW"
}

# send_one SERIES PI: the sender direction: nginx in accel-a (kernel, or
# under accel-run) serves the file to fetch.py in accel-k.
send_one() {
    local series=$1 pi=$2 mode=A env=()
    XFER_ARGS=()
    [[ $series == accel ]] && mode=AX env=(ACCEL_STATS=2 "ACCEL_TCP_CC=$ACC_CC")
    if nginx_start "send-$series-p$pi-r$ROUND" "$mode" "$AIP:$PORT" K "$AIP" "${env[@]}"; then
        transfer sender "$series" "$pi" K "http://$AIP/data.bin"
        alive "$SPID" || START_ERR="nginx $(exit_status "$SPID") during the transfer"
    fi
    nginx_stop
    record sender "$series" "$pi" "${XFER_ARGS[@]}" --server-log "$T/$SNAME.stats" \
        ${START_ERR:+--failed "$START_ERR"}
}

# recv_one SERIES PI: the receiver direction: fetch.py in accel-a (kernel,
# or under accel-run) gets the file from the kernel nginx in accel-k.
recv_one() {
    local series=$1 pi=$2 mode=A env=()
    [[ $series == accel ]] && mode=AX env=(ACCEL_STATS=2 "ACCEL_TCP_CC=$ACC_CC")
    if ! alive "$KSPID"; then
        record receiver "$series" "$pi" --failed "the kernel nginx in $NS_K is gone"
        return
    fi
    SPID=$KSPID
    transfer receiver "$series" "$pi" "$mode" "http://$KIP/data.bin" "${env[@]}"
    record receiver "$series" "$pi" "${XFER_ARGS[@]}"
}

# point PI: apply the point's impairment (accel-impaird on IMPAIR_CPU) and
# run both series, in the round's order, with CMD (send_one or recv_one).
point() {
    local pi=$1 cmd=$2 series
    impair_args "${POINTS[$pi]}"
    ACCEL_LAB_IMPAIR_CPU=$IMPAIR_CPU impair "${IMPAIR_ARGS[@]}" --seed $((ROUND * 1000 + pi)) \
        >"$T/impair.out" 2>&1 || fail "accel-lab impair ${IMPAIR_ARGS[*]}: $(cat "$T/impair.out")"
    for series in "${ORDER[@]}"; do
        if [[ $series == kernel ]]; then
            with_kernel_ip "$cmd" kernel "$pi"
        else
            "$cmd" accel "$pi"
        fi
    done
}

# --- the run ------------------------------------------------------------------

lab_up
cc_setup
mkdir -p "$T/www"
mkfile "$T/www/data.bin" "$SIZE"
chmod 644 "$T/www/data.bin"
WANT=$(sha "$T/www/data.bin")
log "$SIZE_MB MB, $ROUNDS round(s), points ${POINTS[*]}; client on CPU $CPU_CLIENT, nginx on" \
    "CPU $CPU_SERVER; kernel $KCC, accel $ACC_CC"

meta stamp "$STAMP"
meta smoke "$SMOKE"
meta cpu_client "$CPU_CLIENT"
meta cpu_server "$CPU_SERVER"
meta accel_env "${LAB_ENV[*]}"
meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
meta rounds "$ROUNDS"
meta size "$SIZE"
meta points "$POINTS_ARG"
meta directions "$DIRS"
meta timeout_s "$XFER_LIMIT"
meta kernel_cc "$KCC"
meta_commit
meta kernel_cc_machine_default "$(sysctl -n net.ipv4.tcp_congestion_control)"
meta accel_cc "$ACC_CC"
meta impair_cpu_fixed "${ACCEL_LAB_IMPAIR_CPU:-}"
for k in tcp_sack tcp_dsack tcp_timestamps tcp_recovery tcp_early_retrans tcp_frto \
    tcp_reordering tcp_rmem tcp_wmem tcp_congestion_control; do
    meta "sysctl_$k" "$(A sysctl -n "net.ipv4.$k" | tr '\t' ' ')"
done
nginx_loss_conf "$T/nginx-sample.conf" "$AIP:$PORT"
meta nginx_conf "$T/nginx-sample.conf"

if [[ $DIRS != sender ]]; then
    # The receiver direction's server: one kernel nginx in accel-k.
    nginx_start kserver K "$KIP:$PORT" K "$KIP" || fail "$START_ERR"
    KSPID=$SPID
    KSNAME=$SNAME
fi
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
    ((ROUNDS == 1)) || log "round $ROUND of $ROUNDS"
    ORDER=(kernel accel)
    ((ROUND % 2)) || ORDER=(accel kernel)
    for pi in "${!POINTS[@]}"; do
        impair_args "${POINTS[$pi]}"
        log "point ${POINTS[$pi]}: accel-lab impair ${IMPAIR_ARGS[*]}"
        if [[ $DIRS != receiver ]]; then
            IMPAIR_CPU=${ACCEL_LAB_IMPAIR_CPU:-$CPU_CLIENT}
            point "$pi" send_one
        fi
        if [[ $DIRS != sender ]]; then
            IMPAIR_CPU=${ACCEL_LAB_IMPAIR_CPU:-$CPU_SERVER}
            point "$pi" recv_one
        fi
    done
done
impair --off >/dev/null 2>&1
if [[ -n ${KSPID:-} ]]; then
    SPID=$KSPID
    SNAME=$KSNAME
    nginx_stop
fi

bench_report
check_points '{direction} {series} {point} round {round}'
cat "$BASE.md"
finish
