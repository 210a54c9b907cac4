#!/bin/bash
# HTTP benchmark: the same nginx (one process, `return 200` small body) on
# the kernel and under accel-run, in one run, same veth, same pinning.
#
#   topology A (always): wrk in netns accel-k pinned to CPU 0, nginx in
#     netns accel-a pinned to CPU 1. Kernel run: accel-a's veth gets the
#     kernel IP 10.200.0.2/24 for the run, removed before the accel run.
#     Points: keep-alive with 1, 32 and 256 connections, and
#     `Connection: close` with 32 connections.
#   topology B (--memif): both ends accelerated over memif in netns accel-m
#     (nginx and wrk under accel-run), compared with kernel nginx + wrk on
#     accel-m's loopback. Reported as failed, not fatal, if wrk does not
#     work under accel-run there.
#
# Per point: req/s, p50/p99 from `wrk --latency`, socket errors, and the
# server's CPU seconds per 100k requests from /proc/<pid>/stat. Writes
# <out>/http-<date>.json, .md and .png (kernel vs accel side by side) and
# the ratios accel/kernel.
#
# usage: bench/http/run.sh [--smoke] [--memif] [--duration S] [--out DIR]
#   --smoke  2 s per point (CI: checks the pipeline, asserts no figure)
# Exit: 0 when every file was written, 1 otherwise, 4 when not root.
HERE=$(dirname "$(readlink -f "$0")")
DUR=10
MEMIF=0
OUT=$HERE/../results
while [[ $# -gt 0 ]]; do
    case $1 in
    --smoke) DUR=2 ;;
    --memif) MEMIF=1 ;;
    --duration)
        DUR=$2
        shift
        ;;
    --out)
        OUT=$2
        shift
        ;;
    -h | --help)
        sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "run.sh: unknown argument $1" >&2
        exit 2
        ;;
    esac
    shift
done

. "$HERE/../../tests/lib/netns.sh"

mkdir -p "$OUT" || fail "cannot create $OUT"
OUT=$(readlink -f "$OUT")
STAMP=$(date +%Y%m%d-%H%M%S)
BASE=$OUT/http-$STAMP
RAW=$T/points.tsv
# mode conns keepalive rps p50 p99 requests errors cpu_ticks
: >"$RAW"
NCPU=$(nproc)
CPU_CLIENT=0
CPU_SERVER=$((NCPU > 1 ? 1 : 0))
CLIENT_ENV=() # NAME=value for an accelerated client (topology B)

nginx_bench_conf() { # FILE LISTEN
    cat >"$1" <<NGX
master_process off; daemon off; worker_processes 1;
pid $T/$(basename "$1" .conf).pid; error_log $T/$(basename "$1" .conf).error.log error;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    server {
        listen $2;
        location / { default_type text/plain; return 200 "hello from the bench\\n"; }
    }
}
NGX
}

# wrk_point MODE CONNS KEEPALIVE(1|0) SERVER_PID CLIENT_MODE URL: one point
# (CLIENT_MODE as in ns_argv; CLIENT_ENV goes to an accelerated client).
wrk_point() {
    local mode=$1 conns=$2 ka=$3 spid=$4 cmode=$5 url=$6 hdr=() t0 t1 f
    ((ka)) || hdr=(-H "Connection: close")
    f=$T/wrk-$mode-$conns-$ka.txt
    t0=$(cpu_ticks "$spid")
    ns_argv "$cmode" "${CLIENT_ENV[@]}" taskset -c "$CPU_CLIENT" wrk -t1 -c"$conns" -d"${DUR}s" --latency \
        "${hdr[@]}" "$url"
    timeout $((DUR + 60)) "${NSARGV[@]}" >"$f" 2>&1
    t1=$(cpu_ticks "$spid")
    if ! grep -q "Requests/sec" "$f"; then
        log "wrk failed for $mode c=$conns ka=$ka: $(tail -3 "$f" | tr '\n' ' ')"
        printf '%s\t%s\t%s\tnan\tnan\tnan\t0\tfailed\t0\n' "$mode" "$conns" "$ka" >>"$RAW"
        return 1
    fi
    "$PY" "$HERE/wrkparse.py" "$f" "$mode" "$conns" "$ka" $((t1 - t0)) >>"$RAW" ||
        fail "cannot parse $f"
    log "$(tail -1 "$RAW")"
    # A run in which no request completed did not work, whatever wrk says.
    [[ $(tail -1 "$RAW" | cut -f7) != 0 ]]
}

