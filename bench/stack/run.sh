#!/bin/sh
# TCP demultiplexing cost per segment, hashed PCB lookup vs lwIP's list
# walk, at N established connections (see pcb_lookup_bench.c).
#
#   bench/stack/run.sh [--segments M] [--out DIR] [N...]    (default N: 16 256 4096)
#
# Configures and builds two trees next to the source if they are missing
# (build-bench-hash: default; build-bench-list: -DACCEL_PCB_HASH=OFF; or
# existing ones named by BENCH_HASH_BUILD / BENCH_LIST_BUILD),
# then for each N runs the benchmark under callgrind (instructions in
# stk_input per segment: repeatable, independent of machine load) and
# natively (ns per segment: indicative only, noisy on a shared machine).
# Writes a markdown table to stdout and to DIR/pcb-lookup-<date>.md
# (DIR defaults to bench/results). Needs cmake, ninja and valgrind; no root.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
segments=20000
out="$src/bench/results"
while [ $# -gt 0 ]; do
    case "$1" in
    --segments) segments=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    --*) echo "unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || set -- 16 256 4096

. "$here/build.sh"
hash_dir=${BENCH_HASH_BUILD:-$src/build-bench-hash}
list_dir=${BENCH_LIST_BUILD:-$src/build-bench-list}
bench_stack_build "$src" "$hash_dir" pcb_lookup_bench -DACCEL_PCB_HASH=ON
bench_stack_build "$src" "$list_dir" pcb_lookup_bench -DACCEL_PCB_HASH=OFF
bin() { # variant
    if [ "$1" = hash ]; then echo "$hash_dir/bench/stack/pcb_lookup_bench"
    else echo "$list_dir/bench/stack/pcb_lookup_bench"; fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Instructions per segment: callgrind counts only inside deliver_batch.
ir_per_segment() { # variant, N
    valgrind --tool=callgrind --toggle-collect=deliver_batch \
        --callgrind-out-file="$tmp/cg" \
        "$(bin "$1")" -s "$segments" "$2" \
        >/dev/null 2>"$tmp/log"
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/log")
    echo $((ir / segments))
}

ns_per_segment() { # variant, N: best of 3 native runs
    best=
    for _ in 1 2 3; do
        t=$("$(bin "$1")" -s $((segments * 10)) "$2" |
            sed -n 's/.*ns_per_segment=//p')
        best=$(printf '%s\n%s\n' "${best:-$t}" "$t" | sort -g | head -n1)
    done
    echo "$best"
}

date=$(date +%Y-%m-%d)
report="$tmp/report.md"
{
    echo "# TCP PCB lookup: hashed vs lwIP list walk ($date)"
    echo
    echo "Cost of one 64-byte data segment in stk_input (Ethernet, IP, PCB"
    echo "lookup, TCP receive, socket queue, an ACK every second segment) to a"
    echo "random one of N established connections; $segments segments under"
    echo "callgrind, $((segments * 10)) natively (best of 3). $(uname -m),"
    echo "$(nproc) CPUs, $(valgrind --version)."
    echo
    echo "| N | list walk Ir/seg | hashed Ir/seg | ratio | list walk ns/seg | hashed ns/seg |"
    echo "|---:|---:|---:|---:|---:|---:|"
} >"$report"
for n in "$@"; do
    li=$(ir_per_segment list "$n")
    hi=$(ir_per_segment hash "$n")
    ln=$(ns_per_segment list "$n")
    hn=$(ns_per_segment hash "$n")
    ratio=$(awk -v a="$li" -v b="$hi" 'BEGIN { printf "%.2f", a / b }')
    echo "| $n | $li | $hi | $ratio | $ln | $hn |" >>"$report"
done
cat "$report"
mkdir -p "$out"
cp "$report" "$out/pcb-lookup-$date.md"
