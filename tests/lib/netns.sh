# shellcheck shell=bash
# Helpers for the integration tests (kselftest lib.sh style). Sourced, not run.
#
# A test sources this file, calls lab_up, starts programs with K/A/AX/M/MX
# (foreground) or bg_start (background), checks with check/check_eq/fail, and
# ends with finish. Exit codes: 0 pass, 1 fail, 4 skip (only when not root).
# Every test gets its own temp dir ($T); everything started in the lab
# namespaces is killed on exit, and the lab is taken down unless
# IT_KEEP_LAB=1.
#
# Environment (set by ctest from the build tree, or by the user). Our own
# knobs are IT_* (not ACCEL_*: the library warns about unknown ACCEL_* names):
#   IT_ACCEL_RUN   accel-run to use          (default: accel-run on PATH)
#   IT_ACCEL_LAB   accel-lab script          (default: accel-lab on PATH)
#   ACCEL_LIBRARY  libaccel.so for accel-run (default: accel-run's own)
#   ACCEL_LAB_TAG  private lab suffix: netns accel-k<tag>, accel-a<tag>, ...
#                  (passed to accel-lab, removed from accelerated programs)
#   IT_KEEP=1      keep $T after the test (it is kept on failure too)
#   IT_KEEP_LAB=1  leave the lab up after the test
# Accelerated programs run only inside the lab namespaces: none of them has
# a route out, so a silent fallback to the kernel fails loudly.

KIP=10.200.0.1
AIP=10.200.0.2
KIP6=fd00:200::1 # accel-lab's (IPv6 on veth-k; the stack's ACCEL_IP6 below)
AIP6=fd00:200::2
MIP_SRV=10.201.0.1
MIP_CLI=10.201.0.2
MIP6_SRV=fd00:201::1 # memif pairs have no kernel: any prefix will do
MIP6_CLI=fd00:201::2
PY=/usr/bin/python3 # the system python (has scapy); pyenv shims do not
LIBDIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
TEST_NAME=$(basename "$0" .sh)
RET=0
BG_NAMES=()
BG_PIDS=()

log() { echo "[$TEST_NAME] $*"; }

# --- privileges, tools ---------------------------------------------------

if [[ $(id -u) -ne 0 ]]; then
    log "SKIP: needs root (network namespaces, veth, DPDK)"
    exit 4
fi

ACCEL_RUN=${IT_ACCEL_RUN:-$(command -v accel-run)}
ACCEL_LAB=${IT_ACCEL_LAB:-$(command -v accel-lab)}

# libaccel.so, for the tests that preload it without accel-run.
ACCEL_LIB=${ACCEL_LIBRARY:-$(dirname "$(dirname "$ACCEL_RUN")")/lib/libaccel.so}

# Names of the lab namespaces (accel-lab appends <tag> for a private lab).
lab_ns() { echo "accel-$1${ACCEL_LAB_TAG:-}"; }
NS_K=$(lab_ns k)
NS_A=$(lab_ns a)
NS_M=$(lab_ns m)

T=$(mktemp -d "/tmp/accel-it-$TEST_NAME.XXXXXX")
chmod 755 "$T" # nginx may drop privileges to www-data

# --- results -------------------------------------------------------------

# fail MSG: the test cannot continue; exit 1 after cleanup.
fail() {
    log "FAIL: $*"
    RET=1
    exit 1
}

# pass MSG / check_fail MSG: record one named check.
pass() { log "ok: $*"; }
check_fail() {
    log "FAIL: $*"
    RET=1
}

# check DESC CMD...: run CMD (output kept in $T/check.out), record the result.
check() {
    local desc=$1
    shift
    if "$@" >"$T/check.out" 2>&1; then
        pass "$desc"
    else
        check_fail "$desc (rc=$?: $(tail -c 400 "$T/check.out" | tr '\n' ' '))"
    fi
}

# check_not DESC CMD...: like check, for a CMD that must fail.
check_not() {
    local desc=$1
    shift
    if "$@" >"$T/check.out" 2>&1; then
        check_fail "$desc (it succeeded: $(tail -c 400 "$T/check.out" | tr '\n' ' '))"
    else
        pass "$desc"
    fi
}

# check_eq DESC GOT WANT
check_eq() {
    if [[ "$2" == "$3" ]]; then
        pass "$1"
    else
        check_fail "$1: got '$2', want '$3'"
    fi
}

