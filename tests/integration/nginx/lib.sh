# shellcheck shell=bash
# Helpers shared by nginx_features.sh and nginx_lifecycle.sh (stock nginx,
# master + workers). Sourced after tests/lib/netns.sh and lab_up.
#
#   NGX_MODE=accel   (default) nginx under accel-run in $NS_A, no kernel IP
#   NGX_MODE=kernel  the same nginx on the kernel: $VETH_A gets $AIP/24 for
#                    the run (as bench/http/run.sh does for its kernel run);
#                    validates the test scripts themselves
#
# Clients (curl, wrk) and the upstream backend always run on the kernel in
# $NS_K. In accel mode $NS_A has no kernel address and no route, so every
# byte nginx exchanges (served or proxied) went through the userspace stack.

NGX_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
NGX_MODE=${NGX_MODE:-accel}
case $NGX_MODE in
accel | kernel) ;;
*) fail "NGX_MODE='$NGX_MODE': use accel or kernel" ;;
esac
NPROC=$(nproc)
# wrk counts a request still unanswered after --timeout as a timeout: 10 s
# makes that mean "hung", not "slow on a loaded machine".
WRK_TIMEOUT=10s

# --- kernel IP on the accelerated side (kernel runs) ------------------------

KERNEL_IP_ON=0
kernel_ip_on() {
    A ip addr add "$AIP/24" dev "$VETH_A" || fail "cannot add $AIP to $VETH_A"
    KERNEL_IP_ON=1
    K ip neigh flush dev "$VETH_K"
}
kernel_ip_off() {
    ((KERNEL_IP_ON)) || return 0
    A ip addr del "$AIP/24" dev "$VETH_A" || log "warning: cannot remove $AIP from $VETH_A"
    KERNEL_IP_ON=0
    K ip neigh flush dev "$VETH_K"
}
# The lab may outlive the test (it was up before): never leave the kernel
# IP on $VETH_A, it would void every later accelerated test's bypass proof.
ngx_on_exit() {
    local rc=$?
    kernel_ip_off
    (exit "$rc")
    cleanup
}
trap ngx_on_exit EXIT

# --- nginx -------------------------------------------------------------------

# ngx_start NAME MODE CONF: start nginx (daemon off) as background program
# NAME, MODE accel (under accel-run) or kernel; its error log is
# $T/NAME.error.log (stderr too, so ACCEL_* messages land there).
ngx_start() {
    local name=$1 mode=$2 conf=$3 ns=A
    [[ $mode == accel ]] && ns=AX
    conns_mark
    bg_start "$name" "$ns" nginx -c "$conf" -p "$T" -e "$T/$name.error.log"
}

# ngx_signal CONF SIGNAL: `nginx -s SIGNAL` as an operator would type it,
# plain (it only reads the pid file and sends a signal).
ngx_signal() { A nginx -c "$1" -p "$T" -s "$2" 2>>"$T/ngx-signal.err"; }

# ngx_workers PID: the master's child processes, one per line, sorted as
# text (for comm).
ngx_workers() { pgrep -P "$1" | sort; }
ngx_nworkers() { pgrep -c -P "$1"; }

# ngx_procs_in_ns: pids of every nginx process in $NS_A.
ngx_procs_in_ns() {
    local p
    for p in $(ip netns pids "$NS_A" 2>/dev/null); do
        [[ $(cat "/proc/$p/comm" 2>/dev/null) == nginx ]] && echo "$p"
    done
}
no_ngx_in_ns() { [[ -z $(ngx_procs_in_ns) ]]; }

# ngx_gate DESC PID WORKERS ERRLOG: the master PID has WORKERS workers and
# answers GET /hello with 200. Otherwise record one failure with the
# evidence (worker count, curl's answer, the error log's last lines) and
# return 1: the caller skips the rest of that nginx's checks, which could
# only time out one by one.
ngx_gate() {
    local d=$1 pid=$2 w=$3 elog=$4 st
    busywait 5000 eval "[[ \$(ngx_nworkers $pid) -ge $w ]]"
    st=$(K curl -sS -m 10 -o /dev/null -w '%{http_code}' "http://$AIP/hello" 2>&1)
    if [[ $(ngx_nworkers "$pid") == "$w" && $st == 200 ]]; then
        pass "$d: $w workers, serving"
        return 0
    fi
    check_fail "$d: not serving: $(ngx_nworkers "$pid") workers (want $w), GET /hello: $st;" \
        "error log: $(tail -4 "$elog" 2>/dev/null | tr '\n' ' ')"
    return 1
}

# ngx_kill NAME: stop nginx NAME after a failure (SIGTERM, SIGKILL 5 s
# later), then any nginx process still in $NS_A (orphaned workers).
ngx_kill() {
    bg_stop "$1" TERM
    busywait 5000 no_ngx_in_ns || ngx_procs_in_ns | xargs -r kill -KILL
    busywait 5000 no_ngx_in_ns || log "warning: nginx processes survive SIGKILL: $(ngx_procs_in_ns | tr '\n' ' ')"
    # A killed accelerated process leaves its XDP program on the veth (as
    # `accel-lab up` does, remove it only when nothing runs in the netns).
    if [[ -z $(ip netns pids "$NS_A" 2>/dev/null) ]] &&
        ip -n "$NS_A" -d link show dev "$VETH_A" 2>/dev/null | grep -q 'prog/xdp'; then
        A ip link set dev "$VETH_A" xdp off && log "removed a leftover XDP program from $VETH_A"
    fi
}

