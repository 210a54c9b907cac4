#!/bin/bash
# Scenario: `accel-lab impair` (tools/accel-lab, tools/impair/accel-impaird)
# does what it says, in both directions, outside the code under test. The
# accelerated netns gets the kernel address 10.200.0.2 for the length of the
# test (as ../shared/acceptance/loss.sh does), so both ends are the kernel
# and every figure is the impairment's alone; numbered UDP streams
# (tests/lib/impair_probe.py) run both ways at once, 2000 datagrams each:
#   bad arguments: exit 2 and one line naming the argument;
#   --loss 20: 10-30 % lost each way, the nft counters agree; ARP still
#     resolves through --loss 100 (asked from the accelerated side: the
#     kernel peer's own IP packets are copied, and lost, before they reach
#     its neighbour table, so they never make it send a request);
#   --dup 20: 10-30 % extra copies each way;
#   --reorder 20: 5-40 % arrive out of order each way; the same --seed
#     chooses the same packets (the daemon's counters, twice);
#   --delay 20: ping -U RTT 38-60 ms (ping without -U times replies from
#     their arrival on veth-k, before the "in" delay); applied twice: still
#     ~40 ms and one daemon (replaced, not stacked); --delay 10:5 spreads it;
#   --delay 10: a kernel TCP sender still gets > 30 Mbit/s (TCP small queues
#     would cap it at ~5 Mbit/s if held packets still belonged to it; an
#     idle machine gives some 200-300, a CI machine busy with other work has
#     given 95, so the floor only tells the two apart);
#   --corrupt 10: the receivers' UdpInCsumErrors grow by what the daemon
#     corrupted (5-20 %), and a capture shows bad UDP checksums;
#   --rate 50: a 200 Mbit/s UDP flood arrives at 35-60 Mbit/s each way;
#   a killed daemon leaves the link working (fail-open);
#   --off: 1000 pings, none lost, and nothing of ours left in accel-k;
#   `accel-lab down` of a lab with an impairment removes it and its daemon.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

