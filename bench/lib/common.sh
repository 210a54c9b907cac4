# shellcheck shell=bash
# Helpers shared by the benchmarks' run.sh (bench/http, latency, redis, loss).
# Sourced, not run: source it right after setting HERE (the benchmark's
# directory), parse the options with bench_opt, then source
# tests/lib/netns.sh and call bench_files.
#
# The common shape of a benchmark run: a kernel series and accelerated
# series of points, the client pinned to CPU_CLIENT and the server to
# CPU_SERVER; every point is one JSON line in $RAW (written by the
# benchmark's parser), the conditions are key<TAB>value lines in $META, and
# report.py turns both into $BASE.json, .md and .png.

BENCH_LIB=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
CPURUN=$BENCH_LIB/cpurun.py

# What is measured: the build tree's accel-run and libaccel.so (build/, as
# the integration tests use them), brought up to date with the checked-out
# tree first, so that the figures belong to the commit the result file
# names; the installed ones only without a build tree, or when
# IT_ACCEL_RUN / ACCEL_LIBRARY name others.
BENCH_REPO=$(cd "$BENCH_LIB/../.." && pwd)
if [[ -z ${IT_ACCEL_RUN:-}${ACCEL_LIBRARY:-} && -f $BENCH_REPO/build/build.ninja ]]; then
    if ! ninja -C "$BENCH_REPO/build" accel accel-run >/dev/null; then
        echo "run.sh: the build tree does not build (ninja -C $BENCH_REPO/build)" >&2
        exit 1
    fi
    export IT_ACCEL_RUN=$BENCH_REPO/build/tools/accel-run
    export ACCEL_LIBRARY=$BENCH_REPO/build/preload/libaccel.so
fi

# Options every benchmark takes (defaults). --smoke sets DUR to SMOKE_DUR,
# which a benchmark may change before it parses its options.
DUR=10
SMOKE=0
SMOKE_DUR=2
TOPO=all
OUT=$HERE/../results

# bench_usage: print the script's header comment (its usage).
bench_usage() {
    awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'
}

# bench_opt ARG [VALUE]: handle an option every benchmark takes (--smoke,
# --duration S, --out DIR, --topology T, -h|--help). Sets OPT_SHIFT to the
# number of arguments it used (the caller shifts them); exits 2 on an
# unknown one.
bench_opt() {
    OPT_SHIFT=$(($# < 2 ? 1 : 2))
    case $1 in
    --smoke)
        SMOKE=1
        DUR=$SMOKE_DUR
        OPT_SHIFT=1
        ;;
    --duration) DUR=${2-} ;;
    --out) OUT=${2-} ;;
    --topology) TOPO=${2-} ;;
    -h | --help)
        bench_usage
        exit 0
        ;;
    *)
        echo "run.sh: unknown argument $1" >&2
        exit 2
        ;;
    esac
}

# bench_check_opts: exit 2 when --duration or --topology is malformed.
bench_check_opts() {
    if [[ ! $DUR =~ ^[1-9][0-9]*$ || ! $TOPO =~ ^(A|B|all)$ ]]; then
        echo "run.sh: --duration takes whole seconds, --topology A, B or all" >&2
        exit 2
    fi
}

# bench_files NAME: create $OUT and set STAMP, BASE ($OUT/NAME-STAMP), RAW,
# META (both emptied) and the pinning (NCPU, CPU_CLIENT, CPU_SERVER). Needs
# netns.sh ($T, fail).
bench_files() {
    mkdir -p "$OUT" || fail "cannot create $OUT"
    OUT=$(readlink -f "$OUT")
    STAMP=$(date +%Y%m%d-%H%M%S)
    BASE=$OUT/$1-$STAMP
    RAW=$T/points.jsonl # one JSON object per point (the benchmark's parser)
    META=$T/meta.tsv    # key<TAB>value for report.py
    : >"$RAW"
    : >"$META"
    NCPU=$(nproc)
    CPU_CLIENT=0
    CPU_SERVER=$((NCPU > 1 ? 1 : 0))
}

# meta KEY VALUE: one line of conditions for report.py.
meta() { printf '%s\t%s\n' "$1" "$2" >>"$META"; }

