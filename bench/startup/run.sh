#!/bin/bash
# Start-up benchmark: how long a fresh process takes from its first socket
# call to a connected TCP socket (and to a byte echoed back), on the kernel
# and under accel-run, in one run. Each run is a new process
# (bench/startup/firstconn.c, `connect`), pinned to CPU 0, connecting to a
# kernel echo server (`firstconn serve`) in netns accel-k on CPU 1.
#
#   kernel: the client in netns accel-a on the kernel; accel-a's veth holds
#     the kernel IP 10.200.0.2/24 for this series only.
#   accel_cold: the client under accel-run in accel-a (the lab's
#     environment, af_xdp on the veth), alone on the interface, with no XDP
#     program attached before each run (`ip link set dev veth-a xdp off`):
#     the first accelerated process after the interface came up, which
#     loads and attaches accel's program. Its info log line "start-up took
#     T ms (eal E, port P [program, probe, pool, queues, start], stack S,
#     other O)" gives where the time goes.
#   accel_prepared: the same, with the program removed and then attached
#     again by `accel-run --prepare` before each run (not timed): the first
#     process after the interface came up where the program is attached
#     at boot or in the service's ExecStartPre (tools/prepare.c).
#   accel: the same, the program left attached by the run before (what
#     every later process finds: runtime/xdpprog.c, ACCEL_XDP_KEEP=1).
#   accel_join: the same, while another accelerated process (an idle
#     `firstconn serve` under accel-run) drives the interface: the client
#     joins its port instead of bringing one up (runtime/share_join.c).
#
# Per run: socket_us, connect_us (socket + connect: ready for traffic),
# reply_us, main_us (process start to main: exec and library loading) and
# wall_ms (the whole process, as the shell sees it). The report gives
# p50/p90/max per series, the accel/kernel ratios, the breakdown, and the
# target: accel's first socket ready for traffic within 20 ms (p50).
# Writes <out>/startup-<date>.json, .md and .png.
#
# usage: bench/startup/run.sh [--smoke] [--runs N] [--out DIR]
#   --smoke    3 runs per series (CI: the pipeline works)
#   --runs N   runs per series (default 30)
# Exit: 0 when every file was written and every run worked, 1 otherwise,
# 4 when not root.
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/../lib/common.sh"
RUNS=30
while [[ $# -gt 0 ]]; do
    OPT_SHIFT=1
    case $1 in
    --runs)
        RUNS=${2-}
        OPT_SHIFT=2
        [[ $RUNS =~ ^[1-9][0-9]{0,2}$ ]] || { echo "--runs: a count from 1 to 999" >&2; exit 2; }
        ;;
    *) bench_opt "$@" ;;
    esac
    shift "$OPT_SHIFT"
done
bench_check_opts
((SMOKE)) && RUNS=3

. "$HERE/../../tests/lib/netns.sh"

bench_files startup
PORT=7100
HOLD_PORT=7101

# run_series SERIES MODE [ENV...]: RUNS fresh client processes; BEFORE_RUN,
# when set, is run before each.
BEFORE_RUN=
run_series() {
    local series=$1 mode=$2 i f t0 t1 rc
    shift 2
    log "series $series: $RUNS runs"
    for ((i = 1; i <= RUNS; i++)); do
        [[ -z $BEFORE_RUN ]] || eval "$BEFORE_RUN" || fail "$series: $BEFORE_RUN failed"
        f=$T/$series-$i
        ns_argv "$mode" "$@" taskset -c "$CPU_CLIENT" "$T/firstconn" connect "$KIP" "$PORT"
        t0=${EPOCHREALTIME/./}
        timeout -k 2 20 "${NSARGV[@]}" >"$f.out" 2>"$f.err" </dev/null
        rc=$?
        t1=${EPOCHREALTIME/./}
        "$PY" "$HERE/suparse.py" --series "$series" --run "$i" --out "$f.out" --err "$f.err" \
            --rc "$rc" --wall-us $((t1 - t0)) --log-prefix "[$TEST_NAME] " >>"$RAW"
    done
}

lab_up
meta_conditions
meta runs "$RUNS"
meta hugepages "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo) of $(awk \
    '/HugePages_Total/ {print $2}' /proc/meminfo) 2M pages free"
${CC:-cc} -O2 -Wall -Wextra -Werror -o "$T/firstconn" "$HERE/firstconn.c" ||
    fail "firstconn.c does not compile"

bg_start echo K taskset -c "$CPU_SERVER" "$T/firstconn" serve "$PORT"
wait_line "$T/echo.out" ready 10 || fail "the kernel echo server did not start: $(cat "$T/echo.err")"

with_kernel_ip run_series kernel A
BEFORE_RUN=bare_veth
run_series accel_cold AX ACCEL_LOG_LEVEL=info ACCEL_STATS=0
BEFORE_RUN='bare_veth && AX --prepare 2>>"$T/prepare.err"'
run_series accel_prepared AX ACCEL_LOG_LEVEL=info ACCEL_STATS=0
BEFORE_RUN=
run_series accel AX ACCEL_LOG_LEVEL=info ACCEL_STATS=0

# accel_join: an accelerated process drives veth-a first.
bg_start hold AX ACCEL_LOG_LEVEL=info taskset -c "$CPU_SERVER" "$T/firstconn" serve "$HOLD_PORT"
if wait_line "$T/hold.out" ready 20 && wait_line "$T/hold.err" "data path up" 10; then
    run_series accel_join AX ACCEL_LOG_LEVEL=info ACCEL_STATS=0
else
    log "the holding process did not bring the data path up: $(tail -2 "$T/hold.err")"
    for ((i = 1; i <= RUNS; i++)); do
        "$PY" "$HERE/suparse.py" --series accel_join --run "$i" \
            --failed "the process holding the interface did not start: $(tail -1 "$T/hold.err")" \
            >>"$RAW"
    done
fi
bg_stop hold INT
bg_stop echo TERM

bench_report
check "$BASE.json parses and has every run" "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["points"]) == 5 * int(sys.argv[2]), len(d["points"])' "$BASE.json" "$RUNS"
check_points '{series} run {run}'
cat "$BASE.md"
finish
