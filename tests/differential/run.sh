#!/bin/bash
# Differential runner: runs each scenario program once on the kernel and
# once under accel-run, and compares their stdout traces (plus exit status).
#
#   run.sh [options] [scenario...]      scenario: full name or its NNN prefix
#     --kernel-only     run the kernel world once; FAIL on a non-zero exit
#     --kernel-twice    run the kernel world twice and compare (self-check:
#                       the traces must be deterministic)
#     --bindir DIR      where CMake built peer, scen/ and scenarios.list
#                       (default: $ACCEL_DIFF_BINDIR or build/tests/differential)
#     --accel-run PATH  accel-run to use (default: $ACCEL_RUN, the build tree,
#                       then PATH)
#     --lib PATH        libaccel.so for accel-run (exported as ACCEL_LIBRARY;
#                       default: accel-run's own choice)
#     --out DIR         where traces and diffs go (default: BINDIR/results)
#     --timeout SEC     per-scenario timeout (default 30)
#     --wire            also compare what goes on the wire: capture the TCP
#                       frames on the peer's veth in each world (tcpdump),
#                       reduce each scenario's flows with wire.py and compare
#                       them (wire_allowlist.txt holds accepted differences)
#
# Worlds (same addresses in both, so traces are comparable):
#   kernel  peer in netns accel-dk$TAG (10.200.0.1/24, fd00:200::1/64),
#           subject in accel-da$TAG (kernel addresses 10.200.0.2/24,
#           fd00:200::2/64), joined by a veth without DAD; made here and
#           removed at exit.
#   accel   the lab from `accel-lab up` (netns accel-k$TAG holds the peer at
#           10.200.0.1 and fd00:200::1, the subject runs in accel-a$TAG under
#           accel-run with the ACCEL_* variables accel-lab prints: ACCEL_IP
#           10.200.0.2/24, ACCEL_IP6 fd00:200::2/64). The lab is taken down
#           at exit only if this run brought it up.
# TAG is $ACCEL_LAB_TAG (empty: the canonical lab names).
#
# allowlist.txt lines "scenario-name  reason" accept a known difference.
# kernel_only.txt names the scenarios that open no socket the stack serves;
# every other one fails if its accel run put no socket on the stack.
# Exit: 0 all pass, 1 an unexpected difference or failure, 4 skipped (no
# root, or accel-run missing in the full mode).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BINDIR=${ACCEL_DIFF_BINDIR:-$REPO/build/tests/differential}
ACCEL_RUN_BIN=${ACCEL_RUN:-}
LIBPATH=${ACCEL_LIBRARY:-}
OUT=
TIMEOUT=30
MODE=full
TAG=${ACCEL_LAB_TAG:-}
WANT=()
WIRE=
CAP_PID=

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel-only) MODE=kernel-only ;;
	--kernel-twice) MODE=kernel-twice ;;
	--bindir) BINDIR=$2; shift ;;
	--accel-run) ACCEL_RUN_BIN=$2; shift ;;
	--lib) LIBPATH=$2; shift ;;
	--out) OUT=$2; shift ;;
	--timeout) TIMEOUT=$2; shift ;;
	--wire) WIRE=1 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) WANT+=("$1") ;;
	esac
	shift
done
OUT=${OUT:-$BINDIR/results}