# meta_commit: the commit measured, "-modified" when the tree differs
# from it (what a result file's figures belong to), and the library run.
meta_commit() {
    meta commit "$(git -C "$BENCH_LIB" rev-parse --short HEAD 2>/dev/null)$(
        git -C "$BENCH_LIB" diff --quiet HEAD 2>/dev/null || echo -modified)"
    meta accel_library "${ACCEL_LIBRARY:-$(dirname "$(dirname "$ACCEL_RUN")")/lib/libaccel.so}"
}

# meta_conditions: the conditions every benchmark records at its start.
meta_conditions() {
    meta_commit
    meta stamp "$STAMP"
    meta duration_s "$DUR"
    meta cpu_client "$CPU_CLIENT"
    meta cpu_server "$CPU_SERVER"
    meta accel_env "${LAB_ENV[*]}"
    meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
    meta smoke "$SMOKE"
    meta topology "$TOPO"
}

# machine_ticks: busy (user, nice, system, irq and, unless
# MACHINE_SOFTIRQ=0, softirq) and steal ticks of all CPUs (/proc/stat):
# with the wall time, what other work took from the machine during a point.
MACHINE_SOFTIRQ=1
machine_ticks() {
    awk -v sirq="$MACHINE_SOFTIRQ" '/^cpu / {print $2 + $3 + $4 + $7 + (sirq ? $8 : 0), $9}' \
        /proc/stat
}

# timed_client CPU_FILE LIMIT_S OUT_FILE: run the client in NSARGV under
# cpurun.py (CPU time to CPU_FILE, output to OUT_FILE, killed after
# LIMIT_S) and set MACHINE_ARGS to the parser's --machine-ticks,
# --steal-ticks and --wall-ms for that run.
timed_client() {
    local m0 m1
    m0=($(machine_ticks) "$(date +%s%3N)")
    "$PY" "$CPURUN" "$1" "$2" "${NSARGV[@]}" >"$3" 2>&1 </dev/null
    m1=($(machine_ticks) "$(date +%s%3N)")
    MACHINE_ARGS=(--machine-ticks $((m1[0] - m0[0])) --steal-ticks $((m1[1] - m0[1]))
        --wall-ms $((m1[2] - m0[2])))
}

# server_ticks: CPU ticks of the server SPID and its children (nginx's
# master and worker: a worker that exited and was reaped counts in the
# master's cutime/cstime); fails when SPID is gone. Needs netns.sh.
server_ticks() {
    local t c ct
    t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$SPID/stat" 2>/dev/null)
    [[ -n $t ]] || return 1
    for c in $(pgrep -P "$SPID"); do
        ct=$(cpu_ticks "$c")
        t=$((t + ${ct:-0}))
    done
    echo "$t"
}