PROBE="$PY $LIBDIR/impair_probe.py"
# The daemon of this build tree (ctest sets IT_IMPAIRD); accel-lab also
# finds one next to itself or in ../build/tools.
impair() { ACCEL_LAB_IMPAIRD=${IT_IMPAIRD:-} "$ACCEL_LAB" impair "$@"; }
# apply ARGS...: impair ARGS, or fail the test.
apply() { impair "$@" >"$T/apply.out" 2>&1 || fail "impair $*: $(cat "$T/apply.out")"; }
show_get() { impair --show | sed -n "s/^$1=//p"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", (b > 0 ? 100 * a / b : -1) }'; }
# in_range DESC VALUE MIN MAX (integers)
in_range() {
    if [[ $2 =~ ^-?[0-9]+$ ]] && (($2 >= $3 && $2 <= $4)); then
        pass "$1 ($2 in $3..$4)"
    else
        check_fail "$1: got '$2', want $3..$4"
    fi
}
kv() { sed -n "s/.*\b$1=\([0-9.]*\).*/\1/p" "$2"; }

# --- bad arguments (no lab needed) ---------------------------------------
bad_arg() { # ARGS... : exit 2, one stderr line naming the first argument
    local rc
    "$ACCEL_LAB" impair "$@" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    if ((rc == 2)) && [[ $(wc -l <"$T/bad.err") == 1 ]] && grep -q -- "$1" "$T/bad.err" &&
        [[ ! -s $T/bad.out ]]; then
        pass "impair $* -> exit 2: $(cat "$T/bad.err")"
    else
        check_fail "impair $*: rc $rc, stderr '$(cat "$T/bad.err")', stdout '$(cat "$T/bad.out")'"
    fi
}
bad_arg --loss 101
bad_arg --dup abc
bad_arg --reorder -1
bad_arg --delay 5:x
bad_arg --corrupt
bad_arg --rate 0
bad_arg --seed 1x
bad_arg --dir sideways
bad_arg --frobnicate
bad_arg --off --loss 1

# --- the lab, with a kernel at 10.200.0.2 ----------------------------------
lab_up
imp_cleanup() {
    impair --off >/dev/null 2>&1
    A ip addr del "$AIP/24" dev "$VETH_A" 2>/dev/null
}
trap 'rc=$?; imp_cleanup; (exit $rc); cleanup' EXIT
impair --off >/dev/null || fail "impair --off on a clean lab failed"
A ip addr add "$AIP/24" dev "$VETH_A" || fail "could not give $VETH_A $AIP"
slowwait 10 K ping -c 1 -W 1 -q "$AIP" >/dev/null || fail "$AIP (kernel in $NS_A) does not answer"

# streams NAME [SEND ARGS...]: one numbered stream each way at once, "in"
# ($NS_A -> $KIP:7001) and "out" ($NS_K -> $AIP:7002); results in
# $T/NAME.in and $T/NAME.out (impair_probe.py recv's key=value line).
streams() {
    local name=$1
    shift
    local sargs=("$@")
    ((${#sargs[@]})) || sargs=(2000 --pps 2000)
    K $PROBE recv "$KIP" 7001 >"$T/$name.in" 2>"$T/$name.in.err" &
    local rin=$!
    A $PROBE recv "$AIP" 7002 >"$T/$name.out" 2>"$T/$name.out.err" &
    local rout=$!
    busywait 5000 grep -q ready "$T/$name.in.err" || fail "receiver in $NS_K did not start"
    busywait 5000 grep -q ready "$T/$name.out.err" || fail "receiver in $NS_A did not start"
    A $PROBE send "$KIP" 7001 "${sargs[@]}" >/dev/null &
    local sin=$!
    K $PROBE send "$AIP" 7002 "${sargs[@]}" >/dev/null
    wait "$sin" "$rin" "$rout"
    log "$name: in: $(cat "$T/$name.in")"
    log "$name: out: $(cat "$T/$name.out")"
}

# --- loss --------------------------------------------------------------------
apply --loss 20
streams loss
for d in in out; do
    in_range "--loss 20: $d lost %" "$(pct $((2000 - $(kv unique "$T/loss.$d"))) 2000)" 10 30
done
impair --show >"$T/show.txt"
in_range "--show in_packets" "$(kv in_packets "$T/show.txt")" 2000 2100
in_range "--show out_packets" "$(kv out_packets "$T/show.txt")" 2000 2100
check_eq "--show in_lost = the datagrams that did not arrive" \
    "$(kv in_lost "$T/show.txt")" "$((2000 - $(kv unique "$T/loss.in")))"
check_eq "--show out_lost = the datagrams that did not arrive" \
    "$(kv out_lost "$T/show.txt")" "$((2000 - $(kv unique "$T/loss.out")))"

# ARP: $NS_A's kernel asks for $KIP; the request and the answer pass.
apply --loss 100
A ip neigh flush dev "$VETH_A"
check "--loss 100: ping gets nothing back" eval "! A ping -c 2 -W 1 -q $KIP >/dev/null 2>&1"
check "--loss 100: ARP still resolves $KIP" eval "A ip neigh show $KIP dev $VETH_A | grep -q lladdr"

# --- duplication ---------------------------------------------------------------
apply --dup 20
streams dup
for d in in out; do
    in_range "--dup 20: $d extra copies %" "$(pct "$(kv dups "$T/dup.$d")" 2000)" 10 30
    check_eq "--dup 20: $d every datagram arrived" "$(kv unique "$T/dup.$d")" 2000
done
in_range "--show out_duplicated" "$(show_get out_duplicated)" 200 600

# --- reordering ------------------------------------------------------------------
chosen() { # reordered + reorder_timeouts of the daemon, per direction
    impair --show >"$T/show.txt"
    echo "$(($(kv daemon_in_reordered "$T/show.txt") + $(kv daemon_in_reorder_timeouts "$T/show.txt")))" \
        "$(($(kv daemon_out_reordered "$T/show.txt") + $(kv daemon_out_reorder_timeouts "$T/show.txt")))"
}
apply --reorder 20 --seed 42
streams reorder
for d in in out; do
    in_range "--reorder 20: $d out of order %" "$(pct "$(kv out_of_order "$T/reorder.$d")" 2000)" 5 40
    check_eq "--reorder 20: $d every datagram arrived" "$(kv unique "$T/reorder.$d")" 2000
done
first=$(chosen)
apply --reorder 20 --seed 42
streams reorder2
check_eq "--reorder 20 --seed 42 twice: the daemon chose the same packets (in out)" "$(chosen)" "$first"

# --- delay and jitter -------------------------------------------------------------
# rtt FIELD PING_ARGS...: min/avg/max/mdev of ping -U, as an integer ms field.
rtt() {
    local f=$1
    shift
    K ping -U -q "$@" "$AIP" | tee -a "$T/ping.txt" | awk -F'[/ =]+' -v f="$f" \
        '/^rtt/ { split("min avg max mdev", n, " "); for (i = 1; i <= 4; i++) if (n[i] == f) printf "%d", $(5 + i) }'
}
apply --delay 20
in_range "--delay 20: ping -U avg RTT ms" "$(rtt avg -c 10 -i 0.05)" 38 60
apply --delay 20
in_range "--delay 20 again (replaced, not stacked): avg RTT ms" "$(rtt avg -c 10 -i 0.05)" 38 60
check_eq "--delay 20 again: one accel-impaird in $NS_K" \
    "$(ip netns pids "$NS_K" | xargs -r -I{} cat /proc/{}/comm 2>/dev/null | grep -c accel-impaird)" 1
if command -v iperf3 >/dev/null; then
    apply --delay 10
    A iperf3 -s -1 -B "$AIP" -p 5201 >"$T/iperf-s.log" 2>&1 &
    busywait 5000 eval "A ss -Htln | grep -q ':5201'" || fail "iperf3 server did not start"
    mbit=$(K iperf3 -c "$AIP" -p 5201 -t 2 -J | $PY -c \
        'import json,sys; print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))')
    check_ge "--delay 10: a kernel TCP sender in $NS_K gets Mbit/s" "$mbit" 30
    wait
else
    check_fail "iperf3 not installed (tools/debian-packages.txt lists it)"
fi
apply --delay 10:5 --seed 3
in_range "--delay 10:5: min RTT ms" "$(rtt min -c 50 -i 0.02)" 9 20
check_ge "--delay 10:5: RTT mdev ms" "$(tail -1 "$T/ping.txt" | awk -F'[/ =]+' '{ printf "%d", $9 }')" 2
in_range "--delay 10:5: max RTT ms" "$(tail -1 "$T/ping.txt" | awk -F'[/ =]+' '{ printf "%d", $8 }')" 15 35

# --- corruption ---------------------------------------------------------------------
csum_errors() { "$1" nstat -az UdpInCsumErrors | awk '$1 == "UdpInCsumErrors" { print $2 }'; }
apply --corrupt 10 --seed 9
k0=$(csum_errors K)
a0=$(csum_errors A)
A timeout 20 tcpdump -i "$VETH_A" -nn -vv -c 2000 udp port 7002 >"$T/corrupt.pcap.txt" 2>"$T/tcpdump.err" &
dump=$!
busywait 5000 grep -q 'listening on' "$T/tcpdump.err" || fail "tcpdump did not start: $(cat "$T/tcpdump.err")"
streams corrupt 2000 --pps 2000 --size 200
impair --show >"$T/show.txt"
kill "$dump" 2>/dev/null
wait "$dump" 2>/dev/null
for d in in:K out:A; do
    ns=${d#*:}
    d=${d%:*}
    got=$(($(csum_errors "$ns") - $([[ $ns == K ]] && echo "$k0" || echo "$a0")))
    in_range "--corrupt 10: $d receiver's UdpInCsumErrors %" "$(pct "$got" 2000)" 5 20
    check_eq "--corrupt 10: $d checksum errors = datagrams the daemon corrupted" \
        "$got" "$(kv "daemon_${d}_corrupted" "$T/show.txt")"
    check_eq "--corrupt 10: $d the others arrived" "$(kv unique "$T/corrupt.$d")" $((2000 - got))
done
check_ge "--corrupt 10: the capture in $NS_A shows bad UDP checksums" \
    "$(grep -c 'bad udp cksum' "$T/corrupt.pcap.txt")" 50

# --- rate ---------------------------------------------------------------------------
apply --rate 50
streams rate 36000 --pps 18000 --size 1400 # 200 Mbit/s for 2 s
for d in in out; do
    in_range "--rate 50: $d Mbit/s received from a 200 Mbit/s flood" \
        "$(printf '%.0f' "$(kv mbit "$T/rate.$d")")" 35 60
done
impair --show >"$T/show.txt"
check_ge "--show in_rate_dropped" "$(kv in_rate_dropped "$T/show.txt")" 1000
check_ge "--show out_rate_dropped" "$(kv out_rate_dropped "$T/show.txt")" 1000

# --- a dead daemon does not black-hole the lab ----------------------------------------
apply --delay 5
pid=$(show_get daemon_pid)
[[ -n $pid ]] && kill -KILL "$pid"
busywait 2000 eval "[[ \$(impair --show | sed -n 's/^daemon=//p') == dead ]]" ||
    check_fail "accel-impaird $pid still alive after SIGKILL"
check_eq "daemon killed: ping replies (fail-open)" \
    "$(K ping -q -c 200 -i 0.005 -W 1 "$AIP" | awk -F', ' '/transmitted/ { split($2, a, " "); print a[1] }')" 200

# --- off ------------------------------------------------------------------------------------
apply --loss 10 --dup 5 --delay 1 --rate 100
impair --off >/dev/null || check_fail "impair --off failed"
check_eq "--off: 1000 pings, every reply" \
    "$(K ping -q -c 1000 -i 0.002 -W 1 "$AIP" | awk -F', ' '/transmitted/ { split($2, a, " "); print a[1] }')" 1000
check_eq "--off: --show" "$(impair --show)" "impair=off"
check_not "--off: no nft table accel_impair" K nft list table ip accel_impair
check_not "--off: no ACCEL_IMPAIR chains" eval "K iptables-nft -t mangle -S 2>/dev/null | grep -q ACCEL_IMPAIR"
check_not "--off: no qdisc on $VETH_K" eval "K tc qdisc show dev $VETH_K | grep -Eq 'htb|ingress'"
check_not "--off: no IFB" eval "K ip -o link show type ifb | grep -q ."
check_eq "--off: no accel-impaird" \
    "$(ip netns pids "$NS_K" | xargs -r -I{} cat /proc/{}/comm 2>/dev/null | grep -c accel-impaird)" 0

# --- down removes an impairment and its daemon ------------------------------------------------
tag=${ACCEL_LAB_TAG:0:6}imd
ACCEL_LAB_TAG=$tag "$ACCEL_LAB" up >"$T/lab2.out" 2>&1 || fail "second lab (tag $tag): $(tail -2 "$T/lab2.out")"
ACCEL_LAB_TAG=$tag ACCEL_LAB_IMPAIRD=${IT_IMPAIRD:-} "$ACCEL_LAB" impair --loss 1 --delay 1 --rate 10 >>"$T/lab2.out" 2>&1 ||
    check_fail "impair in the second lab: $(tail -2 "$T/lab2.out")"
pid2=$(cat "/run/accel-impaird$tag.pid" 2>/dev/null)
ACCEL_LAB_TAG=$tag "$ACCEL_LAB" down >>"$T/lab2.out" 2>&1
check "down: the second lab's daemon is gone" eval "[[ -n '$pid2' ]] && ! kill -0 '$pid2' 2>/dev/null"
check_not "down: no impairment files left" eval "ls /run/accel-impair*$tag* 2>/dev/null | grep -q ."
finish
