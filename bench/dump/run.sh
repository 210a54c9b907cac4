#!/bin/bash
# Capture benchmark (issue 23): what accel-dump costs a transfer. Stock
# nginx (one process, CPU 1) under accel-run in netns accel-a serves a
# file; the kernel peer downloads it with curl (CPU 0) over the veth
# (topology A), RUNS times in each of three series, interleaved (none,
# fast, slow, none, ...) so that the VM's slow drifts spread over all:
#
#   none: no capture.
#   fast: `accel-dump -w /dev/null PID tcp port 80` during the download
#     (CPU 0, with curl: the machine has two), a writer that keeps up as
#     far as it can.
#   slow: `accel-dump -w - PID tcp port 80` into a reader that takes 64 KB
#     every 10 ms (~6 MB/s): the ring fills and drops.
#
# Per download: the speed curl saw, the frames accel-dump wrote and those
# the ring dropped (its summary), and the server's own drop counters and
# retransmissions before and after (accel-stat --json): a capture must
# drop in the ring, never in the data path, and not slow the transfer by
# more than the noise (the report's ratios to none, with each series'
# spread). Writes <out>/dump-<date>.json, .md and .png.
#
# usage: bench/dump/run.sh [--smoke] [--runs N] [--size MB] [--out DIR]
#   --smoke    1 run per series of a 20 MB file (CI: the pipeline works)
#   --runs N   downloads per series (default 7)
#   --size MB  the file (default 400)
# Exit: 0 when every file was written and every download worked, 1
# otherwise, 4 when not root.
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/../lib/common.sh"
RUNS=7
SIZE_MB=400
while [[ $# -gt 0 ]]; do
    OPT_SHIFT=1
    case $1 in
    --runs)
        RUNS=${2-}
        OPT_SHIFT=2
        [[ $RUNS =~ ^[1-9][0-9]{0,2}$ ]] || { echo "--runs: a count from 1 to 999" >&2; exit 2; }
        ;;
    --size)
        SIZE_MB=${2-}
        OPT_SHIFT=2
        [[ $SIZE_MB =~ ^[1-9][0-9]{0,3}$ ]] || { echo "--size: megabytes, 1 to 9999" >&2; exit 2; }
        ;;
    *) bench_opt "$@" ;;
    esac
    shift "$OPT_SHIFT"
done
bench_check_opts
((SMOKE)) && { RUNS=1; SIZE_MB=20; }

. "$HERE/../../tests/lib/netns.sh"

bench_files dump
DUR=0
TOPO=A
DUMP=$(dirname "$ACCEL_RUN")/accel-dump
STAT=$(dirname "$ACCEL_RUN")/accel-stat
[[ -x $DUMP && -x $STAT ]] || fail "accel-dump and accel-stat must be next to $ACCEL_RUN"

# counters PID: "tx_drop_nombuf tx_drop_full rx_drop_nobuf rx_drop_stack
# tcp_retrans_segs" of the process
counters() {
    "$STAT" --json "$1" | "$PY" -c 'import json, sys
c = json.load(sys.stdin)["processes"][0]["counters"]
print(" ".join(str(c[k]) for k in ("tx_drop_nombuf", "tx_drop_full", "rx_drop_nobuf",
                                    "rx_drop_stack", "tcp_retrans_segs")))'
}

# one SERIES RUN: a download, with the series' capture.
one() {
    local series=$1 run=$2 f=$T/$1-$2 cpid="" c0 c1 out
    c0=$(counters "$NPID") || fail "accel-stat --json $NPID failed"
    case $series in
    fast)
        taskset -c "$CPU_CLIENT" "$DUMP" -w /dev/null "$NPID" tcp port 80 2>"$f.dump" &
        cpid=$!
        ;;
    slow)
        taskset -c "$CPU_CLIENT" "$DUMP" -w - "$NPID" tcp port 80 2>"$f.dump" |
            "$PY" -c 'import sys, time
while sys.stdin.buffer.read(65536):
    time.sleep(0.01)' &
        cpid=$!
        ;;
    esac
    if [[ -n $cpid ]]; then
        slowwait 10 grep -q capturing "$f.dump" || fail "$series: accel-dump did not start: $(cat "$f.dump")"
        sleep 0.6 # the data path starts copying within a snapshot interval
    fi
    out=$(K taskset -c "$CPU_CLIENT" curl -s -o "$T/got.bin" -w '%{speed_download} %{size_download}' \
        "http://$AIP/big.bin")
    local rc=$?
    [[ $rc == 0 && $(sha "$T/got.bin") == "$WANT" ]] || out="failed $rc"
    if [[ -n $cpid ]]; then
        pkill -INT -f "accel-dump -w .* $NPID tcp" 2>/dev/null
        wait "$cpid" 2>/dev/null
    fi
    c1=$(counters "$NPID")
    "$PY" - "$series" "$run" "$out" "$c0" "$c1" "$f.dump" >>"$RAW" <<'PYEOF'
import json, os, re, sys
series, run, out, c0, c1, dump = sys.argv[1:7]
p = {"series": series, "run": int(run), "ok": not out.startswith("failed"), "reason": None}
if p["ok"]:
    speed, size = out.split()
    p["mbit_s"] = float(speed) * 8 / 1e6
    p["bytes"] = int(size)
else:
    p["reason"] = "curl: " + out
d = [int(b) - int(a) for a, b in zip(c0.split(), c1.split())]
p["dp_drops"] = d[0] + d[1] + d[2]
p["rx_drop_stack"], p["retrans"] = d[3], d[4]
text = open(dump).read() if os.path.exists(dump) else ""
m = re.search(r"^(\d+) frames? captured", text, re.M)
p["captured"] = int(m.group(1)) if m else None
m = re.search(r"^(\d+) frames? dropped by the ring", text, re.M)
p["ring_drops"] = int(m.group(1)) if m else (0 if series == "none" else None)
if series != "none" and p["captured"] is None and p["ok"]:
    p["ok"], p["reason"] = False, "no accel-dump summary: " + text[-200:]
print(json.dumps(p))
PYEOF
    log "$series run $run: $(tail -1 "$RAW")"
}

lab_up
meta_conditions
meta runs "$RUNS"
meta size_mb "$SIZE_MB"
mkdir -p "$T/www"
mkfile "$T/www/big.bin" $((SIZE_MB * 1000000))
WANT=$(sha "$T/www/big.bin")
nginx_conf "$T/n.conf" "$AIP:80" "$T/www" off
bg_start nginx AX taskset -c "$CPU_SERVER" nginx -c "$T/n.conf" -p "$T" -e "$T/n.error.log"
wait_tcp K "$AIP" 80 || fail "accelerated nginx does not answer on $AIP:80"
NPID=$(bg_pid nginx)
slowwait 10 test -e "/dev/shm/accel-stat-$NPID" || fail "nginx has no live state region"
K curl -s -o /dev/null "http://$AIP/big.bin" # warm the page cache, not counted
for ((i = 1; i <= RUNS; i++)); do
    for s in none fast slow; do
        one "$s" "$i"
    done
done
bg_stop nginx

bench_report
check "$BASE.json parses and has every run" "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["points"]) == 3 * int(sys.argv[2]), len(d["points"])' "$BASE.json" "$RUNS"
check_points '{series} run {run}'
cat "$BASE.md"
finish
