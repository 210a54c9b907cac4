# shellcheck shell=bash
# Helpers for the tests of services running as their own user through
# accel-broker (docs/DESIGN.md section 3, "Privileges"). Sourced after
# netns.sh, after lab_up.
#
#   unpriv_setup USER...   the users join the group accel for the test (taken
#                          out again at exit if they were not members), and
#                          accel-broker starts in the lab's netns accel-a
#   bg_start_as NAME USER ARGS...  like bg_start NAME AX ARGS..., as USER
#                          (setpriv: no capabilities left, exec'd so the pid
#                          is the program's)
#   AX_as USER ARGS...     the same in the foreground, bounded
#   check_private PID...   the files, sockets and memory accel made for those
#                          processes are owner- or group-only (checks)
#   check_on_stack NAME USER ACCEPTS FRAMES  after NAME (as USER) exited: its
#                          counters (ACCEL_STATS=2) show the stack served it
#                          through accel-broker, which released the interface

UP_GROUP=accel
UP_ADDED=()

unpriv_cleanup() {
    local u
    for u in "${UP_ADDED[@]}"; do
        gpasswd -d "$u" "$UP_GROUP" >/dev/null 2>&1 || true
    done
    "$ACCEL_LAB" broker stop >/dev/null 2>&1 || true
}

unpriv_setup() {
    local u
    command -v setpriv >/dev/null || fail "setpriv not found (util-linux)"
    getent group "$UP_GROUP" >/dev/null || fail "accel-lab up made no group $UP_GROUP"
    for u in "$@"; do
        id "$u" >/dev/null 2>&1 || fail "user $u does not exist"
        if ! id -nG "$u" | tr ' ' '\n' | grep -qx "$UP_GROUP"; then
            gpasswd -a "$u" "$UP_GROUP" >/dev/null || fail "cannot add $u to $UP_GROUP"
            UP_ADDED+=("$u")
        fi
    done
    # netns.sh's cleanup runs on EXIT; ours goes first, then it.
    trap 'unpriv_cleanup; cleanup' EXIT
    ACCEL_LAB_BROKER=${IT_BROKER:-} "$ACCEL_LAB" broker start >"$T/broker-start.out" 2>&1 ||
        fail "accel-lab broker start: $(tail -2 "$T/broker-start.out" | tr '\n' ' ')"
    log "$(cat "$T/broker-start.out")"
}

