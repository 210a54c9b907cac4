#!/bin/bash
# fuzz.sh: build the libFuzzer harnesses (tests/fuzz, -DACCEL_FUZZ=ON with
# clang, in their own build dir) and run each for a bounded time or number
# of executions, seeded with the committed corpus and regression inputs;
# new inputs go to a temporary directory, never to the repo.
#
# usage: fuzz.sh [--time S | --runs N] [--max-time S] [--build DIR]
#                [--stats FILE] [--cpu N] [--corpus DIR] [HARNESS...]
#   --time S      run each harness S seconds (default 60; the parsers half)
#   --runs N      run each harness N executions instead (bench/fuzz/run.sh)
#   --max-time S  with --runs: stop a harness after S seconds anyway
#   --build DIR   the fuzz build (default REPO/build-fuzz)
#   --stats FILE  one tab-separated line per harness: name, exit status,
#                 executions, exec/s, cov, ft, corpus units, corpus bytes,
#                 peak RSS MB, seconds
#   --cpu N       pin the runs to CPU N (taskset)
#   --corpus DIR  keep the corpus in DIR/HARNESS (made if missing) instead
#                 of a temporary directory: the next run with the same DIR
#                 starts from it, so a long run can be done in parts
#   HARNESS       fuzz_frames fuzz_sockcalls fuzz_cfg fuzz_rules (default all)
#
# Any crash, sanitizer report, leak, timeout (-timeout 10 s per input) or
# out-of-memory (-rss_limit_mb 2048) fails: the reproducer's path is
# printed (kept in the work directory) and the exit status is 1. Add it to
# tests/fuzz/regress/HARNESS/ once the cause is fixed.
set -u
set -o pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
BUILD=$REPO/build-fuzz
TIME=60
RUNS=
MAXTIME=
STATS=
CPU=
CORPUS=
HARNESSES=()
while (($#)); do
    case $1 in
    --time) TIME=$2; shift ;;
    --runs) RUNS=$2; shift ;;
    --max-time) MAXTIME=$2; shift ;;
    --build) BUILD=$2; shift ;;
    --stats) STATS=$2; shift ;;
    --cpu) CPU=$2; shift ;;
    --corpus) CORPUS=$2; shift ;;
    fuzz_*) HARNESSES+=("$1") ;;
    *)
        sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 2
        ;;
    esac
    shift
done
((${#HARNESSES[@]})) || HARNESSES=(fuzz_frames fuzz_sockcalls fuzz_cfg fuzz_rules)

if [[ ! -f $BUILD/build.ninja ]]; then
    CC=clang CXX=clang++ cmake -S "$REPO" -B "$BUILD" -G Ninja \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCEL_FUZZ=ON >/dev/null ||
        { echo "fuzz: cmake -DACCEL_FUZZ=ON failed (clang installed?)" >&2; exit 1; }
fi
ninja -C "$BUILD" "${HARNESSES[@]}" >/dev/null ||
    { echo "fuzz: the harnesses do not build (ninja -C $BUILD)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/accel-fuzz.XXXXXX)
PIN=()
[[ -n $CPU ]] && PIN=(taskset -c "$CPU")
[[ -n $STATS ]] && : >"$STATS"
fails=0
for h in "${HARNESSES[@]}"; do
    w=$WORK/$h
    new=${CORPUS:+$CORPUS/$h}
    new=${new:-$w/new}
    mkdir -p "$new" "$w/artifacts"
    budget=()
    if [[ -n $RUNS ]]; then
        budget=(-runs="$RUNS")
        [[ -n $MAXTIME ]] && budget+=(-max_total_time="$MAXTIME")
    else
        t=$TIME
        [[ $h == fuzz_cfg || $h == fuzz_rules ]] && t=$(((TIME + 1) / 2))
        budget=(-max_total_time="$t")
    fi
    start=$(date +%s)
    # The corpus directories: new units go to the first (temporary, or
    # --corpus) one.
    "${PIN[@]}" "$BUILD/tests/fuzz/$h" "${budget[@]}" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$w/artifacts/" \
        "$new" "$REPO/tests/fuzz/corpus/$h" "$REPO/tests/fuzz/regress/$h" \
        >"$w/log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    execs=$(awk -F': *' '/^stat::number_of_executed_units/ {print $NF}' "$w/log")
    rate=$(awk -F': *' '/^stat::average_exec_per_sec/ {print $NF}' "$w/log")
    rss=$(awk -F': *' '/^stat::peak_rss_mb/ {print $NF}' "$w/log")
    # The last status line: "#N DONE cov: C ft: F corp: U/SIZE ..."
    last=$(grep -E '^#[0-9]+' "$w/log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[bKMG]*\).*/\1/p' <<<"$last")
    printf '%-15s %s: %s executions, %s exec/s, cov %s, ft %s, corpus %s, %ss\n' \
        "$h" "$( ((rc == 0)) && echo ok || echo "FAILED (exit $rc)")" \
        "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$secs"
    [[ -n $STATS ]] && printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$h" "$rc" \
        "${execs:-0}" "${rate:-0}" "${cov:-0}" "${ft:-0}" "${corp:-0/0}" \
        "${rss:-0}" "$secs" >>"$STATS"
    if ((rc != 0)); then
        fails=$((fails + 1))
        grep -E 'ERROR|SUMMARY|fuzz:|^ *#[0-9]+ 0x' "$w/log" | head -30 | sed 's/^/  | /'
        for a in "$w"/artifacts/*; do
            [[ -e $a ]] && echo "  reproducer: $a (rerun: $BUILD/tests/fuzz/$h $a)"
        done
        echo "  (full log: $w/log)"
    fi
done
if ((fails)); then
    echo "fuzz: $fails harness(es) failed; work directory kept: $WORK"
    exit 1
fi
rm -rf "$WORK"
exit 0
