#!/bin/bash
# Scenario: a port with several queues, each process owning one (DESIGN.md
# §8, "Several queues"). Stock nginx (master + workers) under accel-run with
# ACCEL_QUEUES=2 on the lab's veth: af_xdp refuses more than one queue on
# veth, so accel-run falls back to af_packet, whose two sockets form a
# PACKET_FANOUT_HASH group: the kernel spreads the flows over the two
# queues as a NIC's RSS would. Clients and the upstream backend run on the
# kernel in the peer netns.
#
# Checks, with 2 workers:
#   * the port came up as "af_packet ..., 2 queues" after af_xdp refused;
#   * each worker took a different queue as its own;
#   * wrk -c32 keep-alive and `Connection: close`, and wrk -c8 on a proxied
#     page (nginx's upstream connections are accelerated client sockets,
#     whose replies may come in on the other worker's queue): no socket
#     error, no non-2xx; both workers in the access log; every proxied
#     request reached the backend;
#   * kill -9 of a worker: its queue is released, the worker the master
#     starts takes it, and both queues serve again;
#   * 3 x `nginx -s reload` under a `Connection: close` wrk: no error; once
#     the old workers have left, the new ones own the two queues and serve;
#   * at quit, from the ACCEL_STATS dumps: each worker received most of its
#     frames on its own queue with no port lock (share_fast_local at least
#     half its rx_frames), frames handed between the workers stay few, and
#     the port's per-queue counters show traffic on both queues.
# With 1 worker and 2 queues: the worker owns one queue and also polls the
# one nobody owns: wrk is clean and both queues received.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
. "$(dirname "$(readlink -f "$0")")/nginx/lib.sh"
[[ $NGX_MODE == accel ]] || fail "this test is about accel's queues only"
mkdir -p "$T/www"
echo "a small page $RANDOM$RANDOM" >"$T/www/small.html"
backend_start
"$PY" "$NGX_DIR/backend.py" --body 100000 >"$T/up.want"

