#!/bin/bash
# Scenario: stock nginx with its default process model, as Debian's
# service starts it: `daemon on` (the default: the process that opened the
# listening socket, and so started the data path, forks the master and
# exits at once), master + 2 workers, and the default `user` (as root:
# nobody), so the workers give up root. The other nginx tests use
# `daemon off`; here nothing in the config departs from nginx's defaults
# but the paths and the worker count. Clients run on the kernel in the
# peer netns (NGX_MODE=kernel runs the same script with nginx on the
# kernel, see nginx/lib.sh).
#
# Checks: the start command returns 0 and the master it leaves behind has
# 2 workers running as nobody; 20 requests on new connections and a
# wrk -c16 keep-alive run are all answered 200 with no socket error; after
# `nginx -s reload` new workers serve; the error log has no alert (a worker
# that crashes is logged "exited on signal 11" there: the daemon's parent
# used to close the port under the master at its exit); `nginx -s quit`
# leaves no nginx process.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
. "$(dirname "$(readlink -f "$0")")/nginx/lib.sh"

W=2
HELLO="hello from a daemon's worker"
CONF=$T/daemon.conf
ELOG=$T/ngx-daemon.error.log

# daemon_conf GEN: the config, generation GEN (X-Gen header).
daemon_conf() {
    cat >"$CONF.new" <<NGX
worker_processes $W;
pid $T/daemon.pid; error_log $ELOG notice;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $T/body; proxy_temp_path $T/proxy;
    fastcgi_temp_path $T/fcgi; uwsgi_temp_path $T/uwsgi; scgi_temp_path $T/scgi;
    server {
        listen $AIP:80;
        add_header X-Gen $1 always;
        location = /hello { default_type text/plain; return 200 "$HELLO\n"; }
    }
}
NGX
    mv -f "$CONF.new" "$CONF"
}

# requests N: N requests on N connections; "body|status|gen" a line.
requests() {
    local i
    for ((i = 0; i < $1; i++)); do
        K curl -sS -m 10 -H 'Connection: close' -w '|%{http_code}|%header{x-gen}' \
            "http://$AIP/hello" 2>&1 | tr -d '\n'
        echo
    done
}

master_pid() { cat "$T/daemon.pid" 2>/dev/null; }

[[ $NGX_MODE == kernel ]] && kernel_ip_on
daemon_conf 0
conns_mark
if [[ $NGX_MODE == accel ]]; then
    AX nginx -c "$CONF" -p "$T" >"$T/start.out" 2>&1
else
    A nginx -c "$CONF" -p "$T" >"$T/start.out" 2>&1
fi
check_eq "nginx (daemon on) start command exit status" "$?" 0
slowwait 20 eval '[[ -n $(master_pid) ]]'
pid=$(master_pid)
[[ -n $pid ]] || fail "no pid file: $(tail -3 "$ELOG" "$T/start.out" 2>/dev/null | tr '\n' ' ')"
check "the master ($pid) runs after its parent left" alive "$pid"
wait_tcp K "$AIP" 80 30 || log "nothing listens at $AIP:80 after 30 s"
if ngx_gate "daemon: started" "$pid" "$W" "$ELOG"; then
    check_eq "the workers run as nobody" \
        "$(ngx_workers "$pid" | xargs -r -n1 ps -o user= -p | sort -u)" nobody

    requests 20 >"$T/first.txt"
    check_eq "20 requests on new connections: 200 from generation 0" \
        "$(sort "$T/first.txt" | uniq -c | awk '{$1 = $1; print}')" "20 $HELLO|200|0"

    K timeout 60 wrk -t1 -c16 -d3s --timeout "$WRK_TIMEOUT" "http://$AIP/hello" >"$T/wrk.out" 2>&1
    check_eq "wrk exit status" "$?" 0
    wrk_clean "wrk -c16 keep-alive, 3 s" "$T/wrk.out" 500

    w0=$(ngx_workers "$pid")
    daemon_conf 1
    check "nginx -s reload accepted" ngx_signal "$CONF" reload
    busywait 30000 eval '[[ -z $(comm -12 <(echo "$w0") <(ngx_workers "$pid")) ]]'
    busywait 10000 eval "[[ \$(ngx_nworkers $pid) -eq $W ]]"
    check_eq "workers after the reload: all new, $W of them" \
        "$(comm -12 <(echo "$w0") <(ngx_workers "$pid")) $(ngx_nworkers "$pid")" " $W"
    requests 10 >"$T/after.txt"
    check_eq "10 requests after the reload: 200 from generation 1" \
        "$(sort "$T/after.txt" | uniq -c | awk '{$1 = $1; print}')" "10 $HELLO|200|1"
fi
check_eq "error log: alerts or worse" "$(ngx_bad_log "$ELOG")" ""

check "nginx -s quit accepted" ngx_signal "$CONF" quit
if busywait 30000 no_ngx_in_ns; then
    pass "no nginx process left after quit"
else
    check_fail "nginx processes left 30 s after quit: $(ngx_procs_in_ns | tr '\n' ' ')"
    ngx_procs_in_ns | xargs -r kill -KILL
fi
check_conns_closed "daemon run"
finish
