#!/bin/sh
# What one keep-alive request/response exchange costs the stack, in
# instructions (callgrind: repeatable where this VM's timings move by
# 10-30 % from run to run) and ns, at N connections, for each congestion
# control; optionally against an older commit built the same way (see
# rr_bench.c).
#
#   bench/stack/rr.sh [--requests M] [--base REF] [--out DIR] [N...]
#                                                  (default N: 1 32 1000)
#
# Builds the tree (build-bench-rr next to the source, or BENCH_RR_BUILD)
# with -DCMAKE_BUILD_TYPE=RelWithDebInfo and no libaccel.so. --base REF
# checks REF out into a temporary worktree and builds rr_bench.c of this
# tree against that commit's stack (a commit from before the congestion
# controls runs its one algorithm, shown as "-"). Writes a markdown table to
# stdout and to DIR/rr-<date>.md (DIR defaults to bench/results). Needs
# cmake, ninja, git and valgrind; no root.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
requests=20000
out="$src/bench/results"
base=
while [ $# -gt 0 ]; do
    case "$1" in
    --requests) requests=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    --*) echo "unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || set -- 1 32 1000

tmp=$(mktemp -d)
cleanup() {
    [ -z "$base" ] || git -C "$src" worktree remove --force "$tmp/base" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

. "$here/build.sh"
build() { # source dir, build dir
    bench_stack_build "$1" "$2" rr_bench
}
cur_dir=${BENCH_RR_BUILD:-$src/build-bench-rr}
build "$src" "$cur_dir"
cur_bin=$cur_dir/bench/stack/rr_bench
ccs="cubic reno bbr"

base_bin=
if [ -n "$base" ]; then
    base_rev=$(git -C "$src" rev-parse --short "$base")
    git -C "$src" worktree add --detach "$tmp/base" "$base" >/dev/null 2>&1
    cp "$here/rr_bench.c" "$here/bench_stack.c" "$here/bench_stack.h" "$tmp/base/bench/stack/"
    if ! grep -q rr_bench "$tmp/base/bench/stack/CMakeLists.txt"; then
        printf '%s\n' 'add_library(bench_stack STATIC bench_stack.c)' \
            'target_link_libraries(bench_stack PUBLIC accel_stack)' \
            'add_executable(rr_bench rr_bench.c)' \
            'target_link_libraries(rr_bench PRIVATE bench_stack)' \
            >>"$tmp/base/bench/stack/CMakeLists.txt"
        grep -q stk_tcp_configure "$tmp/base/stack/stk.h" ||
            echo 'target_compile_definitions(rr_bench PRIVATE RR_NO_CC)' \
                >>"$tmp/base/bench/stack/CMakeLists.txt"
    fi
    # lwIP's source: the same unpacked Debian source as this tree's.
    lwip=$(sed -n 's/^LWIP_DIR:PATH=//p' "$cur_dir/CMakeCache.txt")
    cmake -S "$tmp/base" -B "$tmp/base-build" -G Ninja \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCEL_BUILD_PRELOAD=OFF \
        -DLWIP_DIR="$lwip" >"$tmp/cmake.log" 2>&1 ||
        { cat "$tmp/cmake.log" >&2; exit 1; }
    build "$tmp/base" "$tmp/base-build"
    base_bin=$tmp/base-build/bench/stack/rr_bench
    # A base from before the congestion controls runs its one algorithm.
    base_cc=cubic
    grep -q RR_NO_CC "$tmp/base/bench/stack/CMakeLists.txt" && base_cc=-
fi

# ir BIN N CC: instructions per request (callgrind counts serve_one only)
ir() {
    if [ "$3" = - ]; then cc_arg=""; else cc_arg="-c $3"; fi
    # shellcheck disable=SC2086 # cc_arg is two words or none
    valgrind --tool=callgrind --toggle-collect=serve_one \
        --callgrind-out-file="$tmp/cg" "$1" -n "$requests" $cc_arg "$2" \
        >"$tmp/out" 2>"$tmp/log" || { cat "$tmp/out" "$tmp/log" >&2; exit 1; }
    n=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/log")
    echo $((n / requests))
}
# ns BIN N CC: best of 3 native runs
ns() {
    if [ "$3" = - ]; then cc_arg=""; else cc_arg="-c $3"; fi
    best=
    for _ in 1 2 3; do
        # shellcheck disable=SC2086
        t=$("$1" -n $((requests * 10)) $cc_arg "$2" | sed -n 's/.*ns_per_request=\([0-9.]*\).*/\1/p')
        best=$(printf '%s\n%s\n' "${best:-$t}" "$t" | sort -g | head -n1)
    done
    echo "$best"
}

date=$(date +%Y%m%d-%H%M%S)
rev=$(git -C "$src" rev-parse --short HEAD)
git -C "$src" diff --quiet HEAD -- stack bench/stack 2>/dev/null || rev="$rev+changes"
report="$tmp/report.md"
{
    echo "# The stack's cost of one request/response exchange ($date)"
    echo
    echo "bench/stack/rr_bench: an 80-byte request in, read, a 160-byte"
    echo "response out, on one of N keep-alive connections picked at random"
    echo "(timestamps and SACK as a Linux peer sends them, 40 us per exchange on"
    echo "a virtual clock); instructions in serve_one() under callgrind over"
    echo "$requests requests, ns natively over $((requests * 10)) (best of 3)."
    echo "Tree: $rev${base:+; base: $base ($base_rev)}. $(uname -m), $(nproc) CPUs, $(valgrind --version)."
    echo
    if [ -n "$base" ]; then
        echo "| N | cc | base Ir/req | Ir/req | ratio | base ns/req | ns/req |"
        echo "|---:|---|---:|---:|---:|---:|---:|"
    else
        echo "| N | cc | Ir/req | ns/req |"
        echo "|---:|---|---:|---:|"
    fi
} >"$report"
for n in "$@"; do
    if [ -n "$base" ]; then
        bi=$(ir "$base_bin" "$n" "$base_cc")
        bn=$(ns "$base_bin" "$n" "$base_cc")
    fi
    for cc in $ccs; do
        ci=$(ir "$cur_bin" "$n" "$cc")
        cn=$(ns "$cur_bin" "$n" "$cc")
        if [ -n "$base" ]; then
            ratio=$(awk -v a="$ci" -v b="$bi" 'BEGIN { printf "%.2f", a / b }')
            echo "| $n | $cc | $bi | $ci | $ratio | $bn | $cn |" >>"$report"
        else
            echo "| $n | $cc | $ci | $cn |" >>"$report"
        fi
    done
done
cat "$report"
mkdir -p "$out"
cp "$report" "$out/rr-$date.md"