# check_ge DESC GOT MIN (integers; empty GOT fails)
check_ge() {
    if [[ "$2" =~ ^[0-9]+$ ]] && (("$2" >= "$3")); then
        pass "$1 ($2 >= $3)"
    else
        check_fail "$1: got '$2', want >= $3"
    fi
}

# check_le DESC GOT MAX
check_le() {
    if [[ "$2" =~ ^[0-9]+$ ]] && (("$2" <= "$3")); then
        pass "$1 ($2 <= $3)"
    else
        check_fail "$1: got '$2', want <= $3"
    fi
}

# finish: exit with the recorded result.
finish() {
    if ((RET == 0)); then log "PASS"; else log "FAILED"; fi
    exit "$RET"
}

# --- polling instead of sleeping -------------------------------------------

# busywait TIMEOUT_MS CMD...: retry CMD until it succeeds or the time is up.
busywait() {
    local timeout_ms=$1 start now
    shift
    start=$(date +%s%3N)
    while true; do
        "$@" && return 0
        now=$(date +%s%3N)
        ((now - start >= timeout_ms)) && return 1
        sleep 0.05
    done
}

# slowwait TIMEOUT_S CMD...: same, 0.2 s between tries.
slowwait() {
    local timeout_s=$1 start
    shift
    start=$SECONDS
    while true; do
        "$@" && return 0
        ((SECONDS - start >= timeout_s)) && return 1
        sleep 0.2
    done
}

# --- running in the namespaces ---------------------------------------------

# ns_argv MODE ARGS...: fill NSARGV with the command line for MODE:
#   K  kernel peer netns         A  accelerated netns, plain (kernel)
#   AX accelerated netns under accel-run with the lab env
#   M  memif netns, plain        MX memif netns under accel-run
# For AX/MX, leading NAME=value arguments are extra environment for the
# accelerated program (they go before accel-run).
ns_argv() {
    local mode=$1
    shift
    local envs=()
    case $mode in
    K) NSARGV=(ip netns exec "$NS_K" "$@") ;;
    A) NSARGV=(ip netns exec "$NS_A" "$@") ;;
    M) NSARGV=(ip netns exec "$NS_M" "$@") ;;
    AX | MX)
        while [[ $# -gt 0 && $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
            envs+=("$1")
            shift
        done
        local ns=$NS_A lab_env=("${LAB_ENV[@]}")
        if [[ $mode == MX ]]; then
            ns=$NS_M
            lab_env=()
        fi
        NSARGV=(ip netns exec "$ns" env -u ACCEL_LAB_TAG "${lab_env[@]}"
            ${ACCEL_LIBRARY:+ACCEL_LIBRARY=$ACCEL_LIBRARY}
            "${envs[@]}" "$ACCEL_RUN" "$@")
        ;;
    *) fail "ns_argv: unknown mode $mode" ;;
    esac
}

K() { ip netns exec "$NS_K" "$@"; }
A() { ip netns exec "$NS_A" "$@"; }
M() { ip netns exec "$NS_M" "$@"; }
# Foreground accelerated programs are bounded (IT_FG_TIMEOUT seconds, then
# SIGTERM, then SIGKILL 5 s later) so a process that hangs, for instance at
# exit, fails its check instead of stalling the suite until ctest's timeout.
AX() {
    ns_argv AX "$@"
    timeout -k 5 "${IT_FG_TIMEOUT:-180}" "${NSARGV[@]}"
}
MX() {
    ns_argv MX "$@"
    timeout -k 5 "${IT_FG_TIMEOUT:-180}" "${NSARGV[@]}"
}

# bg_start NAME MODE ARGS...: start in the background; stdout to
# $T/NAME.out, stderr to $T/NAME.err. The recorded pid is the program's own
# (ip netns exec, env and accel-run all exec).
bg_start() {
    local name=$1 mode=$2
    shift 2
    ns_argv "$mode" "$@"
    bg_exec "$name"
}

# bg_exec NAME: start NSARGV in the background as bg_start does.
bg_exec() {
    "${NSARGV[@]}" >"$T/$1.out" 2>"$T/$1.err" </dev/null &
    BG_NAMES+=("$1")
    BG_PIDS+=("$!")
    log "started $1 (pid $!): ${NSARGV[*]}"
}

