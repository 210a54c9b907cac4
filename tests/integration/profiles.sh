#!/bin/bash
# Scenario: a profile given to accel-run reaches the library. An accelerated
# python in the accelerated netns (no kernel IP there: a working connection
# is the stack's) connects to a kernel helper in the peer netns, which
# connects back to the python's accelerated listener; python prints
# getsockopt(TCP_NODELAY) of the connected and of the accepted socket:
#   no profile                                  0 0  (Linux's default)
#   --profile latency (ACCEL_TCP_NODELAY=1)     1 1
#   --profile latency, ACCEL_TCP_NODELAY=0      0 0  (the environment wins)
#   the same with --force-profile               1 1  (the profile wins)
# With the profile, setsockopt(TCP_NODELAY, 0) still clears it. With
# ACCEL_LOG_LEVEL=info the library logs each setting the profile made, with
# the profile's file:line, as `accel-run --explain` prints it.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

lab_up
PORT=7411
cat >"$T/helper.py" <<'EOF'
# Kernel side: for each connection, read the port the prober listens on,
# connect back to it, hold both until the prober closes (a connection
# that sends nothing is just closed).
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(8)
while True:
    c, peer = s.accept()
    data = c.recv(16)
    if data:  # wait_tcp's probe connections send nothing
        back = socket.create_connection((peer[0], int(data)), timeout=10)
        c.recv(1)
        back.close()
    c.close()
EOF
cat >"$T/probe.py" <<'EOF'
# Accelerated side: TCP_NODELAY of a connected and of an accepted socket,
# then of the connected one after setsockopt(TCP_NODELAY, 0).
import socket, sys
kip, kport, aip = sys.argv[1], int(sys.argv[2]), sys.argv[3]
nd = lambda s: s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
l = socket.socket()
l.bind((aip, 0))
l.listen(1)
l.settimeout(10)
c = socket.create_connection((kip, kport), timeout=10)
c.sendall(str(l.getsockname()[1]).encode())
a, _ = l.accept()
connected, accepted = nd(c), nd(a)
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
print(connected, accepted, nd(c))
a.close()
c.close()
EOF
bg_start helper K "$PY" "$T/helper.py" "$KIP" "$PORT"
wait_tcp K "$KIP" "$PORT" || fail "kernel helper did not listen on $KIP:$PORT"

# probe TAG ARGS...: run the probe (AX: leading VAR=value, then accel-run
# options), print its output line.
probe() {
    local tag=$1
    shift
    AX "$@" "$PY" "$T/probe.py" "$KIP" "$PORT" "$AIP" >"$T/$tag.out" 2>"$T/$tag.err"
    local rc=$?
    ((rc == 0)) || log "  [$tag] exit $rc, stderr: $(tail -c 600 "$T/$tag.err" | tr '\n' '|')"
    cat "$T/$tag.out"
}
check_eq "no profile: TCP_NODELAY connected/accepted/after clear" "$(probe none)" "0 0 0"
check_eq "--profile latency: TCP_NODELAY set on both, clearable" "$(probe lat --profile latency)" "1 1 0"
check_eq "--profile latency, ACCEL_TCP_NODELAY=0: the environment wins" \
    "$(probe envwins ACCEL_TCP_NODELAY=0 --profile latency)" "0 0 0"
check_eq "--profile latency --force-profile, ACCEL_TCP_NODELAY=0: the profile wins" \
    "$(probe forced ACCEL_TCP_NODELAY=0 --profile latency --force-profile)" "1 1 0"

# The library logs the profile's settings with file:line at info level, the
# same lines --explain prints.
probe info ACCEL_LOG_LEVEL=info --profile latency >/dev/null
ns_argv AX --profile latency --explain
"${NSARGV[@]}" >"$T/explain.out" 2>&1 || check_fail "accel-run --explain: $(tr '\n' '|' <"$T/explain.out")"
LAT=$(sed -n 's/^ACCEL_PROFILE=\([^ ]*\) .*/\1/p' "$T/explain.out")
[[ -f $LAT ]] || fail "--explain did not name the profile file: $(grep ACCEL_PROFILE "$T/explain.out")"
n=0
while IFS= read -r entry; do
    ln=${entry%%:*} name=${entry#*:}
    name=${name%%=*}
    want=$(grep "^$name=" "$T/explain.out")
    check "library logs '$want'" grep -qF "cfg: $want" "$T/info.err"
    [[ $want == *"profile latency ($LAT:$ln)" ]] || check_fail "--explain row of $name: '$want'"
    n=$((n + 1))
done < <(grep -n -E '^ACCEL_' "$LAT")
check_ge "settings of the latency profile checked" "$n" 3
bg_stop helper
finish