skip() { echo "SKIP: $*"; exit 4; }
die() { echo "run.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
# As root nothing skips (tests/README.md): a missing tool fails the run
# (tools/debian-packages.txt lists them; CI installs that list).
if [ -n "$WIRE" ]; then
	for tool in tcpdump python3 ethtool; do
		command -v "$tool" >/dev/null || die "--wire needs $tool (tools/debian-packages.txt)"
	done
fi
WIRE_SETTLE=0.5
command -v ip >/dev/null || skip "iproute2 missing"
[ -f "$BINDIR/scenarios.list" ] || die "no $BINDIR/scenarios.list (build first, or pass --bindir)"
[[ -z $TAG || $TAG =~ ^[A-Za-z0-9_]{1,9}$ ]] || die "ACCEL_LAB_TAG must be 1-9 characters [A-Za-z0-9_]"

# Scenario selection: all of scenarios.list, or the ones named (name or prefix).
mapfile -t ALL < "$BINDIR/scenarios.list"
SCEN=()
if [ ${#WANT[@]} -eq 0 ]; then
	SCEN=("${ALL[@]}")
else
	for w in "${WANT[@]}"; do
		found=
		for s in "${ALL[@]}"; do
			case "$s" in "$w"|"$w"_*) SCEN+=("$s"); found=1 ;; esac
		done
		[ -n "$found" ] || die "unknown scenario $w"
	done
fi

if [ "$MODE" = full ]; then
	if [ -z "$ACCEL_RUN_BIN" ]; then
		for c in "$BINDIR/../../tools/accel-run" "$(command -v accel-run)"; do
			[ -n "$c" ] && [ -x "$c" ] && { ACCEL_RUN_BIN=$c; break; }
		done
	fi
	[ -n "$ACCEL_RUN_BIN" ] && [ -x "$ACCEL_RUN_BIN" ] || skip "accel-run not built"
	LAB=${ACCEL_LAB:-}
	if [ -z "$LAB" ]; then
		for c in "$(dirname "$ACCEL_RUN_BIN")/accel-lab" "$REPO/tools/accel-lab" \
			 "$(command -v accel-lab)"; do
			[ -n "$c" ] && [ -x "$c" ] && { LAB=$c; break; }
		done
	fi
	[ -n "$LAB" ] || skip "accel-lab not found"
fi

KP=accel-dk$TAG          # kernel world: peer namespace
KS=accel-da$TAG          # kernel world: subject namespace
AK=accel-k$TAG           # lab: kernel peer namespace
AA=accel-a$TAG           # lab: accelerated namespace
PEER_PIDS=()
LAB_UP_HERE=
LABENV=()

netns_exists() { ip netns list | awk '{print $1}' | grep -qx "$1"; }

kernel_down() {
	netns_exists "$KP" && ip netns del "$KP"
	netns_exists "$KS" && ip netns del "$KS"
	return 0
}

cleanup() {
	local p
	capture_stop
	for p in "${PEER_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	kernel_down
	if [ -n "$LAB_UP_HERE" ]; then
		ACCEL_LAB_TAG=$TAG "$LAB" down >/dev/null 2>&1
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

kernel_up() {
	kernel_down
	ip netns add "$KP" && ip netns add "$KS" || die "cannot create namespaces"
	ip link add "vdk$TAG" netns "$KP" type veth peer name "vda$TAG" netns "$KS" ||
		die "cannot create veth"
	# No DAD (link-local and global addresses usable at once), no router
	# solicitations from the peer (as in the lab).
	ip netns exec "$KP" sysctl -qw "net.ipv6.conf.vdk$TAG.accept_dad=0" \
		"net.ipv6.conf.vdk$TAG.accept_ra=0" "net.ipv6.conf.vdk$TAG.disable_ipv6=0" &&
		ip netns exec "$KS" sysctl -qw "net.ipv6.conf.vda$TAG.accept_dad=0" \
			"net.ipv6.conf.vda$TAG.disable_ipv6=0" || die "cannot set up IPv6 on the veth"
	ip -n "$KP" addr add 10.200.0.1/24 dev "vdk$TAG"
	ip -n "$KS" addr add 10.200.0.2/24 dev "vda$TAG"
	ip -n "$KP" addr add fd00:200::1/64 dev "vdk$TAG" nodad
	ip -n "$KS" addr add fd00:200::2/64 dev "vda$TAG" nodad
	local ns
	for ns in "$KP" "$KS"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$KP" link set "vdk$TAG" up
	ip -n "$KS" link set "vda$TAG" up
	if [ -n "$WIRE" ]; then
		# As in the lab (accel-lab): no GSO/TSO super-frames, so the peer's
		# capture holds the segments a NIC would carry.
		local feat
		for feat in tso gso gro lro; do
			ip netns exec "$KP" ethtool -K "vdk$TAG" "$feat" off >/dev/null 2>&1
			ip netns exec "$KS" ethtool -K "vda$TAG" "$feat" off >/dev/null 2>&1
		done
	fi
}

# capture_start WORLD: tcpdump of the TCP frames on the peer's veth into
# OUT/WORLD.pcap (headers only), started before the world's first scenario.
capture_start() {
	local world=$1 ns ifc i
	case "$world" in
	kernel*) ns=$KP ifc=vdk$TAG ;;
	accel*) ns=$AK ifc=veth-k$TAG ;;
	esac
	: > "$OUT/$world.capture.log"
	ip netns exec "$ns" tcpdump -Z root --immediate-mode -i "$ifc" -n -s 160 -U -w "$OUT/$world.pcap" tcp \
		2> "$OUT/$world.capture.log" &
	CAP_PID=$!
	for i in $(seq 200); do
		grep -q 'listening on' "$OUT/$world.capture.log" && return 0
		kill -0 "$CAP_PID" 2>/dev/null || break
		sleep 0.02
	done
	die "tcpdump in $ns did not start: $(cat "$OUT/$world.capture.log")"
}

# capture_stop: SIGINT makes tcpdump write what it holds and exit.
capture_stop() {
	[ -n "$CAP_PID" ] || return 0
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
	CAP_PID=
}

lab_up() {
	netns_exists "$AA" || LAB_UP_HERE=1
	local out
	out=$(ACCEL_LAB_TAG=$TAG "$LAB" up 2>"$OUT/lab-up.stderr") ||
		die "accel-lab up failed: $(cat "$OUT/lab-up.stderr")"
	# Every ACCEL_*=value token accel-lab prints is a setting for accel-a.
	mapfile -t LABENV < <(printf '%s\n' "$out" | grep -o 'ACCEL_[A-Z0-9_]*=[^ ]*' |
		grep -v '^ACCEL_LAB_TAG=' | awk '!seen[$0]++')
	[ -z "$LIBPATH" ] || LABENV+=("ACCEL_LIBRARY=$LIBPATH")
	[ ${#LABENV[@]} -gt 0 ] || die "accel-lab up printed no ACCEL_* variables"
	netns_exists "$AA" && netns_exists "$AK" || die "lab namespaces $AK/$AA missing"
}

# start_peer NS: the peer program in NS; waits for its "ready" line.
start_peer() {
	local ns=$1 log="$OUT/peer-$1.log" i
	: > "$log"
	ip netns exec "$ns" "$BINDIR/peer" 10.200.0.2 > "$log" 2>&1 &
	PEER_PIDS+=($!)
	for i in $(seq 100); do
		grep -q '^ready' "$log" && return 0
		kill -0 $! 2>/dev/null || break
		sleep 0.05
	done
	die "peer in $ns did not start: $(cat "$log")"
}

# run_world WORLD: every selected scenario; traces in OUT/WORLD/NAME.trace.
run_world() {
	local world=$1 s rc t0
	mkdir -p "$OUT/$world"
	[ -z "$WIRE" ] || { : > "$OUT/$world.times"; capture_start "$world"; }
	for s in "${SCEN[@]}"; do
		local tr="$OUT/$world/$s.trace" er="$OUT/$world/$s.stderr"
		t0=$EPOCHREALTIME
		case "$world" in
		kernel*)
			ip netns exec "$KS" timeout -k 2 "$TIMEOUT" "$BINDIR/scen/$s" \
				> "$tr" 2> "$er" < /dev/null ;;
		accel*)
			ip netns exec "$AA" timeout -k 2 "$TIMEOUT" \
				env -u ACCEL_LAB_TAG ACCEL_STATS=2 "${LABENV[@]}" \
				"$ACCEL_RUN_BIN" "$BINDIR/scen/$s" > "$tr" 2> "$er" < /dev/null ;;
		esac
		rc=$?
		echo "exit=$rc" >> "$tr"
		[ -z "$WIRE" ] || echo "$s $t0 $EPOCHREALTIME" >> "$OUT/$world.times"
	done
	if [ -n "$WIRE" ]; then
		# The last scenario's closing frames, then the capture's end.
		sleep "$WIRE_SETTLE"
		capture_stop
		python3 "$HERE/wire.py" view "$OUT/$world.pcap" "$OUT/$world.times" \
			"$OUT/wire/$world" || die "wire.py view failed for $world"
	fi
}

# wire_compare A B [strict]: the wire views of every scenario.
wire_compare() {
	[ -n "$WIRE" ] || return 0
	python3 "$HERE/wire.py" "compare${3:+-strict}" "$OUT/wire/$1" "$OUT/wire/$2" \
		"$OUT/diff" "$HERE/wire_allowlist.txt" "${SCEN[@]}"
}

# wire_recheck SCENARIO...: the scenarios whose wire views differed. Some
# close/RST races have several outcomes on Linux itself (the kernel world
# alone gives them run to run): each is run WIRE_RERUNS more times in both
# worlds, and passes when one of accel's runs matches one of the kernel's
# (allowlist applied). A difference that no run of either world removes
# fails. Returns 1 when any still differs.
WIRE_RERUNS=3
wire_recheck() {
	local left=("$@") r k a s still saved=("${SCEN[@]}")
	local kw=(kernel) aw=(accel)
	for r in $(seq "$WIRE_RERUNS"); do
		[ ${#left[@]} -gt 0 ] || break
		SCEN=("${left[@]}")
		run_world "kernel_r$r" >/dev/null
		run_world "accel_r$r" >/dev/null
		kw+=("kernel_r$r")
		aw+=("accel_r$r")
		still=()
		for s in "${left[@]}"; do
			local ok=
			for k in "${kw[@]}"; do
				for a in "${aw[@]}"; do
					[ -f "$OUT/wire/$k/$s.wire" ] && [ -f "$OUT/wire/$a/$s.wire" ] || continue
					if python3 "$HERE/wire.py" compare "$OUT/wire/$k" "$OUT/wire/$a" \
						"$OUT/diff" "$HERE/wire_allowlist.txt" "$s" >/dev/null; then
						ok="$k vs $a"
						break 2
					fi
				done
			done
			if [ -n "$ok" ]; then
				echo "WIRE-PASS $s on rerun ($ok): a race with several outcomes on Linux too"
			else
				still+=("$s")
			fi
		done
		left=("${still[@]}")
	done
	SCEN=("${saved[@]}")
	for s in "${left[@]}"; do
		echo "WIRE-FAIL $s: differs in every run ($((WIRE_RERUNS + 1)) per world)"
	done
	[ ${#left[@]} -eq 0 ]
}

allowed_reason() {
	[ -f "$HERE/allowlist.txt" ] || return 1
	awk -v n="$1" '$1 == n { $1 = ""; sub(/^ +/, ""); print; found = 1 } END { exit !found }' \
		"$HERE/allowlist.txt"
}

# compare A B [strict]: PASS/FAIL/ALLOWED per scenario; returns 1 on any
# failure. "strict" ignores the allowlist (the kernel self-check).
compare() {
	local a=$1 b=$2 strict=${3:-} s bad=0 npass=0 nfail=0 nallow=0 reason
	mkdir -p "$OUT/diff"
	for s in "${SCEN[@]}"; do
		local d="$OUT/diff/$s.diff"
		if ! grep -qx 'exit=0' "$OUT/$a/$s.trace"; then
			echo "FAIL $s: $a run exited $(tail -1 "$OUT/$a/$s.trace") (see $OUT/$a/$s.stderr)"
			nfail=$((nfail + 1)); bad=1; continue
		fi
		if diff -u --label "$a/$s" --label "$b/$s" "$OUT/$a/$s.trace" "$OUT/$b/$s.trace" > "$d"; then
			rm -f "$d"
			if reason=$(allowed_reason "$s"); then
				echo "PASS $s (allowlist entry no longer needed: $reason)"
			else
				echo "PASS $s"
			fi
			npass=$((npass + 1))
		elif [ -z "$strict" ] && reason=$(allowed_reason "$s"); then
			echo "ALLOWED $s: $reason"
			nallow=$((nallow + 1))
		else
			echo "FAIL $s (diff: $d)"
			sed -n '3,40p' "$d" | sed 's/^/    /'
			nfail=$((nfail + 1)); bad=1
		fi
	done
	echo "differential $a vs $b: $npass pass, $nallow allowed, $nfail fail of ${#SCEN[@]}"
	if [ "$b" = accel ]; then
		# Evidence of the bypass (informational): runs whose ACCEL_STATS
		# report shows frames received through the DPDK port.
		local nport
		nport=$(grep -lE 'rx_frames +[1-9]' "$OUT"/accel/*.stderr 2>/dev/null | wc -l)
		echo "accel runs with frames through the DPDK port: $nport of ${#SCEN[@]}"
		on_stack || bad=1
	fi
	return $bad
}

# on_stack: every scenario not in kernel_only.txt must have put at least
# one socket on the stack (ACCEL_STATS sock_accel, summed over its
# processes): a trace that matches because the whole run silently fell
# back to the kernel proves nothing. Returns 1 on any such scenario.
on_stack() {
	local s n bad=0 listed
	for s in "${SCEN[@]}"; do
		n=$(awk '$2 == "stats:" && $3 == "sock_accel" { t += $4 } END { print t + 0 }' \
			"$OUT/accel/$s.stderr" 2>/dev/null)
		listed=
		grep -qx "$s" <(awk '!/^#/ && NF { print $1 }' "$HERE/kernel_only.txt") && listed=1
		if [ "${n:-0}" -eq 0 ] && [ -z "$listed" ]; then
			echo "FAIL $s: no socket on the stack in the accel run (sock_accel 0; a silent fallback, or list it in kernel_only.txt)"
			bad=1
		elif [ "${n:-0}" -gt 0 ] && [ -n "$listed" ]; then
			echo "NOTE $s: in kernel_only.txt but put $n socket(s) on the stack"
		fi
	done
	return $bad
}

rm -rf "$OUT"
mkdir -p "$OUT"
kernel_up
start_peer "$KP"
run_world kernel

case "$MODE" in
kernel-only)
	bad=0
	for s in "${SCEN[@]}"; do
		if grep -qx 'exit=0' "$OUT/kernel/$s.trace"; then
			echo "RAN $s"
		else
			echo "FAIL $s: $(tail -1 "$OUT/kernel/$s.trace") (see $OUT/kernel/$s.stderr)"
			bad=1
		fi
	done
	echo "traces in $OUT/kernel"
	exit $bad ;;
kernel-twice)
	run_world kernel2
	compare kernel kernel2 strict; rc=$?
	wire_compare kernel kernel2 strict || rc=1
	exit $rc ;;
full)
	lab_up
	start_peer "$AK"
	run_world accel
	compare kernel accel; rc=$?
	if [ -n "$WIRE" ] && ! wire_compare kernel accel > "$OUT/wire.out"; then
		cat "$OUT/wire.out"
		mapfile -t WF < <(sed -n 's/^WIRE-FAIL \([^ :]*\).*/\1/p' "$OUT/wire.out")
		wire_recheck "${WF[@]}" || rc=1
	else
		cat "$OUT/wire.out" 2>/dev/null
	fi
	exit $rc ;;
esac
