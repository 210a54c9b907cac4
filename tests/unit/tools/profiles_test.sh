#!/usr/bin/env bash
# Unit checks for accel-run's profiles: --profile NAME|PATH, --force-profile,
# ACCEL_PROFILE, --explain and --list-profiles, with a probe library standing
# in for libaccel.so. Every shipped profile (tools/profiles/*.conf) loads and
# --explain shows each of its lines with file:line; balanced is exactly the
# built-in defaults; the environment wins over a profile unless forced; a
# bad profile stops accel-run with one line naming file:line and exit 2;
# `cmake --install` puts the profiles where an installed accel-run finds
# them.
#
# usage: profiles_test.sh ACCEL_RUN PROBE_LIB PROFILES_DIR CFG_OPTIONS_DEF \
#                         CMAKE BUILD_DIR
set -u
RUN=$1 PROBE=$2 SRC=$3 DEF=$4 CMAKE=$5 BUILD=$6
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
pass() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
# run NAME [VAR=value...] ARGS...: accel-run with a clean ACCEL_* environment
# (plus the given variables and the probe library), output captured.
run() {
    local name=$1
    shift
    local envs=()
    while [[ $# -gt 0 && $1 =~ ^[A-Z_][A-Z0-9_]*= ]]; do
        envs+=("$1")
        shift
    done
    env -u LD_PRELOAD $(env | awk -F= '/^ACCEL_/ {print "-u " $1}') \
        ACCEL_LIBRARY="$PROBE" "${envs[@]}" "$RUN" "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
    echo $? >"$TMP/$name.rc"
}
rc() { cat "$TMP/$1.rc"; }
out() { cat "$TMP/$1.out"; }
err() { tr '\n' '|' <"$TMP/$1.err"; }
# row NAME OPTION: the --explain line of OPTION ("OPTION=value  source").
row() { grep "^$2=" "$TMP/$1.out"; }
src() { row "$1" "$2" | sed -E 's/^[^ ]* +//'; }
val() { row "$1" "$2" | sed -E 's/^[^=]*=([^ ]*).*/\1/'; }

mapfile -t OPTS < <(grep -o '^BASE_OPT(ACCEL_[A-Z0-9_]*' "$DEF" | sed 's/^BASE_OPT(//')
mapfile -t SHIPPED < <(cd "$SRC" && ls -- *.conf | sed 's/\.conf$//')
[[ " ${SHIPPED[*]} " == *" balanced "* && " ${SHIPPED[*]} " == *" latency "* &&
    " ${SHIPPED[*]} " == *" safe "* && " ${SHIPPED[*]} " == *" throughput "* ]] &&
    pass "balanced, latency, safe and throughput are shipped" ||
    fail "shipped profiles: ${SHIPPED[*]}"

# --explain with no profile: every option once, all defaults.
run plain --explain
n_rows=$(grep -c '^ACCEL_[A-Z0-9_]*=' "$TMP/plain.out")
missing=()
for o in "${OPTS[@]}"; do
    [[ $(grep -c "^$o=" "$TMP/plain.out") == 1 ]] || missing+=("$o")
done
[[ $(rc plain) == 0 && ${#missing[@]} == 0 && $n_rows == "${#OPTS[@]}" ]] &&
    pass "--explain prints each of the ${#OPTS[@]} options once" ||
    fail "--explain: rc $(rc plain), $n_rows rows, missing ${missing[*]}; $(err plain)"
others=$(grep '^ACCEL_' "$TMP/plain.out" | grep -v -E ' default$' | grep -v '^ACCEL_LIBRARY=')
[[ -z $others ]] && pass "no profile, no ACCEL_* set: every source is 'default'" ||
    fail "non-default rows without profile: $others"
grep -q '^profile: none' "$TMP/plain.out" && grep -q '^command: (none given)' "$TMP/plain.out" &&
    pass "--explain without CMD or profile says so" || fail "--explain header: $(head -3 "$TMP/plain.out")"

# Each shipped profile loads; every NAME=VALUE line shows in --explain with
# its value and "profile NAME (PATH:LINE)", PATH being the shipped file.
for p in "${SHIPPED[@]}"; do
    run "p_$p" --profile "$p" --explain
    if [[ $(rc "p_$p") != 0 ]]; then
        fail "--profile $p --explain: rc $(rc "p_$p"): $(err "p_$p")"
        continue
    fi
    path=$(val "p_$p" ACCEL_PROFILE)
    cmp -s "$path" "$SRC/$p.conf" || fail "$p: accel-run read $path, not a copy of $SRC/$p.conf"
    bad=0 lines=0
    while IFS= read -r entry; do
        ln=${entry%%:*} kv=${entry#*:}
        name=${kv%%=*} value=${kv#*=}
        lines=$((lines + 1))
        got_v=$(val "p_$p" "$name") got_s=$(src "p_$p" "$name")
        if [[ $got_v != "$value" || $got_s != "profile $p ($path:$ln)" ]]; then
            fail "$p line $ln: want $name=$value from 'profile $p ($path:$ln)', got $name=$got_v from '$got_s'"
            bad=1
        fi
    done < <(grep -n -E '^[A-Z]' "$SRC/$p.conf")
    if ((bad == 0 && lines > 0)); then
        pass "profile $p: its $lines settings apply, each with file:line"
    elif ((lines == 0)); then
        fail "profile $p sets nothing"
    fi
done

# balanced is the built-in defaults, written out.
diff <(grep '^ACCEL_' "$TMP/plain.out" | grep -v '^ACCEL_PROFILE' | sed 's/ .*//') \
    <(grep '^ACCEL_' "$TMP/p_balanced.out" | grep -v '^ACCEL_PROFILE' | sed 's/ .*//') >"$TMP/bal.diff" &&
    pass "balanced gives exactly the defaults" || fail "balanced differs from the defaults: $(tr '\n' ' ' <"$TMP/bal.diff")"

# The latency profile: spin, TCP_NODELAY, no tx batching.
[[ $(val p_latency ACCEL_POLL_USEC) -ge 10000 && $(val p_latency ACCEL_TCP_NODELAY) == 1 &&
    $(val p_latency ACCEL_TX_DEFER) == 0 ]] && pass "latency: spins, TCP_NODELAY=1, TX_DEFER=0" ||
    fail "latency: $(row p_latency ACCEL_POLL_USEC) $(row p_latency ACCEL_TCP_NODELAY) $(row p_latency ACCEL_TX_DEFER)"
[[ $(val p_throughput ACCEL_POLL_USEC) == 0 && $(val p_throughput ACCEL_SPIN_AFTER_RX_USEC) == 0 &&
    $(val p_throughput ACCEL_TX_DEFER) == 1 ]] && pass "throughput: no spin, batching" ||
    fail "throughput: $(row p_throughput ACCEL_POLL_USEC) $(row p_throughput ACCEL_TX_DEFER)"
[[ $(val p_safe ACCEL_POLL_USEC) == 0 && $(val p_safe ACCEL_SPIN_AFTER_RX_USEC) == 0 &&
    $(val p_safe ACCEL_TX_DEFER) == 0 && $(val p_safe ACCEL_TCP_NODELAY) == 0 ]] &&
    pass "safe: no spin, no batching, Nagle as Linux" ||
    fail "safe: $(row p_safe ACCEL_POLL_USEC) $(row p_safe ACCEL_TX_DEFER)"

# Precedence: the environment wins over the profile ...
LAT=$(val p_latency ACCEL_PROFILE)
ln_poll=$(grep -n '^ACCEL_POLL_USEC=' "$LAT" | cut -d: -f1)
run envwins ACCEL_POLL_USEC=5 ACCEL_MTU=9000 --profile latency --explain
[[ $(rc envwins) == 0 && $(row envwins ACCEL_POLL_USEC) =~ ^ACCEL_POLL_USEC=5\ +environment$ &&
    $(row envwins ACCEL_MTU) =~ ^ACCEL_MTU=9000\ +environment$ &&
    $(src envwins ACCEL_TCP_NODELAY) == "profile latency ($LAT:$(grep -n '^ACCEL_TCP_NODELAY=' "$LAT" | cut -d: -f1))" ]] &&
    pass "the environment wins over the profile; the profile fills the rest" ||
    fail "env over profile: $(row envwins ACCEL_POLL_USEC) / $(row envwins ACCEL_TCP_NODELAY); $(err envwins)"
grep -q "^profile: latency ($LAT), the environment's values win over it" "$TMP/envwins.out" &&
    pass "--explain names the profile" || fail "profile line: $(grep '^profile' "$TMP/envwins.out")"
# ... unless --force-profile.
run forced ACCEL_POLL_USEC=5 --profile=latency --force-profile --explain
[[ $(rc forced) == 0 && $(val forced ACCEL_POLL_USEC) == "$(grep '^ACCEL_POLL_USEC=' "$LAT" | cut -d= -f2)" &&
    $(src forced ACCEL_POLL_USEC) == "forced profile latency ($LAT:$ln_poll), over environment ACCEL_POLL_USEC=5" ]] &&
    pass "--force-profile: the profile wins, the source says over what" ||
    fail "forced: $(row forced ACCEL_POLL_USEC); $(err forced)"
# ACCEL_PROFILE in the environment names the profile too; --profile beats it.
run envname ACCEL_PROFILE=latency --explain
[[ $(rc envname) == 0 && $(val envname ACCEL_PROFILE) == "$LAT" && $(val envname ACCEL_TX_DEFER) == 0 ]] &&
    pass "ACCEL_PROFILE=latency is resolved like --profile latency" ||
    fail "ACCEL_PROFILE=latency: rc $(rc envname), $(row envname ACCEL_PROFILE); $(err envname)"
run argwins ACCEL_PROFILE=latency --profile throughput --explain
[[ $(src argwins ACCEL_TX_DEFER) == "profile throughput ($(val p_throughput ACCEL_PROFILE):$(grep -n '^ACCEL_TX_DEFER=' "$SRC/throughput.conf" | cut -d: -f1))" ]] &&
    pass "--profile wins over ACCEL_PROFILE" || fail "--profile vs ACCEL_PROFILE: $(row argwins ACCEL_TX_DEFER)"

# A user profile by path (relative: exported as an absolute path).
printf '# mine\nACCEL_BURST=64\n\nACCEL_EAL_ARGS="--x y"\n' >"$TMP/my.conf"
(cd "$TMP" && run user --profile ./my.conf --explain)
[[ $(rc user) == 0 && $(src user ACCEL_BURST) == "profile my ($TMP/my.conf:2)" &&
    $(row user ACCEL_EAL_ARGS) =~ ^ACCEL_EAL_ARGS=--x\ y\ +profile\ my ]] &&
    pass "--profile ./my.conf: values and file:line" || fail "user profile: $(row user ACCEL_BURST); $(err user)"

# --explain CMD: the program it would run, and it is not run.
run excmd --profile latency --explain touch "$TMP/ran"
[[ $(rc excmd) == 0 && ! -e $TMP/ran ]] && grep -q "^command: touch $TMP/ran$" "$TMP/excmd.out" &&
    grep -q "^program: touch ($(command -v touch))$" "$TMP/excmd.out" &&
    pass "--explain CMD names the program and does not run it" ||
    fail "--explain CMD: rc $(rc excmd), ran: $([[ -e $TMP/ran ]] && echo yes), $(head -2 "$TMP/excmd.out" | tr '\n' '|')"
grep -q "^library: $(readlink -f "$PROBE")$" "$TMP/excmd.out" && pass "--explain names the library" ||
    fail "library line: $(grep '^library' "$TMP/excmd.out")"
run exmiss --explain accel-no-such-command-xyz
[[ $(rc exmiss) == 127 ]] && grep -q '^program: accel-no-such-command-xyz (not found)' "$TMP/exmiss.out" &&
    pass "--explain of a missing command: exit 127" || fail "--explain missing: rc $(rc exmiss)"
run exbad ACCEL_BURST=100000 --profile latency --explain true
[[ $(rc exbad) == 1 && $(wc -l <"$TMP/exbad.err") == 1 ]] && grep -q 'ACCEL_BURST=100000' "$TMP/exbad.err" &&
    grep -q 'would run on the kernel' "$TMP/exbad.err" &&
    pass "--explain with a bad value: exit 1, one line naming it" ||
    fail "--explain bad value: rc $(rc exbad), $(err exbad)"

# The command gets ACCEL_PROFILE=<absolute path> (and ACCEL_PROFILE_FORCE=1
# when forced), with the library preloaded; the values are not copied.
run envout TOOLS_PROBE_OUT="$TMP/probe.log" --profile latency -- sh -c \
    'echo "$ACCEL_PROFILE|${ACCEL_PROFILE_FORCE-unset}|${ACCEL_POLL_USEC-unset}"'
[[ $(rc envout) == 0 && $(out envout) == "$LAT|unset|unset" && $(wc -l <"$TMP/probe.log") == 1 ]] &&
    pass "CMD runs preloaded with ACCEL_PROFILE=$LAT" ||
    fail "CMD env: rc $(rc envout), '$(out envout)'; $(err envout)"
run envforce --force-profile --profile latency -- sh -c 'echo "$ACCEL_PROFILE_FORCE"'
[[ $(out envforce) == 1 ]] && pass "--force-profile exports ACCEL_PROFILE_FORCE=1" ||
    fail "ACCEL_PROFILE_FORCE: '$(out envforce)'"

# Bad profiles: exit 2, one line naming file:line, CMD not run.
bad_profile() { # TAG TEXT WANT
    printf '%b' "$2" >"$TMP/$1.conf"
    rm -f "$TMP/ran"
    run "$1" --profile "$TMP/$1.conf" touch "$TMP/ran"
    if [[ $(rc "$1") == 2 && $(wc -l <"$TMP/$1.err") == 1 && ! -e $TMP/ran ]] &&
        grep -qF "accel-run: $TMP/$1.conf:$3" "$TMP/$1.err"; then
        pass "bad profile ($1): exit 2, '$(err "$1")'"
    else
        fail "bad profile ($1): rc $(rc "$1"), ran $([[ -e $TMP/ran ]] && echo yes || echo no), stderr '$(err "$1")', want ':$3'"
    fi
}
bad_profile typo '# x\nACCEL_POLL_USEC=1\nACCEL_TX_DEFR=0\n' '3: unknown option ACCEL_TX_DEFR; did you mean ACCEL_TX_DEFER?'
bad_profile value 'ACCEL_MTU=12\n' '1: ACCEL_MTU=12: out of range'
bad_profile syntax '\n\nnonsense\n' '3: expected NAME=VALUE'
bad_profile twice 'ACCEL_MTU=1500\nACCEL_MTU=1500\n' '2: ACCEL_MTU is set again (first at line 1)'
run noname --profile latncy true
[[ $(rc noname) == 2 && $(wc -l <"$TMP/noname.err") == 1 ]] && grep -q "unknown profile 'latncy'" "$TMP/noname.err" &&
    grep -q 'balanced latency safe throughput' "$TMP/noname.err" &&
    pass "unknown profile name: exit 2, one line listing the known ones" ||
    fail "unknown profile: rc $(rc noname), $(err noname)"
run nofile --profile "$TMP/nothere.conf" true
[[ $(rc nofile) == 2 && $(wc -l <"$TMP/nofile.err") == 1 ]] && grep -q nothere.conf "$TMP/nofile.err" &&
    pass "missing profile file: exit 2, one line" || fail "missing file: rc $(rc nofile), $(err nofile)"
run envbad ACCEL_PROFILE=latncy true
[[ $(rc envbad) == 2 ]] && pass "bad ACCEL_PROFILE name: exit 2" || fail "ACCEL_PROFILE=latncy: rc $(rc envbad)"
run forcealone --force-profile true
[[ $(rc forcealone) == 2 ]] && grep -q -- '--force-profile needs a profile' "$TMP/forcealone.err" &&
    pass "--force-profile without a profile: exit 2" || fail "--force-profile alone: rc $(rc forcealone)"
run noarg --profile
[[ $(rc noarg) == 2 ]] && pass "--profile without NAME: exit 2" || fail "--profile alone: rc $(rc noarg)"

# --list-profiles and --help.
run list --list-profiles
ok=1
for p in "${SHIPPED[@]}"; do grep -q "^$p " "$TMP/list.out" || ok=0; done
[[ $(rc list) == 0 && $ok == 1 ]] && pass "--list-profiles lists the shipped ones" || fail "--list-profiles: $(out list)"
run help --help
grep -q -- '--profile NAME|PATH' "$TMP/help.out" && grep -q -- '--explain' "$TMP/help.out" &&
    grep -q -- '--force-profile' "$TMP/help.out" && pass "--help documents the profile options" ||
    fail "--help lacks the profile options"

# Installed: the profiles land in <prefix>/share/accel/profiles, where the
# installed accel-run finds them (DESTDIR keeps the system untouched).
if "$CMAKE" -E env DESTDIR="$TMP/root" "$CMAKE" --install "$BUILD" >"$TMP/install.log" 2>&1; then
    inst_run=$(find "$TMP/root" -path '*/bin/accel-run' | head -1)
    prof_dir=$(dirname "$(dirname "$inst_run")")/share/accel/profiles
    ok=1
    for p in "${SHIPPED[@]}"; do cmp -s "$prof_dir/$p.conf" "$SRC/$p.conf" || ok=0; done
    ((ok)) && pass "cmake --install puts the profiles in ${prof_dir#"$TMP/root"}" ||
        fail "installed profiles: $(ls "$prof_dir" 2>&1)"
    RUN=$inst_run run inst --profile latency --explain
    [[ $(rc inst) == 0 && $(val inst ACCEL_PROFILE) == "$(readlink -f "$prof_dir/latency.conf")" ]] &&
        pass "the installed accel-run finds the installed profiles" ||
        fail "installed accel-run: rc $(rc inst), $(row inst ACCEL_PROFILE); $(err inst)"
else
    fail "cmake --install failed: $(tail -3 "$TMP/install.log")"
fi

echo "profiles_test: $failures failed"
((failures == 0))
