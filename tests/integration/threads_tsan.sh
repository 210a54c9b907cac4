#!/bin/bash
# Scenario: the thread tests under ThreadSanitizer. Registered only in a
# build configured with -DACCEL_TSAN=ON (label tsan; tools/test.sh runs it
# in its tsan suite): libaccel.so, accel-run and the thread programs are
# all built with -fsanitize=thread, so every access our code makes from
# the application's threads, the progress thread and DPDK's threads is
# checked. Runs threads/threads.c (every case) and the
# thread-per-connection server (50 connections at a time from a kernel
# client) under accel-run in the lab. Checks: both succeed, and
# ThreadSanitizer reported nothing (tests/tsan.supp holds only third-party
# suppressions).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

TDIR=$(dirname "$(readlink -f "$0")")/threads
TBIN=${IT_THREADS_BINDIR:-}
SUPP=$(readlink -f "$TDIR/../../tsan.supp")
[[ -n $TBIN && -x $TBIN/threads && -x $TBIN/tpc_server ]] ||
    fail "IT_THREADS_BINDIR='$TBIN' does not hold the built thread programs"
PORT=7300
TSAN="TSAN_OPTIONS=halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$SUPP"
# wait_line FILE REGEX: a line matching REGEX appears in FILE.
wait_line() { slowwait 60 grep -Eqs "$2" "$1"; }
# tsan_clean NAME FILE: no ThreadSanitizer report in FILE.
tsan_clean() {
    local n
    n=$(grep -c 'WARNING: ThreadSanitizer' "$2")
    check_eq "$1: ThreadSanitizer reports" "$n" 0
    grep -h '^SUMMARY: ThreadSanitizer' "$2" | sort | uniq -c | while read -r line; do log "  $line"; done
}

lab_up
bg_start peer K "$PY" "$TDIR/peer.py" server "$KIP" "$PORT"
wait_tcp K "$KIP" "$PORT" || fail "kernel peer did not start"

log "thread cases under accel-run, instrumented"
IT_FG_TIMEOUT=600 AX "$TSAN" "$TBIN/threads" "$AIP" "$KIP" "$PORT" all >"$T/threads.out" 2>"$T/threads.err"
check_eq "threads: exit status" "$?" 0
check "threads: every case as Linux" grep -qx "ALL OK" "$T/threads.out"
tsan_clean threads "$T/threads.err"

log "thread-per-connection server under accel-run, instrumented"
bg_start tpc AX "$TSAN" "$TBIN/tpc_server" "$AIP" 7400 100
wait_line "$T/tpc.out" '^listening' || fail "tpc_server did not start"
K "$PY" "$TDIR/../fork/fork_peer.py" bulk "$AIP" 7400 100 50 1000,65536,300000 \
    >"$T/bulk.out" 2>&1
check "kernel client: 100 echoes, 50 at a time, sha256 intact" grep -q '^ok conns=100' "$T/bulk.out"
pid=$(bg_pid tpc)
slowwait 60 dead "$pid"
bg_stop tpc
check_eq "tpc_server exit status" "$?" 0
tsan_clean tpc_server "$T/tpc.err"
finish
