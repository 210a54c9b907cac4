#!/bin/bash
# Scenario: a bad configuration never breaks the program. For each bad
# setting (malformed ACCEL_IP, out-of-range prefix, missing ACCEL_IP on an
# interface without an address to share, a
# missing interface, an out-of-range and a malformed option, ACCEL_HUGEPAGES=on
# with no hugetlbfs mounted) `accel-run curl` in the accelerated netns must
# still fetch the page through the kernel (for this phase the accelerated
# netns's veth gets the kernel IP 10.200.0.2, so the kernel path works):
# exit 0, stdout exactly the page (nothing from us on stdout), and stderr has
# exactly one line, naming the variable. That is checked with libaccel.so
# preloaded directly; accel-run validates the environment first and may
# instead refuse with exit 2 and that one line (tools/accel_run.c). Then, with the kernel IP removed
# again, an unknown ACCEL_* name gives one warning naming it while the
# program still runs accelerated.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
mkdir -p "$T/www"
echo "config test page $RANDOM$RANDOM" >"$T/www/small.html"
nginx_conf "$T/k.conf" "$KIP:80" "$T/www"
bg_start knginx K nginx -c "$T/k.conf" -p "$T" -e "$T/k.error.log"
wait_tcp K "$KIP" 80 || fail "kernel nginx in $NS_K did not start"

A ip addr add "$AIP/24" dev "$VETH_A" || fail "cannot add the temporary kernel IP"
slowwait 10 A curl -s -m 2 -o /dev/null "http://$KIP/small.html" ||
    fail "plain kernel curl from $NS_A does not work with the temporary IP"

n=0
# run_case VAR HOW PRE... -- ENV...: run curl with ENV (replacing the lab
# env) in the accelerated netns, preloaded directly (HOW=lib) or through
# accel-run (HOW=run), after the PRE command prefix. Sets OUT/ERR/RC.
run_case() {
    local var=$1 how=$2 pre=() envs=() launcher=()
    shift 2
    while [[ $1 != -- ]]; do
        pre+=("$1")
        shift
    done
    shift
    envs=("$@")
    n=$((n + 1))
    OUT=$T/bad$n.out ERR=$T/bad$n.err
    if [[ $how == lib ]]; then
        launcher=(env "LD_PRELOAD=$ACCEL_LIB")
    else
        launcher=(env ${ACCEL_LIBRARY:+ACCEL_LIBRARY=$ACCEL_LIBRARY} "$ACCEL_RUN")
    fi
    ip netns exec "$NS_A" "${pre[@]}" env -i PATH="$PATH" "${envs[@]}" "${launcher[@]}" \
        curl -sS -m 10 "http://$KIP/small.html" >"$OUT" 2>"$ERR"
    RC=$?
    log "  [$var/$how] exit $RC, stderr: $(tr '\n' '|' <"$ERR")"
}

# one_line TAG VAR: stderr is exactly one line, and it names VAR.
one_line() {
    check_eq "$1 stderr lines naming $2" "$(grep -c -- "$2" "$ERR")" 1
    check_eq "$1 stderr line count" "$(wc -l <"$ERR")" 1
}

# bad_case VAR PRE... -- ENV...: the library (preloaded directly) must run
# the program on the kernel and say one line naming VAR. accel-run may do
# the same, or refuse before starting the program (its documented exit 2)
# with one line naming VAR and nothing on stdout.
bad_case() {
    local var=$1
    shift
    log "check: $var: $*"
    run_case "$var" lib "$@"
    check_eq "[$var/lib] program exit status" "$RC" 0
    check "[$var/lib] stdout is exactly the page" cmp "$T/www/small.html" "$OUT"
    one_line "[$var/lib]" "$var"
    run_case "$var" run "$@"
    if ((RC == 2)); then
        pass "[$var/accel-run] refused before starting the program (exit 2)"
        check_eq "[$var/accel-run] nothing on stdout" "$(wc -c <"$OUT")" 0
    else
        check_eq "[$var/accel-run] program exit status" "$RC" 0
        check "[$var/accel-run] stdout is exactly the page" cmp "$T/www/small.html" "$OUT"
    fi
    one_line "[$var/accel-run]" "$var"
}

[[ -f $ACCEL_LIB ]] || fail "libaccel.so not found at '$ACCEL_LIB' (set ACCEL_LIBRARY)"
GOOD_IFACE="ACCEL_IFACE=$VETH_A"
GOOD_IP="ACCEL_IP=$AIP/24"
bad_case ACCEL_IP -- "$GOOD_IFACE" "ACCEL_IP=10.200.0.300/24"
bad_case ACCEL_IP -- "$GOOD_IFACE" "ACCEL_IP=10.200.0.2/40"
bad_case ACCEL_IP -- "$GOOD_IFACE" "ACCEL_IP=banana"
# No ACCEL_IP and no address to share (lo's 127.0.0.1 is none); with an
# address on the interface, a missing ACCEL_IP shares it (shared_addr).
bad_case ACCEL_IP -- "ACCEL_IFACE=lo"
bad_case ACCEL_IFACE -- "ACCEL_IFACE=nosuchif0" "$GOOD_IP"
bad_case ACCEL_MTU -- "$GOOD_IFACE" "$GOOD_IP" "ACCEL_MTU=100"
bad_case ACCEL_LOG_LEVEL -- "$GOOD_IFACE" "$GOOD_IP" "ACCEL_LOG_LEVEL=loud"
# Hide every hugetlbfs mount in a private mount namespace (ip netns exec
# keeps it), so "on" cannot be satisfied.
UMOUNT_HUGE='for m in $(awk '\''$3 == "hugetlbfs" {print $2}'\'' /proc/mounts); do umount "$m" || exit 99; done; exec "$@"'
bad_case ACCEL_HUGEPAGES unshare -m --propagation private bash -c "$UMOUNT_HUGE" _ -- \
    "$GOOD_IFACE" "$GOOD_IP" "ACCEL_HUGEPAGES=on"

log "check: unknown ACCEL_* name is a warning; acceleration still works"
A ip addr del "$AIP/24" dev "$VETH_A" || fail "cannot remove the temporary kernel IP"
AX ACCEL_POLL_USECS=5 ACCEL_STATS=2 curl -sS -m 20 "http://$KIP/small.html" >"$T/unk.out" 2>"$T/unk.err"
check_eq "[unknown name] program exit status" "$?" 0
check "[unknown name] stdout is exactly the page" cmp "$T/www/small.html" "$T/unk.out"
check_eq "[unknown name] stderr lines naming ACCEL_POLL_USECS" "$(grep -c ACCEL_POLL_USECS "$T/unk.err")" 1
check_ge "[unknown name] accelerated anyway: stats tcp_connect" "$(stat_get "$T/unk.err" tcp_connect)" 1
finish
