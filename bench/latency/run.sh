#!/bin/bash
# Latency benchmark: sockperf 3.7 on the kernel and under accel-run, in one
# run, with the same pinning: the client on CPU 0, the server on CPU 1.
#
#   kernel series: kernel `sockperf ping-pong|throughput` in netns accel-k,
#     kernel `sockperf server` in netns accel-a; accel-a's veth gets the
#     kernel IP 10.200.0.2/24 for this series only. It is the kernel
#     baseline of both topologies (the kernel ends of A and B are the same
#     processes, namespaces, veth, pinning and options: measured once).
#   topology A (kernel client): the same kernel client in accel-k against
#     `sockperf server` under accel-run in accel-a (af_xdp on the same veth).
#   topology B (both ends accelerated): client and server both under
#     accel-run, over memif, both in netns accel-m.
#
# Every accelerated series runs twice: with accel's defaults, and with the
# `latency` profile (`accel-run --profile latency` when accel-run has
# --profile, otherwise ACCEL_POLL_USEC=100000 ACCEL_TX_DEFER=0 in the
# environment; the .md says which). In B both ends get the profile.
#
# Cases (MODE-PROTO-SIZE): ping-pong (pp) over TCP and UDP with 64, 512 and
# 1400 byte messages: p50, p99, p99.9 of sockperf's latency, which is half
# the round trip (its default); throughput (tp) over UDP and TCP with 64
# byte messages: messages sent per second by the client and received per
# second by the server. IPv4 against IPv6 (p4-tcp-64, p6-tcp-64): TCP
# ping-pong with 64 byte messages measured by pingpong.c (compiled here
# with cc; sockperf 3.7 has no IPv6) over IPv4 and over IPv6, the same
# tool both ways: half the round trip as sockperf's; in topology B both
# ends of both cases have ACCEL_IP6 besides ACCEL_IP, in the kernel series
# accel-a's veth has the kernel's IPv6 and fd00:200::2 for that series
# only. Each point gets its own sockperf (or pingpong) server (started,
# waited for, stopped with SIGINT, killed 5 s later if it lingers) on its
# own port; every wait and the client are bounded in time, so an
# accelerated process that fails or hangs fails its point (with its stderr
# tail in the .md) and the run goes on.
# Before the points, jitter.c spins on both CPUs for 5 s and counts how
# often the platform itself takes the CPU away (ticks, hypervisor): the .md
# reports it, and how many of each case's round trips it must have slowed.
# Right before each point's server starts and right after it stops,
# bench/lib/c2c.c measures what a cache line's round trip between the two
# CPUs costs: this VM's two placements of its vCPUs (about 95 and 415 ns)
# change topology B's figures by some 2.5x; the .md reports it per point.
# Writes <out>/latency-<date>.json, .md (conditions, tables, ratios
# accel/kernel, the issue's targets met/missed) and .png (percentiles and
# message rates, accel vs kernel, every case).
#
# usage: bench/latency/run.sh [--smoke] [--duration S] [--out DIR] [--rounds N]
#                             [--topology A|B|all] [--cases GLOB[,GLOB...]]
#   --smoke        1 s per point and only the 64-byte cases (CI: checks that
#                  the pipeline produces well-formed files; a failed
#                  accelerated point is only reported)
#   --duration S   seconds per point (default 10)
#   --out DIR      where the files go (default bench/results)
#   --topology T   A, B or all (default); the kernel series always runs
#   --cases G      only the cases matching one of the globs, e.g.
#                  'pp-udp-*,tp-udp-64' (all: pp-tcp-64 pp-tcp-512
#                  pp-tcp-1400 pp-udp-64 pp-udp-512 pp-udp-1400 tp-udp-64
#                  tp-tcp-64 p4-tcp-64 p6-tcp-64)
#   --rounds N     run the series N times, one round after the other
#                  (kernel, A default, A latency, B default, B latency;
#                  again; ...): the tables show each point's median round
#                  (by p50, or received msg/s) with every round's figure,
#                  and each target per case the median of its per-round
#                  ratios (each round's accel against that round's kernel)
#                  with every round's ratio. Default 1.
# Exit: 0 when every file was written and every point worked (--smoke: every
# kernel point), 1 otherwise, 4 when not root.
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/../lib/common.sh"
CASE_GLOBS=""
SMOKE_DUR=1
ROUNDS=1
while [[ $# -gt 0 ]]; do
    OPT_SHIFT=1
    case $1 in
    --cases)
        CASE_GLOBS=${2-}
        OPT_SHIFT=$(($# < 2 ? 1 : 2))
        ;;
    --rounds)
        ROUNDS=${2-}
        OPT_SHIFT=2
        [[ $ROUNDS =~ ^[1-9][0-9]?$ ]] || { echo "--rounds: a count from 1 to 99" >&2; exit 2; }
        ;;
    *) bench_opt "$@" ;;
    esac
    shift "$OPT_SHIFT"
done
bench_check_opts

ALL_CASES=(pp-tcp-64 pp-tcp-512 pp-tcp-1400 pp-udp-64 pp-udp-512 pp-udp-1400 tp-udp-64 tp-tcp-64
    p4-tcp-64 p6-tcp-64)
((SMOKE)) && ALL_CASES=(pp-tcp-64 pp-udp-64 tp-udp-64 tp-tcp-64 p4-tcp-64 p6-tcp-64)
CASES=()
for c in "${ALL_CASES[@]}"; do
    if [[ -z $CASE_GLOBS ]]; then
        CASES+=("$c")
        continue
    fi
    IFS=, read -ra globs <<<"$CASE_GLOBS"
    for g in "${globs[@]}"; do
        # shellcheck disable=SC2053 # $g is a glob on purpose
        if [[ $c == $g ]]; then
            CASES+=("$c")
            break
        fi
    done
done
if ((${#CASES[@]} == 0)); then
    echo "run.sh: --cases '$CASE_GLOBS' matches none of: ${ALL_CASES[*]}" >&2
    exit 2
fi

. "$HERE/../../tests/lib/netns.sh"

bench_files latency
NPOINT=0
PORT0=12000
# Other work leaves softirq out: on the veth it is mostly this benchmark's
# own packets.
MACHINE_SOFTIRQ=0

# The latency profile: accel-run's own when it has one.
timeout -k 2 10 "$ACCEL_RUN" --help >"$T/accel-run-help.txt" 2>&1 </dev/null
if grep -q -- '--profile' "$T/accel-run-help.txt"; then
    LAT_ENV=()
    LAT_ARGS=(--profile latency)
    PROFILE_HOW="accel-run --profile latency"
else
    LAT_ENV=(ACCEL_POLL_USEC=100000 ACCEL_TX_DEFER=0)
    LAT_ARGS=()
    PROFILE_HOW="fallback: $ACCEL_RUN has no --profile, so the latency series set ${LAT_ENV[*]} in the environment"
fi

# server_ready NAME: sockperf's server loop runs (it prints the first line
# once its socket is bound, after the library brought its port up), or
# pingpong's server listens (the second).
server_ready() { grep -Eq "to block on socket|server ready on" "$T/$1.out" 2>/dev/null; }
ready_or_dead() { server_ready "$1" || dead "$2"; }

# errtail FILE...: the last lines of a process's output, without the
# ACCEL_STATS dump, on one line.
errtail() {
    sed 's/\x1b\[[0-9;]*m//g' "$@" 2>/dev/null | grep -v "stats:" | grep -v '^\s*$' | tail -4 |
        paste -sd'|' | cut -c1-400
}

# server_died PID [TOOL]: how the server PID (sockperf's, or TOOL's) ended.
server_died() { echo "${2:-sockperf} server $1 $(exit_status "$1")"; }

# run_point SERIES PROFILE CASE: one server (sockperf, or pingpong for the
# p4-/p6- cases), one client run, the server stopped; appends the point to
# $RAW.
run_point() {
    local series=$1 profile=$2 case=$3 mode proto size sub tcp=() udp=() penv=() pargs=()
    local sname f why="" port spid t0 t1 srv_ip sock c2c0 c2c1 mps=() fam=4 ip6env=()
    local srv_cmd cli_cmd
    IFS=- read -r mode proto size <<<"$case"
    NPOINT=$((NPOINT + 1))
    port=$((PORT0 + NPOINT))
    sname=srv-$NPOINT-$series-$profile-$case
    f=$T/cli-$NPOINT-$series-$profile-$case
    [[ $proto == tcp ]] && tcp=(--tcp)
    [[ $proto == udp ]] && udp=(-u)
    [[ $mode == p6 ]] && fam=6
    sub=ping-pong
    # sockperf sizes its per-message time table for about 600k round trips
    # a second unless told a higher rate, and aborts ("_seqN >
    # m_maxSequenceNo") beyond it: B with near vCPUs does 700k and more.
    # Ping-pong keeps one message in flight, so a ceiling above any rate
    # reached paces nothing.
    mps=(--mps=5000000)
    [[ $mode == tp ]] && sub=throughput && mps=()
    if [[ $profile == latency ]]; then
        penv=("${LAT_ENV[@]}")
        pargs=("${LAT_ARGS[@]}")
    fi
    srv_ip=$AIP
    ((fam == 4)) || srv_ip=$AIP6
    if [[ $series == accel_b ]]; then
        srv_ip=$MIP_SRV
        ((fam == 4)) || srv_ip=$MIP6_SRV
    fi
    if [[ $mode == p[46] ]]; then
        # Both pingpong cases of B give both ends an IPv6 address, so that
        # only the family of the connection differs between them.
        [[ $series != accel_b ]] || ip6env=("ACCEL_IP6=$MIP6_SRV/64")
        srv_cmd=("$PINGPONG" server "${udp[@]}" -b "$srv_ip" -p "$port")
        cli_cmd=("$PINGPONG" client "${udp[@]}" -c "$srv_ip" -p "$port" -m "$size" -t "$DUR"
            -w "$PP_WARMUP")
    else
        srv_cmd=(sockperf server "${tcp[@]}" -i "$srv_ip" -p "$port")
        cli_cmd=(sockperf "$sub" "${tcp[@]}" "${mps[@]}" -i "$srv_ip" -p "$port" -m "$size"
            -t "$DUR")
    fi
    if [[ $mode == p[46] && -z $PINGPONG ]]; then
        "$PY" "$HERE/spparse.py" --series "$series" --profile "$profile" --case "$case" \
            --round "$ROUND" \
            --failed "pingpong.c did not compile: $(tail -1 "$T/pingpong-cc.err")" \
            --log-prefix "[$TEST_NAME] " >>"$RAW"
        return
    fi
    c2c_probe c2c0
    case $series in
    kernel)
        bg_start "$sname" A taskset -c "$CPU_SERVER" "${srv_cmd[@]}"
        ;;
    accel_a)
        bg_start "$sname" AX ACCEL_STATS=2 "${penv[@]}" "${pargs[@]}" taskset -c "$CPU_SERVER" \
            "${srv_cmd[@]}"
        ;;
    accel_b)
        sock=$T/m-$NPOINT.sock
        bg_start "$sname" MX ACCEL_STATS=2 "ACCEL_VDEV=net_memif0,role=server,socket=$sock" \
            "ACCEL_IP=$MIP_SRV/24" "${ip6env[@]}" "${penv[@]}" "${pargs[@]}" \
            taskset -c "$CPU_SERVER" "${srv_cmd[@]}"
        ;;
    esac
    spid=$(bg_pid "$sname")
    slowwait 30 ready_or_dead "$sname" "$spid"
    if ! server_ready "$sname" || ! alive "$spid"; then
        if alive "$spid"; then
            why="${srv_cmd[0]##*/} server not ready after 30 s: $(errtail "$T/$sname.out" \
                "$T/$sname.err")"
        else
            why="$(server_died "$spid" "${srv_cmd[0]##*/}") before it was ready: $(errtail \
                "$T/$sname.out" "$T/$sname.err")"
        fi
    elif [[ $series == accel_b ]] && ! slowwait 20 memif_listening "$sock"; then
        why="the memif server does not listen on $sock: $(errtail "$T/$sname.err")"
    fi
    if [[ -n $why ]]; then
        bg_stop "$sname" KILL
        c2c_probe c2c1
        "$PY" "$HERE/spparse.py" --series "$series" --profile "$profile" --case "$case" \
            --round "$ROUND" --failed "$why" ${C2C:+--c2c-ns "$c2c0,$c2c1"} \
            --log-prefix "[$TEST_NAME] " >>"$RAW"
        return
    fi

    if [[ $series == accel_b ]]; then
        [[ -z ${ip6env[*]} ]] || ip6env=("ACCEL_IP6=$MIP6_CLI/64")
        ns_argv MX ACCEL_STATS=2 "ACCEL_VDEV=net_memif0,role=client,socket=$sock" \
            "ACCEL_IP=$MIP_CLI/24" "${ip6env[@]}" "${penv[@]}" "${pargs[@]}" \
            taskset -c "$CPU_CLIENT" "${cli_cmd[@]}"
    else
        ns_argv K taskset -c "$CPU_CLIENT" "${cli_cmd[@]}"
    fi
    t0=$(cpu_ticks "$spid")
    timed_client "$f.cpu" $((DUR + 30)) "$f.txt"
    t1=$(cpu_ticks "$spid")
    if ! alive "$spid"; then
        why="during the point: $(server_died "$spid" "${srv_cmd[0]##*/}"): $(errtail \
            "$T/$sname.out" "$T/$sname.err")"
    fi
    # SIGINT: sockperf (or pingpong) prints how many messages it handled,
    # accel its stats.
    bg_stop "$sname" INT || [[ -n $why ]] || log "$sname exited with status $?"
    c2c_probe c2c1
    cat "$T/$sname.out" "$T/$sname.err" >"$f.srv" 2>/dev/null
    "$PY" "$HERE/spparse.py" --series "$series" --profile "$profile" --case "$case" \
        --round "$ROUND" --client "$f.txt" --server "$f.srv" --client-cpu "$f.cpu" \
        ${t0:+${t1:+--server-ticks $((t1 - t0))}} ${why:+--failed "$why"} \
        "${MACHINE_ARGS[@]}" ${C2C:+--c2c-ns "$c2c0,$c2c1"} --log-prefix "[$TEST_NAME] " >>"$RAW"
}

# run_series SERIES PROFILE: every case.
run_series() {
    local c
    log "series $1 ($2)"
    for c in "${CASES[@]}"; do
        run_point "$1" "$2" "$c"
    done
}

lab_up
lab_has_memif_ns || [[ $TOPO == A ]] || fail "lab has no netns $NS_M"
log "points of $DUR s, $ROUNDS round(s); client on CPU $CPU_CLIENT, server on CPU $CPU_SERVER;" \
    "cases: ${CASES[*]}"
log "latency profile: $PROFILE_HOW"
meta_conditions
meta accel_run "$ACCEL_RUN"
meta profile_how "$PROFILE_HOW"
meta profile_fallback "$((${#LAT_ARGS[@]} == 0))"
if ((${#LAT_ARGS[@]})); then
    # What the profile sets, as topology A's server gets it.
    timeout 10 env -u ACCEL_LAB_TAG "${LAB_ENV[@]}" ${ACCEL_LIBRARY:+ACCEL_LIBRARY=$ACCEL_LIBRARY} \
        "$ACCEL_RUN" "${LAT_ARGS[@]}" --explain sockperf server >"$T/explain.txt" 2>&1
    meta profile_explain "$T/explain.txt"
fi
meta cases "${CASES[*]}"
meta rounds "$ROUNDS"
c2c_build

# The platform's own interruptions of a spinning thread (jitter.c), on both
# CPUs at once, before the points: the floor under every tail percentile.
JIT_S=5
((SMOKE)) && JIT_S=1
if ${CC:-cc} -O2 -Wall -Wextra -Werror -o "$T/jitter" "$HERE/jitter.c" 2>"$T/jitter-cc.err"; then
    taskset -c "$CPU_CLIENT" "$T/jitter" "$JIT_S" >"$T/jitter-client.json" &
    taskset -c "$CPU_SERVER" "$T/jitter" "$JIT_S" >"$T/jitter-server.json"
    wait $!
    meta jitter_client "$T/jitter-client.json"
    meta jitter_server "$T/jitter-server.json"
    log "platform interruptions measured ($JIT_S s, CPUs $CPU_CLIENT and $CPU_SERVER)"
else
    log "jitter.c did not compile ($(tail -1 "$T/jitter-cc.err")): no platform measurement"
fi

# The p4-/p6- cases' ping-pong (IPv4 and IPv6 alike; sockperf 3.7 has no
# IPv6): compiled here; when it does not compile, those points fail.
PINGPONG=""
PP_WARMUP=0.5
if [[ " ${CASES[*]}" == *" p"[46]-* ]]; then
    if ${CC:-cc} -O2 -Wall -Wextra -Werror -o "$T/pingpong" "$HERE/pingpong.c" \
        2>"$T/pingpong-cc.err"; then
        PINGPONG=$T/pingpong
    else
        log "pingpong.c did not compile ($(tail -1 "$T/pingpong-cc.err")): its points fail"
    fi
fi
meta pp_warmup_s "$PP_WARMUP"

for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
    ((ROUNDS == 1)) || log "round $ROUND of $ROUNDS"
    # kernel series: the same veth, with the kernel IP for this series only
    # (and for IPv6 cases, accel-a's veth has the kernel's IPv6 and AIP6)
    if [[ " ${CASES[*]}" == *" p6-"* ]]; then
        with_kernel_ip with_kernel_ip6 run_series kernel kernel
    else
        with_kernel_ip run_series kernel kernel
    fi

    if [[ $TOPO != B ]]; then
        run_series accel_a default
        run_series accel_a latency
    fi
    if [[ $TOPO != A ]]; then
        run_series accel_b default
        run_series accel_b latency
    fi
done

# Checks: the files are there and well-formed, then the points.
bench_report
check "$BASE.json parses and has every point" "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["points"]) == int(sys.argv[2]), len(d["points"])
assert d["meta"]["stamp"] and isinstance(d["targets"], list)' "$BASE.json" "$NPOINT"
check "$BASE.png is a PNG" "$PY" -c 'import sys
assert open(sys.argv[1], "rb").read(8) == b"\x89PNG\r\n\x1a\n"' "$BASE.png"
check "$BASE.md has its sections" grep -q '^## Conditions' "$BASE.md"
if ((ROUNDS > 1)); then
    check_points '{series}/{profile} {case} round {round}'
else
    check_points '{series}/{profile} {case}'
fi
cat "$BASE.md"
finish