# bench_tool VAR TARGET: set VAR, unless the environment sets it, to the
# benchmark's own program TARGET: the build tree's (CMake target TARGET, in
# build/bench/TARGET/), or $HERE/TARGET.c compiled into $T without a build
# tree. Needs netns.sh ($T, fail).
bench_tool() {
    local path=${!1:-}
    if [[ -z $path && -f $BENCH_REPO/build/build.ninja ]] &&
        ninja -C "$BENCH_REPO/build" "$2" >/dev/null; then
        path=$BENCH_REPO/build/bench/$2/$2
    fi
    if [[ -z $path ]]; then
        ${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -o "$T/$2" "$HERE/$2.c" ||
            fail "$2.c does not compile"
        path=$T/$2
    fi
    [[ -x $path ]] || fail "no $2 program ($path)"
    printf -v "$1" '%s' "$path"
}

# c2c_build: compile lib/c2c.c (a cache line bounced between two CPUs) to
# $T/c2c and record the meta c2c_how; C2C is its path, or empty when there
# is nothing to measure (one CPU) or it does not compile (logged; the run
# goes on without the probe).
c2c_build() {
    C2C=""
    if ((CPU_CLIENT == CPU_SERVER)); then
        meta c2c_how "not measured: client and server share CPU $CPU_CLIENT"
    elif ${CC:-cc} -O2 -Wall -Wextra -Werror -pthread -o "$T/c2c" "$BENCH_LIB/c2c.c" \
        2>"$T/c2c-cc.err"; then
        C2C=$T/c2c
        meta c2c_how "ok"
    else
        log "c2c.c did not compile ($(tail -1 "$T/c2c-cc.err")): no cache-line round trips"
        meta c2c_how "not measured: c2c.c did not compile"
    fi
}

# c2c_probe VAR: set VAR to the ns per cache-line round trip between
# CPU_CLIENT and CPU_SERVER now, or "" (no probe, or it failed: its first
# failure is logged). Run it when neither end of a point is busy.
C2C_FAILED=0
c2c_probe() {
    local out
    printf -v "$1" '%s' ""
    [[ -n $C2C ]] || return 0
    out=$(timeout -k 1 5 "$C2C" "$CPU_CLIENT" "$CPU_SERVER" 2>"$T/c2c.err")
    out=$(sed -n 's/.*"ns_per_round_trip": *\([0-9.]*\).*/\1/p' <<<"$out")
    if [[ -z $out ]] && ((!C2C_FAILED)); then
        C2C_FAILED=1
        log "c2c probe failed (not logged again): $(tail -1 "$T/c2c.err")"
    fi
    printf -v "$1" '%s' "$out"
}

# exit_status PID: "exited with status N[ (signal S)]" for the child PID.
exit_status() {
    local rc sig=""
    wait "$1" 2>/dev/null
    rc=$?
    ((rc > 128)) && sig=" (signal $((rc - 128)))"
    echo "exited with status $rc$sig"
}

# bare_veth: the kernel series runs on the veth as the kernel has it,
# without the XDP program an accelerated series left attached
# (ACCEL_XDP_KEEP): with one, the veth takes its NAPI path for every frame.
bare_veth() {
    A ip link set dev "$VETH_A" xdp off || fail "cannot remove the XDP program from $VETH_A"
}

# with_kernel_ip CMD...: run CMD (the kernel series) with the kernel IP on
# accel-a's veth, which it holds for this series only, and no XDP program.
with_kernel_ip() {
    bare_veth
    A ip addr add "$AIP/24" dev "$VETH_A" || fail "cannot add the kernel IP to $VETH_A"
    "$@"
    A ip addr del "$AIP/24" dev "$VETH_A" || fail "cannot remove the kernel IP from $VETH_A"
    K ip neigh flush dev "$VETH_K"
}

# with_kernel_ip6 CMD...: run CMD (the kernel series of IPv6 points) with
# the kernel's IPv6 on accel-a's veth and AIP6 on it. The lab keeps the
# kernel's IPv6 off there (the stack does its own neighbour discovery on
# that veth), so it is on for this series only, without DAD or router
# solicitations, and off again after it (`accel-lab up` turns it off too).
with_kernel_ip6() {
    local c=net.ipv6.conf.$VETH_A k saved=()
    bare_veth
    for k in accept_dad accept_ra router_solicitations; do
        saved+=("$c.$k=$(A sysctl -n "$c.$k")")
    done
    A sysctl -qw "$c.accept_dad=0" "$c.accept_ra=0" "$c.router_solicitations=0" \
        "$c.disable_ipv6=0" || fail "cannot turn the kernel's IPv6 on on $VETH_A"
    A ip addr add "$AIP6/64" dev "$VETH_A" nodad || fail "cannot add $AIP6 to $VETH_A"
    "$@"
    A ip addr del "$AIP6/64" dev "$VETH_A" || fail "cannot remove $AIP6 from $VETH_A"
    A sysctl -qw "$c.disable_ipv6=1" "${saved[@]}" ||
        fail "cannot turn the kernel's IPv6 off again on $VETH_A"
    K ip -6 neigh flush dev "$VETH_K"
}

# bench_report: record the end conditions and write $BASE.json, .md and .png
# with the benchmark's report.py; check that the three files are there.
bench_report() {
    local ext
    meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
    "$PY" "$HERE/report.py" "$RAW" "$META" "$BASE" || fail "report.py failed"
    for ext in json md png; do
        [[ -s $BASE.$ext ]] && pass "wrote $BASE.$ext" || check_fail "missing $BASE.$ext"
    done
}

# check_points LABEL: pass or fail every point of $RAW by its ok field;
# LABEL is a Python format string over the point's fields naming it. A
# failed point fails the run, --smoke included: a smoke run is the test
# that every series, accelerated ones first, still works.
check_points() {
    local series ok what reason
    while IFS=$'\t' read -r series ok what reason; do
        what="point $what"
        if [[ $ok == True ]]; then
            pass "$what"
        else
            check_fail "$what ($series): $reason"
        fi
    done < <("$PY" -c 'import json, sys
for line in open(sys.argv[1]):
    p = json.loads(line)
    print(p["series"], p["ok"], sys.argv[2].format(**p), p["reason"] or "", sep="\t")' \
        "$RAW" "$1")
}
