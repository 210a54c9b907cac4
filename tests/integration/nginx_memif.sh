#!/bin/bash
# Scenario: stock nginx (master + 2 workers, its stock process model) under
# accel-run on a memif port in the loopback-only memif netns, clients
# accelerated on the other end of the memif (topology B). The peer connects
# only after the workers were forked, and every client is a new process, so
# each round is a new memif connection whose shared memory the master's
# EAL thread maps: the workers must follow it (runtime/share_memif.c).
#
# Five rounds, each a new client process connecting over memif:
#   * curl GET /hello: 200, the body, answered by a current worker
#     (X-Worker);
#   * wrk -c8 for 2 s: requests done, no socket error, no non-2xx;
# three with the first workers (both must have answered, access log pids;
# none replaced), one after `nginx -s reload` (new workers forked while a
# connection was up), one after kill -9 of a worker (its replacement);
# then no alert in the error log but the kill's, `nginx -s quit` ends every
# process and the master exits 0. Before memif ports were shared across
# fork, the workers saw EBADF on the listeners and nothing was served.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
lab_has_memif_ns || fail "lab has no netns $NS_M"

SOCK=$T/memif.sock
SRV_ENV=(ACCEL_STATS=2 "ACCEL_VDEV=net_memif0,role=server,socket=$SOCK" "ACCEL_IP=$MIP_SRV/24")
CLI_ENV=("ACCEL_VDEV=net_memif0,role=client,socket=$SOCK" "ACCEL_IP=$MIP_CLI/24")
CONF=$T/ngx.conf
cat >"$CONF" <<NGX
daemon off; worker_processes 2;
pid $T/ngx.pid; error_log $T/ngx.error.log warn;
events { worker_connections 1024; }
http {
    log_format w '\$pid';
    access_log $T/access.log w;
    client_body_temp_path $T/body; proxy_temp_path $T/proxy;
    fastcgi_temp_path $T/fcgi; uwsgi_temp_path $T/uwsgi; scgi_temp_path $T/scgi;
    server {
        listen $MIP_SRV:80;
        location = /hello {
            default_type text/plain;
            add_header X-Worker \$pid;
            return 200 "hello from nginx\n";
        }
    }
}
NGX

bg_start ngx MX "${SRV_ENV[@]}" nginx -c "$CONF" -p "$T" -e "$T/ngx.err"
MASTER=$(bg_pid ngx)
slowwait 20 memif_listening "$SOCK" || fail "the memif server never listened on $SOCK: $(tail -3 "$T/ngx.err")"
busywait 5000 eval "[[ \$(pgrep -c -P $MASTER) -ge 2 ]]"
WORKERS=$(pgrep -P "$MASTER" | sort | tr '\n' ' ')
check_eq "master's workers" "$(wc -w <<<"$WORKERS")" 2

# round N: a new client process (a new memif connection): curl answered by
# one of $WORKERS, then wrk -c8 for 2 s without errors.
ok_rounds=0
round() {
    local r=$1 w n errs non2xx
    MX "${CLI_ENV[@]}" curl -sS -m 10 -D "$T/h$r" -o "$T/b$r" "http://$MIP_SRV/hello" \
        2>"$T/curl$r.err"
    check_eq "round $r: curl exit status" "$?" 0
    check_eq "round $r: body" "$(cat "$T/b$r" 2>/dev/null)" "hello from nginx"
    w=$(tr -d '\r' <"$T/h$r" 2>/dev/null | awk -F': ' 'tolower($1) == "x-worker" {print $2}')
    if [[ -n $w && " $WORKERS " == *" $w "* ]]; then
        pass "round $r: answered by worker $w"
    else
        check_fail "round $r: X-Worker '$w' is not one of the workers ($WORKERS); curl: $(tail -2 "$T/curl$r.err" | tr '\n' ' ')"
    fi
    MX "${CLI_ENV[@]}" wrk -t1 -c8 -d2s --timeout 10s "http://$MIP_SRV/hello" >"$T/wrk$r" 2>&1
    n=$(awk '/ requests in / {print $1}' "$T/wrk$r")
    errs=$(sed -nE 's/.*Socket errors: (.*)/\1/p' "$T/wrk$r")
    non2xx=$(awk -F': ' '/Non-2xx/ {print $2}' "$T/wrk$r")
    log "round $r: wrk ${n:-no report} requests; socket errors: ${errs:-none}; non-2xx: ${non2xx:-0}"
    check_ge "round $r: wrk requests" "${n:-0}" 100
    check_eq "round $r: wrk socket errors" "${errs:-none}" none
    check_eq "round $r: wrk non-2xx" "${non2xx:-0}" 0
    [[ ${n:-0} -ge 100 && -z $errs ]] && ok_rounds=$((ok_rounds + 1))
}
for r in 1 2 3; do round "$r"; done

served=$(sort -u "$T/access.log" 2>/dev/null | tr '\n' ' ')
log "pids in the access log: $served (workers: $WORKERS)"
for w in $WORKERS; do
    check "worker $w served requests" grep -qx "$w" "$T/access.log"
done
check "the master served nothing itself" bash -c "! grep -qx $MASTER $T/access.log"
check_eq "the same workers after 3 rounds" "$(pgrep -P "$MASTER" | sort | tr '\n' ' ')" "$WORKERS"

# Workers forked while a memif connection is up: a reload (new workers),
# then a worker killed (the master forks a replacement).
OLD=$WORKERS
M nginx -c "$CONF" -p "$T" -s reload 2>>"$T/signal.err"
new_workers() { local c; c=$(pgrep -P "$MASTER" | sort | tr '\n' ' '); [[ $(wc -w <<<"$c") == 2 && -z $(comm -12 <(tr ' ' '\n' <<<"$OLD" | sed '/^$/d') <(tr ' ' '\n' <<<"$c" | sed '/^$/d')) ]]; }
busywait 20000 new_workers || check_fail "reload: the old workers did not all leave: $(pgrep -P "$MASTER" | tr '\n' ' ') (old: $OLD)"
WORKERS=$(pgrep -P "$MASTER" | sort | tr '\n' ' ')
log "after reload: workers $WORKERS"
round 4
victim=$(awk '{print $1}' <<<"$WORKERS")
kill -KILL "$victim"
OLD=$victim
respawned() { local c; c=$(pgrep -P "$MASTER" | sort | tr '\n' ' '); [[ $(wc -w <<<"$c") == 2 && " $c " != *" $victim "* ]]; }
busywait 10000 respawned || check_fail "no new worker after kill -9 of $victim: $(pgrep -P "$MASTER" | tr '\n' ' ')"
WORKERS=$(pgrep -P "$MASTER" | sort | tr '\n' ' ')
log "after kill -9 of $victim: workers $WORKERS"
round 5
check_eq "rounds fully served" "$ok_rounds" 5
for w in $WORKERS; do
    check "current worker $w served requests" grep -qx "$w" "$T/access.log"
done
bad=$(grep -E '\[(alert|crit|emerg)\]' "$T/ngx.error.log" "$T/ngx.err" 2>/dev/null |
    grep -v "worker process $victim exited on signal 9" | head -3)
check_eq "no alert in nginx's logs" "$bad" ""

M nginx -c "$CONF" -p "$T" -s quit 2>>"$T/signal.err"
if busywait 30000 dead "$MASTER"; then
    wait "$MASTER" 2>/dev/null
    check_eq "master exit status after quit" "$?" 0
else
    check_fail "nginx still running 30 s after quit"
    bg_stop ngx KILL
fi
for w in $WORKERS; do
    check "worker $w gone" dead "$w"
done
finish
