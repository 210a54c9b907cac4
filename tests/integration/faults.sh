#!/bin/bash
# Scenario: accel's TCP against the kernel peer through one fault of
# `accel-lab impair` (both directions of the path), a large file each way:
#   send: a stock nginx (sendfile on) under accel-run in the accelerated
#     netns serves it to tests/lib/fetch.py on the kernel in the peer netns;
#   receive: a kernel nginx in the peer netns serves it to fetch.py under
#     accel-run.
# Checks, each way: the transfer completes within its time limit, the data
# that arrived has the file's sha256, the impairment acted on it (its own
# counters, from `impair --show`) and accel's ACCEL_STATS show the recovery
# that fault calls for, so the test cannot pass with the fault not applied:
#   loss     --loss 2: the sender retransmitted; the receiver queued
#            segments out of order
#   dup      --dup 2: the sender received D-SACKs (the kernel reports the
#            copies); the receiver sent D-SACKs
#   reorder  --reorder 5: the sender saw reordering (D-SACKs for its
#            spurious retransmissions, or holes filled by their originals);
#            the receiver queued segments out of order
#   delay    --delay 5:2 --loss 0.1 (jitter: packets also overtake each
#            other): the daemon delayed every data packet; the sender
#            retransmitted; the receiver queued out of order
#   corrupt  --corrupt 1: accel dropped the frames the daemon corrupted
#            towards it for their bad checksums (all of them, but at most 2
#            that may come after the process ended); the sender
#            retransmitted what the kernel dropped
#   rate     --rate 300: the shaper carried the data, goodput 100 to 315
#            Mbit/s each way
# usage: faults.sh loss|dup|reorder|delay|corrupt|rate
# IT_FAULT_MB sets the file's size (default 200 MB); every transfer is
# limited to IT_FAULT_LIMIT seconds (default 150): a transfer that hangs
# fails its check and the test goes on.

# Unset variables are errors; not pipefail: the shared helpers
# (tests/lib/netns.sh) end pipes with grep -q, whose early exit can fail the
# writer with SIGPIPE.
set -u
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

FAULT=${1:-}
case $FAULT in
loss) IMPAIR=(--loss 2) ;;
dup) IMPAIR=(--dup 2) ;;
reorder) IMPAIR=(--reorder 5) ;;
delay) IMPAIR=(--delay 5:2 --loss 0.1) ;;
corrupt) IMPAIR=(--corrupt 1) ;;
rate) IMPAIR=(--rate 300) ;;
*) fail "usage: faults.sh loss|dup|reorder|delay|corrupt|rate (got '$FAULT')" ;;
esac
TEST_NAME=faults_$FAULT
MB=${IT_FAULT_MB:-200}
SIZE=$((MB * 1000000))
LIMIT=${IT_FAULT_LIMIT:-150}
FETCH=$LIBDIR/fetch.py

impair() { ACCEL_LAB_IMPAIRD=${IT_IMPAIRD:-} "$ACCEL_LAB" impair "$@"; }
show_get() { sed -n "s/^$1=//p" "$2"; }
# stat_sum FILE NAME: NAME summed over every ACCEL_STATS dump in FILE
# (nginx's master and worker each dump theirs).
stat_sum() {
    awk -v n="$2" '$2 == "stats:" && $3 == n { s += $4; found = 1 } END { if (found) print s }' "$1"
}
# delta NAME: counter NAME of `impair --show` over the transfer ($T/imp.0,
# $T/imp.1).
delta() {
    local a b
    a=$(show_get "$1" "$T/imp.0")
    b=$(show_get "$1" "$T/imp.1")
    echo $((${b:-0} - ${a:-0}))
}

lab_up
trap 'rc=$?; impair --off >/dev/null 2>&1; (exit $rc); cleanup' EXIT
mkdir -p "$T/www"
mkfile "$T/www/data.bin" "$SIZE"
chmod 644 "$T/www/data.bin"
WANT=$(sha "$T/www/data.bin")
# Before the servers: "out" impairments act on connections made after them.
impair "${IMPAIR[@]}" --seed 19 >"$T/impair.out" 2>&1 || fail "impair ${IMPAIR[*]}: $(cat "$T/impair.out")"
log "$MB MB each way through: $(cat "$T/impair.out")"

