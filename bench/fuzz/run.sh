#!/bin/bash
# The long fuzzing run (issue 24): every libFuzzer harness of tests/fuzz
# for 10 million executions (or until --max-time), one process, pinned to
# one CPU, seeded with the committed corpus and regression inputs (new
# inputs go to a temporary directory). Records per harness the
# executions, exec/s, coverage (cov: edges, ft: features), the corpus
# libFuzzer ended with, peak RSS, duration and whether it found a crash,
# a leak or a hang, with the commit and the conditions.
# Writes <out>/fuzz-<date>.json and .md; run it from a clean commit (the
# commit is recorded, "-modified" when the tree differs).
#
# usage: bench/fuzz/run.sh [--runs N] [--max-time S] [--cpu N] [--out DIR]
#                          [--corpus DIR] [HARNESS...]
#   --runs N      executions per harness (default 10000000)
#   --max-time S  stop a harness after S seconds even if short of N
#                 (default: none); the counts reached are recorded
#   --cpu N       the CPU to pin to (default 1)
#   --out DIR     where the results go (default bench/results)
#   --build DIR   the fuzz build (default build-fuzz; tests/fuzz/fuzz.sh)
#   --corpus DIR  start from and keep the corpus in DIR/HARNESS (a run in
#                 parts: each part is recorded with the corpus it started
#                 from; default: a temporary one, started from the seeds)
# Exit: 0 when every harness ran without a finding, 1 otherwise.
set -u
HERE=$(dirname "$(readlink -f "$0")")
REPO=$(cd "$HERE/../.." && pwd)
RUNS=10000000
MAXTIME=
CPU=1
OUT=$REPO/bench/results
BUILD=$REPO/build-fuzz
CORPUS=
HARNESSES=()
while (($#)); do
    case $1 in
    --runs) RUNS=$2; shift ;;
    --max-time) MAXTIME=$2; shift ;;
    --cpu) CPU=$2; shift ;;
    --out) OUT=$2; shift ;;
    --build) BUILD=$2; shift ;;
    --corpus) CORPUS=$(readlink -f "$2"); shift ;;
    fuzz_*) HARNESSES+=("$1") ;;
    *)
        sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 2
        ;;
    esac
    shift
done
mkdir -p "$OUT"
OUT=$(readlink -f "$OUT")
STAMP=$(date +%Y%m%d-%H%M%S)
BASE=$OUT/fuzz-$STAMP
T=$(mktemp -d /tmp/accel-fuzzbench.XXXXXX)
COMMIT=$(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- . ':!bench/results' ':!bench/RESULTS.md' || echo -modified)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date +%s)

# Units each harness's kept corpus held at the start (--corpus).
START_UNITS=
if [[ -n $CORPUS ]]; then
    hs=("${HARNESSES[@]}")
    ((${#hs[@]})) || hs=(fuzz_frames fuzz_sockcalls fuzz_cfg fuzz_rules)
    for h in "${hs[@]}"; do
        START_UNITS+="$h=$(find "$CORPUS/$h" -type f 2>/dev/null | wc -l) "
    done
fi
"$REPO/tests/fuzz/fuzz.sh" --runs "$RUNS" ${MAXTIME:+--max-time "$MAXTIME"} \
    --build "$BUILD" --cpu "$CPU" ${CORPUS:+--corpus "$CORPUS"} \
    --stats "$T/stats.tsv" "${HARNESSES[@]}" | tee "$T/out.txt"
rc=${PIPESTATUS[0]}

python3 - "$T/stats.tsv" "$BASE" "$COMMIT" "$STAMP" "$RUNS" "${MAXTIME:-none}" \
    "$CPU" "$LOAD_START" "$(cut -d' ' -f1-3 /proc/loadavg)" \
    "$(($(date +%s) - START))" "$(clang --version | head -1)" "$(nproc)" \
    "${CORPUS:-none}" "${START_UNITS:-none}" <<'PY'
import json
import sys

(stats, base, commit, stamp, runs, maxtime, cpu, load0, load1, secs, cc,
 ncpu, corpus, start_units) = sys.argv[1:]
rows = []
for line in open(stats):
    h, rc, ex, rate, cov, ft, corp, rss, dur = line.rstrip("\n").split("\t")
    units, size = corp.split("/")
    rows.append({"harness": h, "exit": int(rc), "finding": int(rc) != 0,
                 "executions": int(ex), "exec_per_s": int(rate),
                 "cov": int(cov), "ft": int(ft), "corpus_units": int(units),
                 "corpus_size": size, "peak_rss_mb": int(rss),
                 "duration_s": int(dur),
                 "reached_target": int(ex) >= int(runs)})
cond = {"commit": commit, "stamp": stamp, "target_runs": int(runs),
        "max_time_s": maxtime, "cpu": int(cpu), "jobs": 1, "ncpu": int(ncpu),
        "compiler": cc, "sanitizers": "address,undefined (libFuzzer)",
        "per_input_timeout_s": 10, "rss_limit_mb": 2048,
        "loadavg_start": load0, "loadavg_end": load1, "duration_s": int(secs),
        "seeds": "tests/fuzz/corpus/<harness>, tests/fuzz/regress/<harness>",
        "kept_corpus": corpus, "kept_corpus_units_at_start": start_units}
json.dump({"conditions": cond, "harnesses": rows}, open(base + ".json", "w"),
          indent=1)
with open(base + ".md", "w") as f:
    f.write("# Fuzzing run %s (commit %s)\n\n" % (stamp, commit))
    f.write("`bench/fuzz/run.sh`: each harness of tests/fuzz alone on CPU %s "
            "(one process, -jobs 1), libFuzzer with ASan and UBSan, target %s "
            "executions per harness%s.\n\n" % (
                cpu, runs, "" if maxtime == "none" else
                ", at most %s s each" % maxtime))
    f.write("| harness | executions | exec/s | cov | ft | corpus | "
            "peak RSS MB | duration s | crashes |\n")
    f.write("|---|---:|---:|---:|---:|---|---:|---:|---|\n")
    for r in rows:
        f.write("| %s | %d%s | %d | %d | %d | %d units, %s | %d | %d | %s |\n"
                % (r["harness"], r["executions"],
                   "" if r["reached_target"] else " (short of target)",
                   r["exec_per_s"], r["cov"], r["ft"], r["corpus_units"],
                   r["corpus_size"], r["peak_rss_mb"], r["duration_s"],
                   "1 (exit %d: the run stops at its first)" % r["exit"]
                   if r["finding"] else "0"))
    f.write("\nConditions: %s\n" % ", ".join(
        "%s %s" % (k, v) for k, v in cond.items()))
PY
echo "fuzz: results in $BASE.json and $BASE.md"
rm -rf "$T"
exit "$rc"