# bg_pid NAME
bg_pid() {
    local i
    for i in "${!BG_NAMES[@]}"; do
        [[ ${BG_NAMES[$i]} == "$1" ]] && echo "${BG_PIDS[$i]}" && return 0
    done
    return 1
}

# wait_line FILE ERE [TIMEOUT_S]: a line of FILE matches ERE (20 s).
wait_line() { slowwait "${3:-20}" grep -Eqs "$2" "$1"; }

# alive PID: running, not a zombie. A /proc entry that vanishes between
# the two reads (bash reaped the child) counts as dead.
alive() {
    local st
    kill -0 "$1" 2>/dev/null || return 1
    st=$(sed -n 's/^.*) \([A-Za-z]\) .*$/\1/p' "/proc/$1/stat" 2>/dev/null)
    [[ -n $st && $st != Z && $st != X ]]
}
dead() { ! alive "$1"; }

# bg_stop NAME [SIGNAL]: stop one background program and wait for it (5 s,
# then SIGKILL). Returns the program's exit status.
bg_stop() {
    local pid rc
    pid=$(bg_pid "$1") || return 1
    kill "-${2:-TERM}" "$pid" 2>/dev/null
    if ! busywait 5000 dead "$pid"; then
        log "$1 (pid $pid) ignored SIG${2:-TERM}; killing"
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    rc=$?
    return $rc
}

# cpu_ticks PID: utime+stime in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; }
CLK_TCK=$(getconf CLK_TCK)

# wait_tcp NSMODE IP PORT [TIMEOUT_S]: a kernel TCP connect succeeds.
tcp_open() { "$1" bash -c "exec 3<>/dev/tcp/$2/$3" 2>/dev/null; }
wait_tcp() { slowwait "${4:-20}" tcp_open "$1" "$2" "$3"; }

# stat_get FILE NAME: the last value of counter NAME in an ACCEL_STATS dump.
stat_get() {
    grep -Eo "(^|[^a-z_])$2[ =:]+[0-9]+" "$1" | tail -1 | grep -Eo '[0-9]+$'
}

mkfile() { head -c "$2" /dev/urandom >"$1"; }

# nginx_conf FILE LISTEN ROOT [MASTER=on|off] [EXTRA_SERVER_LINES]: a one
# worker nginx config with everything under $T. `location = /hello` returns
# a fixed small body without touching the disk.
nginx_conf() {
    local f=$1 listen=$2 root=$3 master=${4:-on} extra=${5:-}
    local base
    base=$(basename "$f" .conf)
    cat >"$f" <<NGX
master_process $master; daemon off; worker_processes 1;
pid $T/$base.pid; error_log $T/$base.error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $T/$base.body; proxy_temp_path $T/$base.proxy;
    fastcgi_temp_path $T/$base.fcgi; uwsgi_temp_path $T/$base.uwsgi;
    scgi_temp_path $T/$base.scgi;
    keepalive_requests 1000000;
    server {
        listen $listen;
        root $root;
        location = /hello { default_type text/plain; return 200 "hello from nginx\n"; }
        $extra
    }
}
NGX
}
sha() { sha256sum "$1" | cut -c1-64; }

# --- the lab ---------------------------------------------------------------

# ns_kill SIG: signal every process inside the lab namespaces.
ns_kill() {
    local ns
    for ns in "$NS_K" "$NS_A" "$NS_M"; do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill "-$1" 2>/dev/null
    done
}

ns_has_procs() {
    local ns
    for ns in "$NS_K" "$NS_A" "$NS_M"; do
        [[ -n $(ip netns pids "$ns" 2>/dev/null) ]] && return 0
    done
    return 1
}

