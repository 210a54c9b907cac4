#!/bin/bash
# Scenario: stock nginx with its stock process model (master creates the
# listeners and forks the workers; daemon off) under accel-run in the
# accelerated netns, through a matrix of configurations; clients (curl, wrk)
# and an upstream (nginx/backend.py, python http.server) on the kernel in
# the peer netns. NGX_MODE=kernel runs the same matrix with nginx on the
# kernel (validates the script; see nginx/lib.sh). NGX_CONFIGS="a c" runs
# only those configurations.
#
# Matrix (each option value appears at least once; the combinations put
# the risky ones with several workers: accept_mutex on, reuseport (one
# listener per worker), multi_accept, more workers than CPUs):
#
#   cfg  workers accept_mutex reuseport multi_accept sendfile nopush nodelay upstream-keepalive
#   a    auto    off          no        off          on       on     on      no
#   b    1       on           yes       on           off      off    off     yes
#   c    auto    on           no        on           off      on     off     yes
#   d    auto    off          yes       off          on       off    on      no
#   e    3       off          yes       on           on       on     off     yes
#
# Per configuration:
#   * the master has exactly the configured number of workers, and the same
#     ones at the end (none crashed and was replaced);
#   * keep-alive: 3 requests on one connection (curl num_connects 1 0 0, the
#     same X-Worker for all three); `Connection: close`: 2 requests, 2
#     connections, `Connection: close` in the response;
#   * a 20 MB static file (sendfile on or off) and a 1 MB range of it: status,
#     size and sha256;
#   * a 10 MB PUT (dav_methods PUT): 201, 204 when overwritten, the file on
#     disk and a GET of it have the right sha256;
#   * a 10 MB POST proxied to the backend and echoed back (request body from
#     nginx's temp file, response buffered through proxy_temp): sha256 of
#     the answer, and the backend logged the request (id, length, sha256);
#   * a proxied GET: body equal, backend logged it. In accel mode nginx's
#     upstream connections are accelerated *client* sockets (no kernel
#     address in the netns);
#   * wrk -c32 keep-alive and wrk -c32 `Connection: close` on a small page,
#     wrk -c8 on a proxied page: zero socket errors of any kind, no non-2xx;
#     every proxied request reached the backend; with upstream keepalive the
#     backend saw few connections (reuse); with >= 2 workers, more than one
#     worker pid appears in the access log (every worker with reuseport),
#     and only current worker pids; once the clients are gone, no client
#     connection is left open (a connection queued in a process that never
#     accepts it would be);
#   * no [alert]/[crit]/[emerg] in the error log; `nginx -s quit` leaves no
#     nginx process and the master exits 0.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
. "$(dirname "$(readlink -f "$0")")/nginx/lib.sh"
log "mode: $NGX_MODE, $NPROC CPUs"
[[ $NGX_MODE == kernel ]] && kernel_ip_on

mkdir -p "$T/www"
mkfile "$T/www/big.bin" 20000000
mkfile "$T/put.bin" 10000000
mkfile "$T/post.bin" 10000000
BIG_SHA=$(sha "$T/www/big.bin")
PUT_SHA=$(sha "$T/put.bin")
POST_SHA=$(sha "$T/post.bin")
tail -c +1000001 "$T/www/big.bin" | head -c 1000000 >"$T/range.want"
HELLO="hello from a worker ____________________________________________"
printf '%s\n' "$HELLO" >"$T/hello.want"
"$PY" "$NGX_DIR/backend.py" --body 100000 >"$T/up100000.want"
EMPTY_SHA=$(sha256sum </dev/null | cut -c1-64)
backend_start