# ngx_bad_log FILE: error log lines at alert level or worse, except the
# ones listed in $NGX_LOG_ALLOW (an ERE, e.g. the alert for a worker this
# test killed itself).
ngx_bad_log() {
    grep -E '\[(alert|crit|emerg)\]' "$1" 2>/dev/null |
        { if [[ -n ${NGX_LOG_ALLOW:-} ]]; then grep -Ev "$NGX_LOG_ALLOW"; else cat; fi; }
}

# ngx_quit_done NAME: after `nginx -s quit`, every nginx process of the
# namespace must be gone (30 s: a quit only waits for in-flight requests)
# and the master must exit 0; otherwise they are killed.
ngx_quit_done() {
    local pid
    pid=$(bg_pid "$1")
    if busywait 30000 no_ngx_in_ns; then
        pass "$1: no nginx process left after quit"
        wait "$pid" 2>/dev/null
        check_eq "$1: master exit status" "$?" 0
    else
        check_fail "$1: nginx processes left 30 s after quit: $(ngx_procs_in_ns | tr '\n' ' ')"
        ngx_kill "$1"
    fi
}

# ngx_quit_wait NAME CONF: graceful quit, then ngx_quit_done.
ngx_quit_wait() {
    check "$1: nginx -s quit accepted" ngx_signal "$2" quit
    ngx_quit_done "$1"
}

# --- wrk ---------------------------------------------------------------------

# wrk_get FILE FIELD: from wrk's report, FIELD one of requests, connect,
# read, write, timeout (socket errors), non2xx. Missing lines are 0, except
# requests (empty when wrk printed no report).
wrk_get() {
    local f=$1 k=$2
    case $k in
    requests) awk '/ requests in / {print $1}' "$f" ;;
    non2xx) awk -F': ' '/Non-2xx or 3xx responses/ {n=$2} END {print n+0}' "$f" ;;
    connect | read | write | timeout)
        sed -nE "s/.*Socket errors:.* $k ([0-9]+).*/\1/p" "$f" | awk '{n=$1} END {print n+0}'
        ;;
    esac
}

# wrk_summary FILE: one line for the logs.
wrk_summary() {
    echo "requests $(wrk_get "$1" requests) connect $(wrk_get "$1" connect)" \
        "read $(wrk_get "$1" read) write $(wrk_get "$1" write)" \
        "timeout $(wrk_get "$1" timeout) non2xx $(wrk_get "$1" non2xx)"
}

# wrk_clean DESC FILE MIN_REQUESTS: wrk completed at least MIN requests with
# no socket error of any kind and no non-2xx response.
wrk_clean() {
    local k
    log "$1: $(wrk_summary "$2")"
    check_ge "$1: requests" "$(wrk_get "$2" requests)" "$3"
    for k in connect read write timeout non2xx; do
        check_eq "$1: $k errors" "$(wrk_get "$2" "$k")" 0
    done
}

# --- connections left behind -------------------------------------------------

# client_conns_all: "STATE LOCAL" of the client side ($NS_K) of every
# connection to nginx that is not closed yet (any state but TIME-WAIT).
client_conns_all() {
    K ss -Htn state established state syn-sent state fin-wait-1 state fin-wait-2 \
        state close-wait state last-ack state closing "( dst $AIP and dport = :80 )" |
        awk '{print $1, $4}'
}

# conns_mark: the connections open now are not the next phase's (left by
# an earlier test or phase: a client in LAST-ACK whose server is gone
# retransmits its FIN for about 100 s). ngx_start and check_conns_closed
# mark; a phase's own leftovers fail its own check.
CONNS_BEFORE=" "
conns_mark() { CONNS_BEFORE=" $(client_conns_all | awk '{print $2}' | tr '\n' ' ')"; }

# client_conns_open: the connections not closed yet that are not marked,
# one "STATE count" a line.
client_conns_open() {
    client_conns_all | awk -v before="$CONNS_BEFORE" 'index(before, " " $2 " ") == 0 {print $1}' |
        sort | uniq -c | awk '{print $2, $1}'
}
no_client_conns_open() { [[ -z $(client_conns_open) ]]; }

# check_conns_closed DESC: once the clients have exited, every connection
# to nginx gets closed (on Linux at once: the client's FIN is answered
# by the server's close). A connection still open after 5 s was lost
# by the server: e.g. queued on a listener of a process that never accepts.
check_conns_closed() {
    if busywait 5000 no_client_conns_open; then
        pass "$1: no client connection left open"
    else
        check_fail "$1: client connections left open 5 s after the clients exited: $(client_conns_open | tr '\n' ' ')" \
            "(e.g. $(client_conns_all | awk -v before="$CONNS_BEFORE" \
                'index(before, " " $2 " ") == 0 && n++ < 3 {printf "%s %s; ", $1, $2}'))"
    fi
    conns_mark
}

# --- the upstream backend (kernel, in $NS_K) --------------------------------

BACKEND_PORT=8081
# backend_start: the python echo/upstream server on $KIP:$BACKEND_PORT;
# requests are logged to $T/backend.log (see nginx/backend.py).
backend_start() {
    : >"$T/backend.log"
    bg_start backend K "$PY" "$NGX_DIR/backend.py" "$KIP" "$BACKEND_PORT" "$T/backend.log"
    wait_tcp K "$KIP" "$BACKEND_PORT" || fail "backend did not start: $(tail -3 "$T/backend.err")"
}
