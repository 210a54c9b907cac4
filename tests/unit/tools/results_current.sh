#!/bin/bash
# README.md's table of figures quotes the newest run of each benchmark:
# for every kind it summarises, the newest bench/results/<kind>-<date>.md
# must be linked from README.md, bench/RESULTS.md must name it, and every
# results file README links must exist. A benchmark run committed without
# its figures in README and RESULTS fails here.
#
# usage: results_current.sh REPO_DIR
set -u
REPO=$1
README=$REPO/README.md
RESULTS=$REPO/bench/RESULTS.md
bad=0
for kind in http latency loss redis rr startup synflood fuzz conn-scale conn1m; do
    newest=$(find "$REPO/bench/results" -maxdepth 1 -name "$kind-[0-9]*.md" -printf '%f\n' |
        sort | tail -1)
    if [[ -z $newest ]]; then
        echo "FAIL no bench/results/$kind-*.md"
        bad=1
        continue
    fi
    stem=${newest%.md}
    if grep -q "bench/results/$newest" "$README"; then
        echo "ok   README.md links the newest $kind run ($stem)"
    else
        echo "FAIL README.md does not link bench/results/$newest, the newest $kind run"
        bad=1
    fi
    if grep -q "$stem" "$RESULTS"; then
        echo "ok   bench/RESULTS.md names $stem"
    else
        echo "FAIL bench/RESULTS.md does not name $stem, the newest $kind run"
        bad=1
    fi
done
while read -r f; do
    if [[ -f $REPO/$f ]]; then
        echo "ok   $f exists"
    else
        echo "FAIL README.md links $f, which does not exist"
        bad=1
    fi
done < <(grep -o 'bench/results/[A-Za-z0-9_.-]*\.[a-z]*' "$README" | sort -u)
exit $bad