# feat_conf NAME WORKERS ACCEPT_MUTEX REUSEPORT MULTI_ACCEPT SENDFILE NOPUSH
#           NODELAY UPSTREAM_KEEPALIVE (on|off each): writes $T/NAME.conf
feat_conf() {
    local n=$1 wp=$2 am=$3 rp=$4 ma=$5 sf=$6 np=$7 nd=$8 upka=$9
    local reuse="" upk="" uph=""
    [[ $rp == on ]] && reuse=" reuseport"
    if [[ $upka == on ]]; then
        upk="keepalive 8;"
        uph='proxy_http_version 1.1; proxy_set_header Connection "";'
    fi
    mkdir -p "$T/dav-$n"
    chmod 777 "$T/dav-$n" # the workers (not root) write the PUT files
    cat >"$T/$n.conf" <<NGX
daemon off; master_process on; worker_processes $wp;
pid $T/$n.pid; error_log $T/ngx-$n.error.log warn;
events { worker_connections 4096; accept_mutex $am; multi_accept $ma; }
http {
    log_format w '\$pid \$status \$request_method \$uri \$body_bytes_sent';
    access_log $T/$n.access.log w;
    sendfile $sf; tcp_nopush $np; tcp_nodelay $nd;
    keepalive_requests 1000000;
    client_body_temp_path $T/$n.body; proxy_temp_path $T/$n.proxy;
    fastcgi_temp_path $T/$n.fcgi; uwsgi_temp_path $T/$n.uwsgi;
    scgi_temp_path $T/$n.scgi;
    upstream backend { server $KIP:$BACKEND_PORT; $upk }
    server {
        listen $AIP:80 backlog=4096$reuse;
        root $T/www;
        add_header X-Worker \$pid always;
        location = /hello { default_type text/plain; return 200 "$HELLO\n"; }
        location /dav/ {
            alias $T/dav-$n/;
            dav_methods PUT; create_full_put_path on; client_max_body_size 20m;
        }
        location /up/ { proxy_pass http://backend; $uph }
        location = /echo { proxy_pass http://backend; client_max_body_size 20m; $uph }
    }
}
NGX
}

# backend_lines PATTERN: backend log lines matching the ERE.
backend_lines() { grep -cE "$1" "$T/backend.log"; }

# run_config NAME WORKERS ACCEPT_MUTEX REUSEPORT MULTI_ACCEPT SENDFILE NOPUSH
#            NODELAY UPSTREAM_KEEPALIVE
run_config() {
    local n=$1 wp=$2 am=$3 upka=$9 want_w pid workers0 out k
    want_w=$wp
    [[ $wp == auto ]] && want_w=$NPROC
    log "==== config $n: workers $wp accept_mutex $3 reuseport $4 multi_accept $5" \
        "sendfile $6 tcp_nopush $7 tcp_nodelay $8 upstream-keepalive $upka"
    feat_conf "$@"
    ngx_start "ngx-$n" "$NGX_MODE" "$T/$n.conf"
    pid=$(bg_pid "ngx-$n")
    wait_tcp K "$AIP" 80 30 || log "$n: nothing listens at $AIP:80 after 30 s"
    if ! ngx_gate "$n" "$pid" "$want_w" "$T/ngx-$n.error.log"; then
        ngx_kill "ngx-$n"
        return
    fi
    workers0=$(ngx_workers "$pid" | tr '\n' ' ')

    # keep-alive: 3 requests, one connection, one worker
    out=$(K curl -sS -m 20 -w '%{num_connects} %{http_code} %header{x-worker}\n' \
        -o "$T/$n.ka1" "http://$AIP/hello" -o "$T/$n.ka2" "http://$AIP/hello" \
        -o "$T/$n.ka3" "http://$AIP/hello")
    check_eq "$n: keep-alive curl exit status" "$?" 0
    check_eq "$n: keep-alive connections opened (1st 2nd 3rd)" \
        "$(awk '{printf "%s ", $1}' <<<"$out")" "1 0 0 "
    check_eq "$n: keep-alive statuses" "$(awk '{printf "%s ", $2}' <<<"$out")" "200 200 200 "
    check_eq "$n: keep-alive requests served by one worker" \
        "$(awk '{print $3}' <<<"$out" | sort -u | wc -l)" 1
    for k in 1 2 3; do check "$n: keep-alive body $k" cmp "$T/hello.want" "$T/$n.ka$k"; done

    # Connection: close: 2 requests, 2 connections
    out=$(K curl -sS -m 20 -H 'Connection: close' \
        -w '%{num_connects} %{http_code} %header{connection}\n' \
        -o "$T/$n.cl1" "http://$AIP/hello" -o "$T/$n.cl2" "http://$AIP/hello")
    check_eq "$n: Connection: close curl exit status" "$?" 0
    check_eq "$n: Connection: close (connects status header)" "$(tr '\n' ' ' <<<"$out")" \
        "1 200 close 1 200 close "
    check "$n: Connection: close body 1" cmp "$T/hello.want" "$T/$n.cl1"
    check "$n: Connection: close body 2" cmp "$T/hello.want" "$T/$n.cl2"

    # static file (sendfile $6) and a range of it
    out=$(K curl -sS -m 60 -w '%{http_code} %{size_download}' -o "$T/$n.big" "http://$AIP/big.bin")
    check_eq "$n: 20 MB GET status and size" "$out" "200 20000000"
    check_eq "$n: 20 MB GET sha256" "$(sha "$T/$n.big" 2>/dev/null)" "$BIG_SHA"
    out=$(K curl -sS -m 60 -r 1000000-1999999 -w '%{http_code}' -o "$T/$n.range" "http://$AIP/big.bin")
    check_eq "$n: range GET status" "$out" 206
    check "$n: range GET bytes 1000000-1999999" cmp "$T/range.want" "$T/$n.range"
    rm -f "$T/$n.big" "$T/$n.range"

    # 10 MB PUT stored by the dav module, then read back
    out=$(K curl -sS -m 60 -T "$T/put.bin" -w '%{http_code}' -o /dev/null "http://$AIP/dav/put.bin")
    check_eq "$n: 10 MB PUT status (created)" "$out" 201
    out=$(K curl -sS -m 60 -T "$T/put.bin" -w '%{http_code}' -o /dev/null "http://$AIP/dav/put.bin")
    check_eq "$n: 10 MB PUT again status (overwritten)" "$out" 204
    check_eq "$n: PUT file on disk sha256" "$(sha "$T/dav-$n/put.bin" 2>/dev/null)" "$PUT_SHA"
    out=$(K curl -sS -m 60 -w '%{http_code}' -o "$T/$n.put.got" "http://$AIP/dav/put.bin")
    check_eq "$n: GET of the PUT file status" "$out" 200
    check_eq "$n: GET of the PUT file sha256" "$(sha "$T/$n.put.got" 2>/dev/null)" "$PUT_SHA"
    rm -f "$T/$n.put.got" "$T/dav-$n/put.bin"

    # 10 MB POST echoed by the backend through nginx
    out=$(K curl -sS -m 60 --data-binary "@$T/post.bin" -H 'Content-Type: application/octet-stream' \
        -H "X-Req-Id: $n-post" -w '%{http_code}' -o "$T/$n.post.got" "http://$AIP/echo?c=$n")
    check_eq "$n: 10 MB POST through the upstream: status" "$out" 200
    check_eq "$n: 10 MB POST echoed sha256" "$(sha "$T/$n.post.got" 2>/dev/null)" "$POST_SHA"
    check_eq "$n: backend saw the 10 MB POST (length, sha256, id)" \
        "$(backend_lines "^POST /echo\?c=$n 10000000 $POST_SHA $n-post ")" 1
    rm -f "$T/$n.post.got"

    # proxied GET
    out=$(K curl -sS -m 30 -H "X-Req-Id: $n-get" -w '%{http_code}' -o "$T/$n.up.got" \
        "http://$AIP/up/100000?c=$n")
    check_eq "$n: proxied GET status" "$out" 200
    check "$n: proxied GET body" cmp "$T/up100000.want" "$T/$n.up.got"
    check_eq "$n: backend saw the proxied GET" \
        "$(backend_lines "^GET /up/100000\?c=$n 0 $EMPTY_SHA $n-get ")" 1

    check_conns_closed "$n: after the single requests"

    # load
    K timeout 60 wrk -t1 -c32 -d3s --timeout "$WRK_TIMEOUT" "http://$AIP/hello" >"$T/$n.wrk-ka" 2>&1
    check_eq "$n: wrk keep-alive exit status" "$?" 0
    wrk_clean "$n: wrk -c32 keep-alive" "$T/$n.wrk-ka" 1000
    check_conns_closed "$n: wrk -c32 keep-alive"
    K timeout 60 wrk -t1 -c32 -d3s --timeout "$WRK_TIMEOUT" -H 'Connection: close' \
        "http://$AIP/hello" >"$T/$n.wrk-close" 2>&1
    check_eq "$n: wrk Connection: close exit status" "$?" 0
    wrk_clean "$n: wrk -c32 Connection: close" "$T/$n.wrk-close" 500
    check_conns_closed "$n: wrk -c32 Connection: close"
    K timeout 60 wrk -t1 -c8 -d2s --timeout "$WRK_TIMEOUT" "http://$AIP/up/1000?c=$n-wrk" \
        >"$T/$n.wrk-up" 2>&1
    check_eq "$n: wrk proxied exit status" "$?" 0
    wrk_clean "$n: wrk -c8 proxied" "$T/$n.wrk-up" 100
    check_conns_closed "$n: wrk -c8 proxied"
    local reqs seen ports
    reqs=$(wrk_get "$T/$n.wrk-up" requests)
    seen=$(backend_lines "^GET /up/1000\?c=$n-wrk ")
    # wrk counts completed responses; the backend also logs the last
    # requests wrk gave up on when its time was over.
    check_ge "$n: backend saw every proxied wrk request" "$seen" "${reqs:-1}"
    if [[ $upka == on ]]; then
        ports=$(grep -E "^GET /up/1000\?c=$n-wrk " "$T/backend.log" | awk '{print $6}' | sort -u | wc -l)
        # keepalive 8 per worker, 8 client connections, upstream
        # keepalive_requests 1000: a few dozen connections at most.
        check_le "$n: upstream keepalive: backend connections for $seen requests" "$ports" $((seen / 10))
    fi
    if ((want_w >= 2)); then
        local pids stray min=2
        # With reuseport each worker has its own listener and the kernel
        # spreads connections over them by hash: every worker must serve.
        [[ $4 == on ]] && min=$want_w
        pids=$(awk '$3 == "GET" && $4 == "/hello" {print $1}' "$T/$n.access.log" | sort -u)
        check_ge "$n: workers that served /hello under wrk" "$(wc -w <<<"$pids")" "$min"
        stray=$(comm -23 <(tr ' ' '\n' <<<"$pids" | grep .) <(ngx_workers "$pid"))
        check_eq "$n: access log pids not among the workers" "$stray" ""
    fi

    check "$n: nginx master alive after the load" alive "$pid"
    check_eq "$n: same workers at the end (none replaced)" "$(ngx_workers "$pid" | tr '\n' ' ')" "$workers0"
    ngx_quit_wait "ngx-$n" "$T/$n.conf"
    check_eq "$n: no alert/crit/emerg in the error log" "$(ngx_bad_log "$T/ngx-$n.error.log")" ""
}

# NGX_CONFIGS="a c" runs only those configurations (default: all).
want_config() { [[ " ${NGX_CONFIGS:-a b c d e} " == *" $1 "* ]]; }
#                       name workers acc_mutex reuseport multi_acc sendfile nopush nodelay up_ka
want_config a && run_config a auto off off off on on on off
want_config b && run_config b 1 on on on off off off on
want_config c && run_config c auto on off on off on off on
want_config d && run_config d auto off on off on off on off
want_config e && run_config e 3 off on on on on off on
log "mode $NGX_MODE done"
finish