# lab_up: the lab through `accel-lab up` (idempotent, repairs), with no
# process left inside from an earlier run. Sets LAB_ENV (array of the
# ACCEL_*=v printed by `accel-lab up`), VETH_A (the veth the stack uses),
# VETH_K. A lab that was already up (a CI run brings it up once for several
# suites) is left up at the end; one this test created is taken down.
lab_up() {
    [[ -x $ACCEL_RUN ]] || fail "accel-run not found (IT_ACCEL_RUN='$ACCEL_RUN'; build the tree or install)"
    [[ -n $ACCEL_LAB && -x $ACCEL_LAB ]] || fail "accel-lab not found (IT_ACCEL_LAB='$ACCEL_LAB')"
    if "$ACCEL_LAB" status >"$T/lab-status.log" 2>&1; then
        LAB_WAS_UP=1
        if ns_has_procs; then
            log "stopping processes left in the lab namespaces by an earlier run"
            ns_kill TERM
            busywait 3000 eval '! ns_has_procs' || ns_kill KILL
            busywait 2000 eval '! ns_has_procs' || fail "processes in the lab namespaces survive SIGKILL"
        fi
    fi
    if ! "$ACCEL_LAB" up >"$T/lab.out" 2>&1; then
        fail "accel-lab up failed: $(tail -3 "$T/lab.out" | tr '\n' ' ')"
    fi
    # A perfect wire: an impairment left by a test killed before its
    # cleanup (accel-lab impair, tests/README.md) would skew every figure.
    "$ACCEL_LAB" impair --off >/dev/null 2>&1 || true
    [[ -n ${LAB_WAS_UP:-} ]] || LAB_UP=1
    mapfile -t LAB_ENV < <(grep -o 'ACCEL_[A-Z0-9_]*=[^ "'"'"']*' "$T/lab.out" | sort -u)
    local e have_ip=0
    for e in "${LAB_ENV[@]}"; do
        [[ $e == ACCEL_IP=* ]] && have_ip=1
        [[ $e == ACCEL_IFACE=* ]] && VETH_A=${e#ACCEL_IFACE=}
    done
    ((have_ip)) || LAB_ENV+=("ACCEL_IP=$AIP/24")
    ip netns list | grep -q "^$NS_K\b" || fail "lab has no netns $NS_K"
    ip netns list | grep -q "^$NS_A\b" || fail "lab has no netns $NS_A"
    [[ -n ${VETH_A:-} ]] || fail "accel-lab up printed no ACCEL_IFACE=: $(tr '\n' ' ' <"$T/lab.out")"
    if ip -n "$NS_A" -4 addr show | grep -q "inet $AIP/"; then
        fail "$NS_A has the kernel IP $AIP: the bypass would not be proven"
    fi
    VETH_K=$(ip -n "$NS_K" -o link show type veth | awk -F': ' '{print $2}' | cut -d@ -f1 | head -1)
    [[ -n $VETH_K ]] || fail "no veth in $NS_K"
    log "lab up: $NS_K/$VETH_K=$KIP, $NS_A/$VETH_A (stack $AIP), env: ${LAB_ENV[*]}"
}

# memif_listening SOCK: a memif server listens on SOCK in the memif netns
# (DPDK 22.11 memif uses an abstract socket by default: no file appears).
memif_listening() { M ss -xlH 2>/dev/null | grep -q -- "$1"; }

# lab_has_memif_ns: the loopback-only memif netns exists.
lab_has_memif_ns() { ip netns list | grep -q "^$NS_M\b"; }

# --- cleanup -----------------------------------------------------------------

show_logs() {
    local f
    for f in "$T"/*.err "$T"/*.out; do
        [[ -s $f && $f != */lab* && $f != */check.out ]] || continue
        echo "---- $(basename "$f") (last 15 lines)"
        tail -15 "$f"
    done
}

cleanup() {
    local rc=$? i
    trap - EXIT INT TERM
    ((RET == 0 && rc != 0)) && RET=$rc
    for i in "${!BG_PIDS[@]}"; do kill -TERM "${BG_PIDS[$i]}" 2>/dev/null; done
    ns_kill TERM
    busywait 3000 eval '! ns_has_procs' || ns_kill KILL
    for i in "${!BG_PIDS[@]}"; do kill -KILL "${BG_PIDS[$i]}" 2>/dev/null; done
    busywait 2000 eval '! ns_has_procs'
    wait 2>/dev/null
    if [[ -n ${LAB_UP:-} && ${IT_KEEP_LAB:-0} != 1 ]]; then
        "$ACCEL_LAB" down >>"$T/lab-down.log" 2>&1 || log "warning: accel-lab down failed"
    fi
    if ((RET != 0)); then
        show_logs
        log "logs kept in $T"
    elif [[ ${IT_KEEP:-0} == 1 ]]; then
        log "logs kept in $T"
    else
        rm -rf "$T"
    fi
    exit "$RET"
}
trap cleanup EXIT
trap 'log "interrupted"; RET=1; exit 1' INT TERM
