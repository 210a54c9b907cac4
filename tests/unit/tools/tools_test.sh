#!/usr/bin/env bash
# Unit checks for tools/: accel-run's options, configuration errors, exit
# statuses and LD_PRELOAD handling (with a probe library standing in for
# libaccel.so), accel-lab's argument handling (impair's too), and README.md
# documenting every option of base/cfg_options.def.
#
# usage: tools_test.sh ACCEL_RUN PROBE_LIB README CFG_OPTIONS_DEF ACCEL_LAB
set -u
RUN=$1 PROBE=$2 README=$3 DEF=$4 LAB=$5
# An ASan accel-run inherits the LD_PRELOAD under test: let it start.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
pass() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
# run NAME CMD...: runs with a clean ACCEL_* environment, captures output.
run() {
    local name=$1
    shift
    env -u LD_PRELOAD $(env | awk -F= '/^ACCEL_/ {print "-u " $1}') "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
    echo $? >"$TMP/$name.rc"
}
rc() { cat "$TMP/$1.rc"; }

mapfile -t OPTS < <(grep -o '^BASE_OPT(ACCEL_[A-Z0-9_]*' "$DEF" | sed 's/^BASE_OPT(//')
((${#OPTS[@]} >= 10)) || fail "found only ${#OPTS[@]} options in $DEF"

# README.md (brief table) and docs/OPTIONS.md (full table) document every
# option ...
OPTIONS_MD=$(dirname "$README")/docs/OPTIONS.md
GEN=$(dirname "$LAB")/gen-options-md.sh
for doc in "$README" "$OPTIONS_MD"; do
    name=${doc#"$(dirname "$README")"/}
    missing=()
    for o in "${OPTS[@]}"; do
        grep -q "\`$o\`" "$doc" || missing+=("$o")
    done
    ((${#missing[@]} == 0)) && pass "$name documents all ${#OPTS[@]} options" ||
        fail "$name does not document: ${missing[*]} (run tools/gen-options-md.sh --update $name)"
    # ... and its generated table matches cfg_options.def (defaults, ranges, docs).
    if out=$(ACCEL_OPTIONS_DEF="$DEF" "$GEN" --check "$doc" 2>&1); then
        pass "$name options table is up to date"
    else
        fail "$out"
    fi
done

# --help
run help "$RUN" --help
[[ $(rc help) == 0 ]] && grep -q '^usage: accel-run' "$TMP/help.out" && grep -q -- '--list-options' "$TMP/help.out" &&
    pass "--help" || fail "--help: rc $(rc help), $(head -2 "$TMP/help.out")"

# --list-options names every option.
run list "$RUN" --list-options
missing=()
for o in "${OPTS[@]}"; do grep -q "$o" "$TMP/list.out" || missing+=("$o"); done
[[ $(rc list) == 0 && ${#missing[@]} == 0 ]] && pass "--list-options lists all options" ||
    fail "--list-options: rc $(rc list), missing ${missing[*]}"

# No command / unknown option: usage error.
run nocmd "$RUN"
[[ $(rc nocmd) == 2 ]] && pass "no command exits 2" || fail "no command: rc $(rc nocmd)"
run badopt "$RUN" --bogus true
[[ $(rc badopt) == 2 ]] && grep -q -- '--bogus' "$TMP/badopt.err" && pass "unknown option exits 2" ||
    fail "unknown option: rc $(rc badopt)"

# Bad configuration: one line naming the variable, then CMD runs on the
# kernel (status 0 from `true`) without the library preloaded.
kernel_run() { # name: rc 0, one stderr line naming $2, probe not loaded
    [[ $(rc "$1") == 0 && $(wc -l <"$TMP/$1.err") == 1 ]] && grep -q "$2" "$TMP/$1.err" &&
        grep -q 'running on the kernel' "$TMP/$1.err" && [[ ! -s "$TMP/$1.probe" ]]
}
run badip env TOOLS_PROBE_OUT="$TMP/badip.probe" ACCEL_IP=10.200.0.300/24 ACCEL_IFACE=veth-a ACCEL_LIBRARY="$PROBE" "$RUN" true
kernel_run badip ACCEL_IP && pass "bad ACCEL_IP: one line naming ACCEL_IP, command runs on the kernel" ||
    fail "bad ACCEL_IP: rc $(rc badip), stderr: $(cat "$TMP/badip.err")"
run badu32 env TOOLS_PROBE_OUT="$TMP/badu32.probe" ACCEL_BURST=100000 ACCEL_LIBRARY="$PROBE" "$RUN" true
kernel_run badu32 ACCEL_BURST && pass "out-of-range ACCEL_BURST: one line, kernel run" ||
    fail "ACCEL_BURST=100000: rc $(rc badu32), stderr: $(cat "$TMP/badu32.err")"

# ACCEL_IFACE without ACCEL_IP: named, kernel run.
run noip env TOOLS_PROBE_OUT="$TMP/noip.probe" ACCEL_IFACE=veth-a ACCEL_LIBRARY="$PROBE" "$RUN" true
kernel_run noip ACCEL_IP && pass "ACCEL_IFACE without ACCEL_IP: named, kernel run" ||
    fail "ACCEL_IFACE without ACCEL_IP: rc $(rc noip), stderr: $(cat "$TMP/noip.err")"

# Unknown ACCEL_* name: the command runs; the warning is the library's
# alone (one line, checked by integration/config_errors), not repeated here.
run unknown env ACCEL_POLL_USECS=5 ACCEL_IFACE=veth-a ACCEL_IP=10.200.0.2/24 ACCEL_LIBRARY="$PROBE" "$RUN" true
[[ $(rc unknown) == 0 && ! -s "$TMP/unknown.err" ]] && pass "unknown ACCEL_* name left to the library" ||
    fail "unknown name: rc $(rc unknown), stderr: $(cat "$TMP/unknown.err")"

# Missing library: exit 2 naming ACCEL_LIBRARY.
run nolib env ACCEL_LIBRARY="$TMP/nothere/libaccel.so" "$RUN" true
[[ $(rc nolib) == 2 ]] && grep -q ACCEL_LIBRARY "$TMP/nolib.err" && pass "missing library exits 2" ||
    fail "missing library: rc $(rc nolib), stderr: $(cat "$TMP/nolib.err")"
echo "not an elf" >"$TMP/libjunk.so"
run junklib env ACCEL_LIBRARY="$TMP/libjunk.so" "$RUN" true
[[ $(rc junklib) == 2 ]] && pass "non-ELF library exits 2" || fail "non-ELF library: rc $(rc junklib)"

# Exit statuses of env(1): 127 not found, 126 not executable, else CMD's.
run notfound env ACCEL_LIBRARY="$PROBE" "$RUN" accel-no-such-command-xyz
[[ $(rc notfound) == 127 ]] && pass "missing command exits 127" || fail "missing command: rc $(rc notfound)"
touch "$TMP/noexec" && chmod 644 "$TMP/noexec"
run noexec env ACCEL_LIBRARY="$PROBE" "$RUN" "$TMP/noexec"
[[ $(rc noexec) == 126 ]] && pass "non-executable command exits 126" || fail "non-executable: rc $(rc noexec)"
run status env ACCEL_LIBRARY="$PROBE" "$RUN" -- sh -c 'exit 7'
[[ $(rc status) == 7 ]] && pass "command's exit status passed through" || fail "exit status: rc $(rc status)"

# The library is preloaded (the probe's constructor ran once, in CMD).
real_probe=$(readlink -f "$PROBE")
run loaded env ACCEL_LIBRARY="$PROBE" TOOLS_PROBE_OUT="$TMP/probe.log" "$RUN" -- sh -c 'echo "$LD_PRELOAD"'
[[ $(rc loaded) == 0 && $(wc -l <"$TMP/probe.log" 2>/dev/null) == 1 ]] && pass "library preloaded into CMD" ||
    fail "probe not loaded exactly once: rc $(rc loaded), log: $(cat "$TMP/probe.log" 2>/dev/null)"
[[ $(cat "$TMP/loaded.out") == "$real_probe" ]] && pass "LD_PRELOAD is the absolute library path" ||
    fail "LD_PRELOAD is '$(cat "$TMP/loaded.out")', want '$real_probe'"

# Prepended to an existing LD_PRELOAD (space or colon separated), no duplicates.
run prepend env ACCEL_LIBRARY="$PROBE" LD_PRELOAD="libx1.so libx2.so:$real_probe" \
    "$RUN" -- printenv LD_PRELOAD
[[ $(cat "$TMP/prepend.out") == "$real_probe:libx1.so:libx2.so" ]] && pass "prepends to LD_PRELOAD without duplicates" ||
    fail "LD_PRELOAD became '$(cat "$TMP/prepend.out")'"
run other env ACCEL_LIBRARY="$PROBE" LD_PRELOAD="/opt/old/libaccel.so" "$RUN" -- printenv LD_PRELOAD
[[ $(cat "$TMP/other.out") == "$real_probe" ]] && grep -q 'dropping /opt/old/libaccel.so' "$TMP/other.err" &&
    pass "another libaccel.so is replaced, with a warning" ||
    fail "other libaccel.so: LD_PRELOAD '$(cat "$TMP/other.out")', stderr $(cat "$TMP/other.err")"

# Options end at the command; "--" allows a command starting with '-'.
run argv env ACCEL_LIBRARY="$PROBE" "$RUN" printf '%s|' --help -x
[[ $(cat "$TMP/argv.out") == "--help|-x|" ]] && pass "arguments after CMD are CMD's" ||
    fail "CMD args: '$(cat "$TMP/argv.out")'"

# accel-lab: usage errors without touching the system.
bash -n "$LAB" && pass "accel-lab parses" || fail "accel-lab has a syntax error"
run labbad "$LAB" frobnicate
[[ $(rc labbad) == 2 ]] && grep -q 'usage: accel-lab' "$TMP/labbad.err" && pass "accel-lab rejects unknown commands" ||
    fail "accel-lab frobnicate: rc $(rc labbad)"
run labtag env ACCEL_LAB_TAG=much_too_long_tag "$LAB" status
[[ $(rc labtag) != 0 ]] && grep -q ACCEL_LAB_TAG "$TMP/labtag.err" && pass "accel-lab rejects a tag that overflows interface names" ||
    fail "accel-lab long tag: rc $(rc labtag)"
# accel-lab impair: every bad argument is one stderr line naming it and exit
# status 2, before anything is touched (so these run without root).
i=0
for args in "--loss 101" "--loss 1.2.3" "--dup x" "--reorder -5" "--corrupt" \
    "--delay 10:" "--delay 1e3" "--rate 0" "--rate fast" "--seed -1" \
    "--dir up" "--bogus" "--show --off" "--off --rate 5" "--seed 5" ""; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    run "imp$i" "$LAB" impair $args
    first=${args%% *}
    [[ -n $first && $first != --show && $first != --seed ]] || first=impair
    if [[ $(rc "imp$i") == 2 && $(wc -l <"$TMP/imp$i.err") == 1 && ! -s $TMP/imp$i.out ]] &&
        grep -q -- "$first" "$TMP/imp$i.err"; then
        pass "accel-lab impair $args: exit 2, $(cat "$TMP/imp$i.err")"
    else
        fail "accel-lab impair $args: rc $(rc "imp$i"), stderr '$(cat "$TMP/imp$i.err")'"
    fi
done
run imphelp "$LAB" --help
grep -q 'impair \[--loss P\]' "$TMP/imphelp.out" && grep -q -- '--show' "$TMP/imphelp.out" &&
    pass "accel-lab --help documents impair" || fail "accel-lab --help lacks impair"

echo "tools_test: $failures failed"
((failures == 0))