# run_series MODE SERVER_BG_NAME CLIENT_MODE IP
run_series() {
    local mode=$1 spid=$2 cmode=$3 ip=$4
    wrk_point "$mode" 1 1 "$spid" "$cmode" "http://$ip/"
    wrk_point "$mode" 32 1 "$spid" "$cmode" "http://$ip/"
    wrk_point "$mode" 256 1 "$spid" "$cmode" "http://$ip/"
    wrk_point "$mode" 32 0 "$spid" "$cmode" "http://$ip/"
}

lab_up
log "points of $DUR s; wrk on CPU $CPU_CLIENT, nginx on CPU $CPU_SERVER"

# --- topology A, kernel: same veth, kernel IP for the duration of the run
nginx_bench_conf "$T/kernel.conf" "$AIP:80"
A ip addr add "$AIP/24" dev "$VETH_A" || fail "cannot add the kernel IP to $VETH_A"
bg_start kernel A taskset -c "$CPU_SERVER" nginx -c "$T/kernel.conf" -p "$T" -e "$T/kernel.error.log"
wait_tcp K "$AIP" 80 || fail "kernel nginx did not start"
run_series kernel "$(bg_pid kernel)" K "$AIP"
bg_stop kernel QUIT
A ip addr del "$AIP/24" dev "$VETH_A" || fail "cannot remove the kernel IP from $VETH_A"
K ip neigh flush dev "$VETH_K"

# --- topology A, accelerated
nginx_bench_conf "$T/accel.conf" "$AIP:80"
bg_start accel AX taskset -c "$CPU_SERVER" nginx -c "$T/accel.conf" -p "$T" -e "$T/accel.error.log"
wait_tcp K "$AIP" 80 30 || fail "accelerated nginx did not start"
run_series accel "$(bg_pid accel)" K "$AIP"
alive "$(bg_pid accel)" || fail "accelerated nginx died during the run"
bg_stop accel QUIT

# --- topology B: both ends over memif in accel-m, vs kernel loopback there
MEMIF_NOTE=""
if ((MEMIF)); then
    sock=$T/bench-memif.sock
    nginx_bench_conf "$T/mkernel.conf" "127.0.0.1:80"
    bg_start mkernel M taskset -c "$CPU_SERVER" nginx -c "$T/mkernel.conf" -p "$T" -e "$T/mkernel.error.log"
    wait_tcp M 127.0.0.1 80 || fail "kernel nginx on accel-m loopback did not start"
    wrk_point kernel-loopback 32 1 "$(bg_pid mkernel)" M "http://127.0.0.1/"
    bg_stop mkernel QUIT
    nginx_bench_conf "$T/maccel.conf" "$MIP_SRV:80"
    bg_start maccel MX "ACCEL_VDEV=net_memif0,role=server,socket=$sock" "ACCEL_IP=$MIP_SRV/24" \
        taskset -c "$CPU_SERVER" nginx -c "$T/maccel.conf" -p "$T" -e "$T/maccel.error.log"
    slowwait 20 memif_listening "$sock" || log "memif server not listening on $sock"
    CLIENT_ENV=("ACCEL_VDEV=net_memif0,role=client,socket=$sock" "ACCEL_IP=$MIP_CLI/24")
    if wrk_point accel-memif 32 1 "$(bg_pid maccel)" \
        MX "http://$MIP_SRV/" 2>/dev/null; then
        MEMIF_NOTE="wrk under accel-run over memif works"
    else
        MEMIF_NOTE="wrk under accel-run over memif failed: $(tail -2 "$T/wrk-accel-memif-32-1.txt" | tr '\n' ' ')"
    fi
    bg_stop maccel QUIT
fi

"$PY" "$HERE/report.py" "$RAW" "$BASE" "$DUR" "$STAMP" "${MEMIF_NOTE:-topology B not run (--memif)}" \
    "${LAB_ENV[*]}" || fail "report.py failed"
while IFS=$'\t' read -r mode conns ka _ _ _ reqs errors _; do
    [[ $mode == accel-memif ]] && continue # reported in the note, not fatal
    if [[ $errors == failed || $reqs == 0 ]]; then
        check_fail "point $mode c=$conns keepalive=$ka: no request completed"
    fi
done <"$RAW"
for ext in json md png; do
    [[ -s $BASE.$ext ]] && pass "wrote $BASE.$ext" || check_fail "missing $BASE.$ext"
done
cat "$BASE.md"
finish
