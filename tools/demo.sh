#!/usr/bin/env bash
# demo.sh: the same stock nginx, on the kernel and under accel-run, over the
# same veth in the lab, loaded by kernel wrk from the peer namespace. Run as
# root (sudo tools/demo.sh); it runs tools/setup.sh first.
#
# nginx: stock process model (master + 1 worker), pinned to CPU 1, a `return 200`
# location (/hello) and a small static file (/index.html). wrk: pinned to
# CPU 0 in netns accel-k. The kernel run gives accel-a's veth the address
# 10.200.0.2/24 for its duration only; the accelerated run happens while
# accel-a has no kernel IP, so only the userspace stack can answer. Prints
# req/s, p50 and p99 for both and the ratio, then the accelerated process's
# ACCEL_STATS=1 summary (frames through the port). DEMO_SECONDS (default 5) sets each wrk run,
# DEMO_CONNECTIONS (default 32) wrk's connections; ACCEL_LAB_TAG runs the
# demo in a private lab (see accel-lab). DEMO_ACCEL_RUN names the accel-run
# to use (default: the one on PATH; /usr/bin/accel-run is the Debian
# package's) and DEMO_SETUP=0 skips tools/setup.sh (the package test,
# tests/integration/deb_package.sh, sets both).
set -u
set -o pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
SECS=${DEMO_SECONDS:-5}
CONNS=${DEMO_CONNECTIONS:-32}
ACCEL_RUN=${DEMO_ACCEL_RUN:-accel-run}
KIP=10.200.0.1
AIP=10.200.0.2
TAG=${ACCEL_LAB_TAG:-}
NS_A=accel-a$TAG
NS_K=accel-k$TAG
IF_A=veth-a$TAG
URLS=(/hello /index.html)

die() {
    echo "demo: error: $*" >&2
    exit 1
}
[[ $(id -u) -eq 0 ]] || die "must run as root (sudo $0)"

if [[ ${DEMO_SETUP:-1} != 0 ]]; then
    "$REPO/tools/setup.sh" || die "setup failed"
fi
command -v "$ACCEL_RUN" >/dev/null || die "$ACCEL_RUN not found (DEMO_ACCEL_RUN)"

W=$(mktemp -d /tmp/accel-demo.XXXXXX)
chmod 755 "$W"
NGINX_PID=
cleanup() {
    stop_nginx
    ip -n "$NS_A" addr del "$AIP/24" dev "$IF_A" >/dev/null 2>&1
    accel-lab down >/dev/null 2>&1
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stop_nginx() {
    [[ -n $NGINX_PID ]] || return 0
    kill -TERM "$NGINX_PID" 2>/dev/null
    for _ in $(seq 1 50); do
        kill -0 "$NGINX_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$NGINX_PID" 2>/dev/null; then
        echo "demo: nginx (pid $NGINX_PID) ignored SIGTERM for 5 s; killing it" >&2
        kill -KILL "$NGINX_PID" 2>/dev/null
    fi
    wait "$NGINX_PID" 2>/dev/null
    NGINX_PID=
}

echo "== the lab"
accel-lab down >/dev/null 2>&1
accel-lab up >"$W/lab.out" 2>&1 || die "accel-lab up failed: $(tail -3 "$W/lab.out")"
ACCEL_ENV=$(grep -o 'ACCEL_[A-Z0-9_]*=[^ "'"'"']*' "$W/lab.out" | sort -u | tr '\n' ' ')
accel-lab status | sed 's/^/  /'
echo "  accelerated environment: $ACCEL_ENV"

mkdir -p "$W/www"
head -c 612 /dev/zero | tr '\0' 'x' >"$W/www/index.html"
cat >"$W/nginx.conf" <<EOF
master_process on;
daemon off;
worker_processes 1;
pid $W/nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
    access_log off;
    server {
        listen $AIP:80;
        root $W/www;
        location = /hello { return 200 "hello from nginx\n"; }
    }
}
EOF

# start_nginx LOGFILE [PREFIX...]: nginx in accel-a pinned to CPU 1.
start_nginx() {
    local log=$1
    shift
    ip netns exec "$NS_A" "$@" taskset -c 1 nginx -c "$W/nginx.conf" -p "$W" >"$log" 2>&1 &
    NGINX_PID=$!
    for _ in $(seq 1 100); do
        if ip netns exec "$NS_K" curl -s -m 1 -o /dev/null "http://$AIP/hello"; then
            return 0
        fi
        kill -0 "$NGINX_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "demo: nginx did not answer on $AIP:80; its output:" >&2
    tail -n 20 "$log" | sed 's/^/  | /' >&2
    return 1
}