# as_argv USER ARGS...: NSARGV for an accelerated program of USER in NS_A
# (leading NAME=value arguments are its extra environment).
as_argv() {
    local user=$1 envs=()
    shift
    while [[ $# -gt 0 && $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
        envs+=("$1")
        shift
    done
    NSARGV=(ip netns exec "$NS_A" setpriv --reuid="$user" --regid="$(id -g "$user")"
        --init-groups --inh-caps=-all env -u ACCEL_LAB_TAG HOME="$T" "${LAB_ENV[@]}"
        ${ACCEL_LIBRARY:+ACCEL_LIBRARY=$ACCEL_LIBRARY} "${envs[@]}" "$ACCEL_RUN" "$@")
}

bg_start_as() {
    local name=$1 user=$2
    shift 2
    as_argv "$user" "$@"
    bg_exec "$name"
}

AX_as() {
    local user=$1
    shift
    as_argv "$user" "$@"
    timeout -k 5 "${IT_FG_TIMEOUT:-180}" "${NSARGV[@]}"
}

# need_programs PROG...: fail unless each is installed (tools/setup.sh
# installs redis-server and redis-tools).
need_programs() {
    local p
    for p in "$@"; do
        command -v "$p" >/dev/null || fail "$p is not installed (tools/setup.sh installs it)"
    done
}

# redis_big_roundtrip: SET and GET of a 256 KiB value ($T/big) through
# RC (the caller's redis-cli function), checked by sha256.
redis_big_roundtrip() {
    head -c 196608 /dev/urandom | base64 -w0 >"$T/big"
    check_eq "SET of 256 KiB" "$(RC -x set big <"$T/big")" OK
    check_eq "GET of 256 KiB: sha256" \
        "$(RC --raw get big | head -c "$(stat -c %s "$T/big")" | sha256sum | cut -d' ' -f1)" \
        "$(sha256sum <"$T/big" | cut -d' ' -f1)"
}

# perm_ok PATH: no access at all for others.
perm_ok() { [[ -e $1 && $(($(stat -c '%a' "$1" | sed 's/^/8#/') & 7)) -eq 0 ]]; }

check_private() {
    local pid dir f n bad
    check "/run/accel is 2770 root:$UP_GROUP" \
        test "$(stat -c '%a %U %G' /run/accel)" = "2770 root $UP_GROUP"
    for f in /run/accel/broker-*.sock; do
        check "broker socket $f is 0660 root:$UP_GROUP" \
            test "$(stat -c '%a %U %G' "$f")" = "660 root $UP_GROUP"
    done
    for pid in "$@"; do
        # What accel made on disk for this process and its user: the
        # interface lock, the EAL runtime directory, the hugepage files.
        bad=$(find /run/accel /dev/hugepages /dev/shm /tmp/dpdk -xdev \
            -user "$(stat -c %U "/proc/$pid")" -perm /o=rwx 2>/dev/null)
        check_eq "pid $pid: no file of its user open to others" "$bad" ""
        # Its hugepages are mapped, and their files were unlinked once the
        # port was up (runtime/eal.c): nothing on disk another user could
        # open, and nothing left behind if it is killed.
        n=$(grep -c "/run/accel/hugepages/accel-${pid}map_.* (deleted)" "/proc/$pid/maps")
        check_ge "pid $pid: maps its hugepages from /run/accel/hugepages" "$n" 1
        n=$(find /run/accel/hugepages -name "accel-${pid}map_*" | wc -l)
        check_eq "pid $pid: no hugepage file of it on disk" "$n" 0
        dir=/run/accel/run-$(stat -c %u "/proc/$pid")
        check "pid $pid: EAL runtime dir $dir is 0700" perm_ok "$dir"
        # Its memory (the shared region is a memfd, the hugepages are
        # mapped) and its fds are out of reach of another user.
        check_not "pid $pid: nobody cannot list its fds" \
            setpriv --reuid=nobody --regid=nogroup --clear-groups ls "/proc/$pid/fd"
        check_not "pid $pid: nobody cannot read its memory maps" \
            setpriv --reuid=nobody --regid=nogroup --clear-groups cat "/proc/$pid/maps"
    done
    f=/run/accel/iface-$(A stat -L -c %i /proc/self/ns/net)-$VETH_A.lock
    check "interface lock $f: nothing for others" perm_ok "$f"
    check "broker log is owner-only" perm_ok "/run/accel-broker${ACCEL_LAB_TAG:-}.log"
}

# broker_released PID USER: the broker's log says PID's connection closed
# and its interface went back (the log is appended to across runs: the pid
# tells this run's line).
broker_released() {
    grep -q "pid $1 uid $(id -u "$2"): connection closed; $VETH_A released" \
        "/run/accel-broker${ACCEL_LAB_TAG:-}.log"
}

# check_on_stack NAME USER ACCEPTS FRAMES [kept|gone]: NAME ran on the
# stack through the broker and has exited; the broker released the
# interface and left accel's program attached (kept, ACCEL_XDP_KEEP=1) or
# detached it (gone, ACCEL_XDP_KEEP=0).
check_on_stack() {
    local name=$1 user=$2 prog=${5:-kept}
    check "$name: data path through accel-broker" \
        grep -q 'stats: data path: af_xdp on .*(steered, accel-broker)' "$T/$name.err"
    check_ge "$name: tcp_accept" "$(stat_get "$T/$name.err" tcp_accept)" "$3"
    check_ge "$name: rx_frames" "$(stat_get "$T/$name.err" rx_frames)" "$4"
    check_not "$name: no accel error or warning" grep -E 'accel\[.* (error|warn) ' "$T/$name.err"
    check "broker: released" busywait 3000 broker_released "$(bg_pid "$name")" "$user"
    if [[ $prog == gone ]]; then
        busywait 3000 eval "! ip -n $NS_A -d link show dev $VETH_A | grep -q prog/xdp" ||
            check_fail "an XDP program is left on $VETH_A (ACCEL_XDP_KEEP=0)"
    else
        check "accel's program stays attached to $VETH_A" \
            eval "ip -n $NS_A -d link show dev $VETH_A | grep -q 'name accel_steer'"
    fi
}