# fetched NAME DIRECTION: check fetch.py's result in $T/NAME.out: complete
# and the file's sha256. Sets GOODPUT (Mbit/s).
fetched() {
    local r
    r=$("$PY" -c 'import json, re, sys
m = re.search(r"^\{.*\}$", open(sys.argv[1], errors="replace").read(), re.M)
if not m:
    print("no result"); sys.exit()
f = json.loads(m.group(0))
print(f["sha256"] if f["ok"] else "failed", f["bytes"], "%.0f" % (f["goodput_mbit"] or 0),
      "%.2f" % (f["transfer_s"] or 0), "%.3f" % f["max_gap_s"], f["error"] or "")' "$T/$1.out")
    read -r got bytes GOODPUT secs gap why <<<"$r"
    if [[ $got == "$WANT" ]]; then
        pass "$2: $MB MB intact (sha256) in $secs s, $GOODPUT Mbit/s, longest stall $gap s"
    else
        GOODPUT=0
        check_fail "$2: transfer: $r ($(grep -v stats: "$T/$1.out" | tail -2 | tr '\n' ' '))"
    fi
}

# csum_dropped WHAT: accel's rx_drop_csum (in $S) is what the daemon
# corrupted towards it while the process ran: at least one, and all of them
# but at most 2 (a peer's last retransmission, of a FIN whose ACK was
# corrupted, can arrive after the process ended).
csum_dropped() {
    local want got
    want=$(delta daemon_out_corrupted)
    got=$(stat_sum "$S" rx_drop_csum)
    if ((want >= 1)) && [[ $got =~ ^[0-9]+$ ]] && ((got <= want && got >= want - 2)); then
        pass "accel dropped $1 for bad checksums: rx_drop_csum $got of $want corrupted"
    else
        check_fail "accel dropped $1 for bad checksums: rx_drop_csum '$got', daemon corrupted $want"
    fi
}

# expect_stat FILE NAME MIN DESC
expect_stat() { check_ge "$4 ($2)" "$(stat_sum "$1" "$2")" "$3"; }

# --- accel sends: accel nginx -> kernel fetch.py -------------------------------
# The impairment's counters from before the accelerated process starts to
# after it ended: they then cover everything it received.
impair --show >"$T/imp.0"
nginx_conf "$T/a.conf" "$AIP:80" "$T/www" on "sendfile on;"
bg_start anginx AX ACCEL_STATS=2 nginx -c "$T/a.conf" -p "$T" -e "$T/a.error.log"
wait_tcp K "$AIP" 80 30 || fail "accelerated nginx not reachable on $AIP:80"
ns_argv K "$PY" "$FETCH" --timeout "$LIMIT" "http://$AIP/data.bin"
timeout -k 5 $((LIMIT + 10)) "${NSARGV[@]}" >"$T/send.out" 2>&1
fetched send "accel nginx -> kernel client"
kill -QUIT "$(bg_pid anginx)"
busywait 20000 dead "$(bg_pid anginx)" || check_fail "accelerated nginx did not exit after QUIT"
bg_stop anginx QUIT
impair --show >"$T/imp.1"
S=$T/a.error.log
grep -h "stats: data path" "$S" | head -1 | sed "s/^/[$TEST_NAME] /"
case $FAULT in
loss)
    check_ge "impair lost packets towards the kernel" "$(delta in_lost)" 1
    expect_stat "$S" tcp_retrans_segs 1 "sender retransmitted"
    ;;
dup)
    check_ge "impair duplicated packets towards the kernel" "$(delta in_duplicated)" 1
    expect_stat "$S" tcp_dsack_rcvd 1 "sender received D-SACKs for the copies"
    ;;
reorder)
    check_ge "impair reordered packets towards the kernel" "$(delta daemon_in_reordered)" 1
    n=$(stat_sum "$S" tcp_dsack_rcvd)
    m=$(stat_sum "$S" tcp_reorder_seen)
    check_ge "sender saw reordering (tcp_dsack_rcvd + tcp_reorder_seen)" $((${n:-0} + ${m:-0})) 1
    ;;
delay)
    check_ge "impair delayed packets towards the kernel" "$(delta daemon_in_delayed)" $((SIZE / 1460))
    expect_stat "$S" tcp_retrans_segs 1 "sender retransmitted"
    ;;
corrupt)
    check_ge "impair corrupted packets towards the kernel" "$(delta daemon_in_corrupted)" 1
    expect_stat "$S" tcp_retrans_segs 1 "sender retransmitted what the kernel dropped"
    csum_dropped "the corrupted ACKs"
    ;;
rate)
    check_ge "the shaper carried the data towards the kernel (bytes)" "$(delta in_rate_sent_bytes)" \
        "$SIZE"
    check_ge "goodput through a 300 Mbit/s shaper (Mbit/s)" "$GOODPUT" 100
    check_le "goodput through a 300 Mbit/s shaper (Mbit/s)" "$GOODPUT" 315
    ;;
esac

# --- accel receives: kernel nginx -> accel fetch.py ----------------------------
nginx_conf "$T/k.conf" "$KIP:80" "$T/www" on "sendfile on;"
bg_start knginx K nginx -c "$T/k.conf" -p "$T" -e "$T/k.error.log"
wait_tcp K "$KIP" 80 30 || fail "kernel nginx not reachable on $KIP:80"
impair --show >"$T/imp.0"
IT_FG_TIMEOUT=$((LIMIT + 10)) AX ACCEL_STATS=2 "$PY" "$FETCH" --timeout "$LIMIT" \
    "http://$KIP/data.bin" >"$T/recv.out" 2>&1
impair --show >"$T/imp.1"
fetched recv "kernel nginx -> accel client"
S=$T/recv.out
grep -h "stats: data path" "$S" | head -1 | sed "s/^/[$TEST_NAME] /"
case $FAULT in
loss)
    check_ge "impair lost packets towards accel" "$(delta out_lost)" 1
    expect_stat "$S" tcp_ofo_queued 1 "receiver queued segments out of order"
    ;;
dup)
    check_ge "impair duplicated packets towards accel" "$(delta out_duplicated)" 1
    expect_stat "$S" tcp_dsack_sent 1 "receiver sent D-SACKs for the copies"
    ;;
reorder)
    check_ge "impair reordered packets towards accel" "$(delta daemon_out_reordered)" 1
    expect_stat "$S" tcp_ofo_queued 1 "receiver queued segments out of order"
    ;;
delay)
    check_ge "impair delayed packets towards accel" "$(delta daemon_out_delayed)" $((SIZE / 1460))
    expect_stat "$S" tcp_ofo_queued 1 "receiver queued segments out of order"
    ;;
corrupt)
    check_ge "impair corrupted packets towards accel" "$(delta daemon_out_corrupted)" 1
    csum_dropped "the corrupted data"
    ;;
rate)
    check_ge "the shaper carried the data towards accel (bytes)" "$(delta out_rate_sent_bytes)" \
        "$SIZE"
    check_ge "goodput through a 300 Mbit/s shaper (Mbit/s)" "$GOODPUT" 100
    check_le "goodput through a 300 Mbit/s shaper (Mbit/s)" "$GOODPUT" 315
    ;;
esac
finish