# q_conf NAME WORKERS: nginx with WORKERS workers, access log "$pid $uri".
q_conf() {
    cat >"$T/$1.conf" <<NGX
daemon off; master_process on; worker_processes $2;
pid $T/$1.pid; error_log $T/$1.error.log warn;
events { worker_connections 4096; }
http {
    log_format w '\$pid \$status \$uri';
    access_log $T/$1.access.log w;
    keepalive_requests 1000000;
    client_body_temp_path $T/$1.body; proxy_temp_path $T/$1.proxy;
    fastcgi_temp_path $T/$1.fcgi; uwsgi_temp_path $T/$1.uwsgi;
    scgi_temp_path $T/$1.scgi;
    server {
        listen $AIP:80 backlog=4096;
        root $T/www;
        location = /hello { default_type text/plain; return 200 "hello\n"; }
        location /up/ { proxy_pass http://$KIP:$BACKEND_PORT; }
    }
}
NGX
}

# q_start NAME: nginx under accel-run with 2 queues (driver auto).
q_start() {
    bg_start "$1" AX ACCEL_QUEUES=2 ACCEL_DRIVER=auto ACCEL_STATS=2 ACCEL_LOG_LEVEL=info \
        nginx -c "$T/$1.conf" -p "$T" -e "$T/$1.error.log"
}

# owner_of Q ERRLOG: pids that logged taking queue Q, one per line.
owner_of() { sed -nE "s/^accel\[([0-9]+):[0-9]+\] info share: queue $1 of 2 is this process's.*/\1/p" "$2"; }

# wstat ERRLOG PID NAME: counter NAME in PID's ACCEL_STATS dump.
wstat() { sed -nE "s/^accel\[$2\] stats: $3 +([0-9]+)$/\1/p" "$1" | tail -1; }

wrk_run() { # NAME ARGS...: wrk from the kernel side, report in $T/NAME.txt
    local n=$1
    shift
    K timeout 60 wrk -t1 --timeout "$WRK_TIMEOUT" "$@" >"$T/$n.txt" 2>&1
    check_eq "$n: wrk exit status" "$?" 0
}

# ---- 2 workers, 2 queues -----------------------------------------------------
q_conf two 2
q_start two
pid=$(bg_pid two)
E=$T/two.error.log
if ngx_gate "2 workers, 2 queues" "$pid" 2 "$E"; then
    check "port: af_xdp refused 2 queues on veth, af_packet took them" \
        grep -q "data path up: af_packet on $VETH_A, 2 queues" "$T/two.err" "$E"
    busywait 5000 eval '[[ -n $(owner_of 0 "$E") && -n $(owner_of 1 "$E") ]]'
    w0=$(owner_of 0 "$E" | tail -1)
    w1=$(owner_of 1 "$E" | tail -1)
    workers=$(ngx_workers "$pid" | tr '\n' ' ')
    log "workers: $workers; queue 0: $w0, queue 1: $w1"
    check "queue 0 taken by a worker" grep -qw "$w0" <<<"$workers"
    check "queue 1 taken by a worker" grep -qw "$w1" <<<"$workers"
    check "the queues have different owners" test "$w0" != "$w1"

    wrk_run ka -c32 -d4s "http://$AIP/hello"
    wrk_clean "keep-alive c32" "$T/ka.txt" 1000
    wrk_run close -c32 -d3s -H 'Connection: close' "http://$AIP/hello"
    wrk_clean "Connection: close c32" "$T/close.txt" 500
    K curl -sS -m 10 -o "$T/up.got" "http://$AIP/up/100000"
    check "proxied GET: body equal" cmp "$T/up.want" "$T/up.got"
    : >"$T/backend.log"
    wrk_run up -c8 -d3s "http://$AIP/up/1000"
    wrk_clean "proxied c8" "$T/up.txt" 100
    # wrk counts completed responses; the backend may also log the last
    # requests wrk gave up on when its time was over.
    check_ge "every proxied request wrk completed reached the backend" \
        "$(grep -c '^GET /up/1000 ' "$T/backend.log")" "$(wrk_get "$T/up.txt" requests)"
    for w in $w0 $w1; do
        check_ge "worker $w served requests" "$(grep -c "^$w 200 /hello" "$T/two.access.log")" 100
    done

    log "kill -9 of the worker on queue 1 ($w1)"
    kill -KILL "$w1"
    busywait 10000 eval "[[ -n \$(owner_of 1 '$E' | grep -vx '$w1') ]]"
    w1b=$(owner_of 1 "$E" | grep -vx "$w1" | tail -1)
    check "a new worker took queue 1" grep -qw "${w1b:-none}" <<<"$(ngx_workers "$pid")"
    : >"$T/two.access.log"
    wrk_run after -c32 -d3s "http://$AIP/hello"
    wrk_clean "keep-alive c32 after the kill" "$T/after.txt" 1000
    for w in $w0 ${w1b:-none}; do
        check_ge "worker $w served after the kill" "$(grep -c "^$w 200 /hello" "$T/two.access.log")" 100
    done
    check_conns_closed "2 queues"

    log "3 x nginx -s reload under wrk (Connection: close)"
    bg_start rl K timeout 60 wrk -t1 -c16 -d7s --timeout "$WRK_TIMEOUT" -H 'Connection: close' \
        "http://$AIP/hello"
    sleep 1
    for i in 1 2 3; do
        check "reload $i accepted" ngx_signal "$T/two.conf" reload
        sleep 1.5
    done
    wait "$(bg_pid rl)"
    check_eq "reload wrk: exit status" "$?" 0
    wrk_clean "Connection: close c16 during 3 reloads" "$T/rl.out" 500
    # The old workers leave once their connections are done; the new ones
    # take the queues they release.
    cur_owners() {
        local q o ws
        ws=$(ngx_workers "$pid" | tr '\n' ' ')
        for q in 0 1; do
            o=$(owner_of $q "$E" | tail -1)
            grep -qw "${o:-none}" <<<"$ws" || return 1
        done
        [[ $(owner_of 0 "$E" | tail -1) != $(owner_of 1 "$E" | tail -1) ]]
    }
    if busywait 15000 cur_owners; then
        pass "after the reloads, each queue is owned by a different current worker"
    else
        check_fail "after the reloads: workers $(ngx_workers "$pid" | tr '\n' ' '), queue 0 last" \
            "taken by $(owner_of 0 "$E" | tail -1), queue 1 by $(owner_of 1 "$E" | tail -1)"
    fi
    : >"$T/two.access.log"
    wrk_run afterrl -c32 -d3s "http://$AIP/hello"
    wrk_clean "keep-alive c32 after the reloads" "$T/afterrl.txt" 1000
    for w in $(ngx_workers "$pid"); do
        check_ge "worker $w (after the reloads) served" "$(grep -c "^$w 200 /hello" "$T/two.access.log")" 100
    done

    NGX_LOG_ALLOW="exited on signal 9"
    check_eq "no alert in the error log" "$(ngx_bad_log "$E" | head -3)" ""
    ngx_quit_wait two "$T/two.conf"
    for w in $w0 ${w1b:-none}; do
        rx=$(wstat "$E" "$w" rx_frames)
        fast=$(wstat "$E" "$w" share_fast_local)
        handed=$(wstat "$E" "$w" share_handed)
        log "worker $w: rx_frames ${rx:-?} share_fast_local ${fast:-?} share_handed ${handed:-?}"
        check_ge "worker $w: frames received on its queue" "${rx:-0}" 5000
        check_ge "worker $w: own segments input without the port lock (x2 >= rx)" \
            $((${fast:-0} * 2)) "${rx:-1}"
        check_le "worker $w: frames handed to another process (x20 <= rx)" \
            $((${handed:-0} * 20)) "${rx:-0}"
    done
    check_ge "port: queue 0 received" "$(stat_get "$E" port_x_rx_q0_packets)" 5000
    check_ge "port: queue 1 received" "$(stat_get "$E" port_x_rx_q1_packets)" 5000
else
    ngx_kill two
fi

# ---- 1 worker, 2 queues: the queue nobody owns is polled too -----------------
q_conf one 1
q_start one
pid=$(bg_pid one)
E=$T/one.error.log
if ngx_gate "1 worker, 2 queues" "$pid" 1 "$E"; then
    wrk_run one -c32 -d3s "http://$AIP/hello"
    wrk_clean "1 worker: keep-alive c32" "$T/one.txt" 1000
    wrk_run oneclose -c16 -d2s -H 'Connection: close' "http://$AIP/hello"
    wrk_clean "1 worker: Connection: close c16" "$T/oneclose.txt" 200
    ngx_quit_wait one "$T/one.conf"
    check_ge "1 worker: queue 0 received" "$(stat_get "$E" port_x_rx_q0_packets)" 1000
    check_ge "1 worker: queue 1 received" "$(stat_get "$E" port_x_rx_q1_packets)" 1000
else
    ngx_kill one
fi
finish