# bench MODE: check the responses, then one wrk run per URL.
bench() {
    local mode=$1 url body
    body=$(ip netns exec "$NS_K" curl -s -m 2 "http://$AIP/hello")
    [[ $body == "hello from nginx" ]] || die "$mode nginx answered '$body' on /hello"
    for url in "${URLS[@]}"; do
        ip netns exec "$NS_K" taskset -c 0 wrk -t1 -c"$CONNS" -d"${SECS}s" --latency \
            "http://$AIP$url" >"$W/wrk-$mode$(tr / _ <<<"$url").out" 2>&1 ||
            die "wrk against the $mode nginx failed: $(tail -2 "$W/wrk-$mode$(tr / _ <<<"$url").out")"
    done
}

echo "== kernel nginx (10.200.0.2 on $IF_A for this run only)"
ip -n "$NS_A" addr add "$AIP/24" dev "$IF_A" || die "cannot add $AIP to $IF_A"
start_nginx "$W/kernel.err" || die "kernel nginx did not start"
bench kernel
stop_nginx
ip -n "$NS_A" addr del "$AIP/24" dev "$IF_A" || die "cannot remove $AIP from $IF_A"
if ip -n "$NS_A" -4 addr show dev "$IF_A" | grep -q inet; then
    die "$IF_A still has a kernel IPv4 address"
fi

echo "== accelerated nginx ($IF_A has no kernel IP: only the userspace stack can answer)"
# shellcheck disable=SC2086
start_nginx "$W/accel.err" env -u ACCEL_LAB_TAG $ACCEL_ENV ACCEL_STATS=1 "$ACCEL_RUN" ||
    die "accelerated nginx did not start"
bench accel
# What accel-stat (installed next to accel-run) shows while nginx runs.
STAT=$(dirname "$(command -v "$ACCEL_RUN")")/accel-stat
[[ -x $STAT ]] && "$STAT" >"$W/stat.txt" 2>&1
stop_nginx

# wrk's numbers: req/s, and p50/p99 converted to microseconds.
rps() { awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$1"; }
pct() {
    awk -v p="$2%" '$1 == p {
        v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
        m = (u == "us") ? 1 : (u == "ms") ? 1000 : (u == "s") ? 1000000 : 0
        printf "%.0f", v * m
    }' "$1"
}
errors() { awk '/Socket errors|Non-2xx/ {print}' "$1" | tr -s ' ' | paste -sd';'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }

echo
echo "== results: nginx (master + 1 worker, CPU 1) <- wrk -t1 -c$CONNS -d${SECS}s (CPU 0), same veth"
printf '%-12s %-8s %12s %12s %14s\n' url metric kernel accel accel/kernel
for url in "${URLS[@]}"; do
    k=$W/wrk-kernel$(tr / _ <<<"$url").out
    a=$W/wrk-accel$(tr / _ <<<"$url").out
    printf '%-12s %-8s %12s %12s %14s\n' "$url" req/s "$(rps "$k")" "$(rps "$a")" "$(ratio "$(rps "$a")" "$(rps "$k")")"
    for p in 50 99; do
        printf '%-12s %-8s %10sus %10sus %14s\n' "" "p$p" "$(pct "$k" $p)" "$(pct "$a" $p)" \
            "$(ratio "$(pct "$a" $p)" "$(pct "$k" $p)")"
    done
    for m in kernel accel; do
        e=$(errors "$W/wrk-$m$(tr / _ <<<"$url").out")
        [[ -z $e ]] || echo "  note: $m run: $e"
    done
done

if [[ -s $W/stat.txt ]]; then
    echo
    echo "== accel-stat while the accelerated nginx ran (accel-stat PID, -t, -w 1: more)"
    sed 's/^/  /' "$W/stat.txt"
fi

echo
echo "== evidence of the bypass: the accelerated nginx's ACCEL_STATS=1 summary"
if grep -q 'stats: frames in [1-9]' "$W/accel.err"; then
    sed 's/^/  /' "$W/accel.err"
else
    echo "  (no counters in the accelerated nginx's stderr; its output was:)"
    sed 's/^/  | /' "$W/accel.err"
    exit 1
fi
