#!/bin/sh
# What N idle connections cost the stack (conn_scale_bench.c): bytes per
# connection, the timers' wall time per second with all of them idle, and
# the handshake, segment and close costs, with lwIP's TCP timers walking
# only the connections with something timed (the default, stack/tcp_tick.c)
# and walking every connection as lwIP does (-DACCEL_TICK_LIST=OFF).
#
#   bench/stack/scale.sh [--out DIR] [N...]    (default N: 1000 100000 1000000)
#
# Configures and builds two trees next to the source if they are missing
# (build-bench-tick: default; build-bench-walk: -DACCEL_TICK_LIST=OFF; or
# existing ones named by BENCH_TICK_BUILD / BENCH_WALK_BUILD). One process
# per N and variant (lwIP's lists are global). Native timings on a shared
# 2-vCPU VM: indicative; bytes per connection and the walk's length are
# exact. A million connections take about 2.5 GB per process. Writes a
# markdown table to stdout and to DIR/conn-scale-<date>.md (DIR defaults
# to bench/results). Needs cmake and ninja; no root.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
out="$src/bench/results"
while [ $# -gt 0 ]; do
    case "$1" in
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    --*) echo "unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || set -- 1000 100000 1000000

. "$here/build.sh"
tick_dir=${BENCH_TICK_BUILD:-$src/build-bench-tick}
walk_dir=${BENCH_WALK_BUILD:-$src/build-bench-walk}
bench_stack_build "$src" "$tick_dir" conn_scale_bench -DACCEL_TICK_LIST=ON
bench_stack_build "$src" "$walk_dir" conn_scale_bench -DACCEL_TICK_LIST=OFF

field() { # line, key
    echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

date=$(date +%Y%m%d-%H%M%S)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
    echo "# Idle connections in the stack ($date)"
    echo
    echo "bench/stack/conn_scale_bench on a fake netif with a virtual clock"
    echo "(no DPDK): N connections opened from 172.16.0.0/12 (32768 ports per"
    echo "address), a 64-byte request and a 128-byte answer on each, then idle."
    echo "commit $(git -C "$src" rev-parse --short HEAD)$(git -C "$src" diff --quiet || echo ' (uncommitted changes)'),"
    echo "$(nproc) CPUs, $(uname -r). Timers: wall time of one virtual"
    echo "second of timer turns (stk_timers every ms) with every connection"
    echo "idle; walked: connections lwIP's 100/200 ms TCP timers visit per"
    echo "tick. tick list = the default (stack/tcp_tick.c); lwIP walk ="
    echo "-DACCEL_TICK_LIST=OFF."
    echo
    echo "| N | timers | bytes/conn | timers per s | walked per tick | handshake+accept | segment | close | bytes left |"
    echo "|---|---|---|---|---|---|---|---|---|"
} >"$tmp"
for n in "$@"; do
    for v in tick walk; do
        if [ $v = tick ]; then b=$tick_dir; name="tick list"; else b=$walk_dir; name="lwIP walk"; fi
        line=$("$b/bench/stack/conn_scale_bench" "$n")
        walked=$(field "$line" tick_listed)
        [ $v = walk ] && walked=$n
        printf '| %s | %s | %s | %s us | %s | %s ns | %s ns | %s ns | %s |\n' \
            "$n" "$name" "$(field "$line" bytes_per_conn)" \
            "$(($(field "$line" tick_ns) / 1000))" "$walked" \
            "$(field "$line" setup_ns)" "$(field "$line" segment_ns)" \
            "$(field "$line" close_ns)" "$(field "$line" bytes_left)" >>"$tmp"
    done
done
mkdir -p "$out"
cp "$tmp" "$out/conn-scale-$date.md"
cat "$tmp"
echo "written: $out/conn-scale-$date.md" >&2
