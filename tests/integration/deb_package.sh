#!/bin/bash
# Scenario: the Debian package. tools/build-deb.sh builds it from this tree
# (dpkg-buildpackage -b, DEB_BUILD_OPTIONS=nocheck: the unit and stack
# tests run in their own suite) and runs lintian, which must report no
# error. Then the package is installed with dpkg -i, and checked: its files
# are under /usr, /etc and /usr/lib/<multiarch>/accel (nothing under
# /usr/local), /etc/accel/rules.conf is a conffile, /usr/bin/accel-run
# preloads the packaged library and finds the packaged profiles,
# /usr/bin/accel-dump runs, the man pages and the systemd drop-in example
# are installed, and tools/demo.sh serves nginx through /usr/bin/accel-run
# and the packaged accel-lab. Last,
# dpkg --purge removes it all and /usr/local's install (tools/setup.sh's)
# still works. Skipped when a package named accel is already installed
# (it would be replaced and then removed); fails when /etc/accel/rules.conf
# exists without it. Uses the lab through demo.sh:
# run it alone (label package, tools/test.sh's last suite).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"

REPO=$(cd "$LIBDIR/../.." && pwd)
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
PKG_LIB=/usr/lib/$MULTIARCH/accel/libaccel.so
INSTALLED=0

if dpkg-query -W -f='${Status}' accel 2>/dev/null | grep -q 'ok installed'; then
    log "SKIP: a package named accel is already installed (dpkg -r accel first)"
    exit 4
fi
[[ ! -e /etc/accel/rules.conf ]] ||
    fail "/etc/accel/rules.conf exists outside the package: the purge would delete it"

# Remove the package whatever happens, then the usual cleanup.
purge() {
    ((INSTALLED)) || return 0
    dpkg --purge accel >>"$T/dpkg.log" 2>&1 || log "warning: dpkg --purge accel failed"
    INSTALLED=0
}
trap 'rc=$?; purge; (exit $rc); cleanup' EXIT

# --- build and lintian -------------------------------------------------------

DEB_BUILD_OPTIONS=nocheck "$REPO/tools/build-deb.sh" "$T/deb" >"$T/build-deb.out" 2>&1
rc=$?
cat "$T/build-deb.out"
check_eq "tools/build-deb.sh (dpkg-buildpackage -b, lintian without errors)" "$rc" 0
((rc == 0)) || {
    tail -n 40 "$T/deb/build.log" 2>/dev/null
    fail "no package to install"
}
DEB=$(tail -n 1 "$T/build-deb.out")
[[ -f $DEB ]] || fail "build-deb.sh printed no .deb path ('$DEB')"
check_eq "lintian E: lines" "$(grep -c '^E: ' "$T/deb/lintian.txt")" 0

dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' >"$T/contents.txt"
check_not "no file under /usr/local" grep -q '^/usr/local' "$T/contents.txt"
for f in /usr/bin/accel-run /usr/bin/accel-stat /usr/bin/accel-dump "$PKG_LIB" \
    /usr/sbin/accel-lab /usr/sbin/accel-impaird \
    /usr/sbin/accel-broker /usr/share/doc/accel/examples/accel-broker@.service \
    /usr/share/doc/accel/examples/accel-prepare@.service \
    /etc/accel/rules.conf /usr/share/accel/profiles/latency.conf \
    /usr/share/man/man1/accel-run.1.gz /usr/share/man/man1/accel-stat.1.gz \
    /usr/share/man/man1/accel-dump.1.gz \
    /usr/share/man/man7/accel.7.gz \
    /usr/share/man/man8/accel-lab.8.gz /usr/share/man/man8/accel-broker.8.gz \
    /usr/share/doc/accel/examples/accel-override.conf; do
    check "package has $f" grep -qx "$f" "$T/contents.txt"
done
check "rules.conf is a conffile" eval "dpkg-deb --ctrl-tarfile '$DEB' | tar -xOf - ./conffiles | grep -qx /etc/accel/rules.conf"

# --- install and use -----------------------------------------------------------

dpkg -i "$DEB" >"$T/dpkg.log" 2>&1
rc=$?
INSTALLED=1
check_eq "dpkg -i $(basename "$DEB")" "$rc" 0
((rc == 0)) || fail "not installed: $(tail -n 5 "$T/dpkg.log" | tr '\n' ' ')"

check "/usr/bin/accel-run --help" /usr/bin/accel-run --help
check "/usr/bin/accel-stat --help" /usr/bin/accel-stat --help
check "/usr/bin/accel-dump --help" /usr/bin/accel-dump --help
env -u ACCEL_LIBRARY /usr/bin/accel-run --explain true >"$T/explain.out" 2>&1
check "accel-run preloads the packaged library" grep -qx "library: $PKG_LIB" "$T/explain.out"
check "accel-run finds the packaged profiles" \
    eval "/usr/bin/accel-run --list-profiles | grep -q /usr/share/accel/profiles/latency.conf"
check "the library reads /etc/accel/rules.conf" grep -qa /etc/accel/rules.conf "$PKG_LIB"
check "/usr/sbin/accel-lab --help" /usr/sbin/accel-lab --help
# accel(7)'s OPTIONS section is generated from base/cfg_options.def: all of
# them, each a .TP paragraph; and no page makes man warn.
check_eq "accel.7 documents every option of base/cfg_options.def" \
    "$(zcat /usr/share/man/man7/accel.7.gz | awk 'p == ".TP" && /^\.B ACCEL_/ { n++ } { p = $0 } END { print n + 0 }')" \
    "$(grep -c '^BASE_OPT(ACCEL_' "$REPO/base/cfg_options.def")"
if command -v man >/dev/null; then
    for page in man1/accel-run.1 man1/accel-stat.1 man1/accel-dump.1 man7/accel.7 man8/accel-lab.8; do
        LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z \
            "/usr/share/man/$page.gz" 2>"$T/man.err" >/dev/null
        check_eq "man --warnings $page: no warning" "$(cat "$T/man.err")" ""
    done
fi

# The demo from the package: /usr/bin/accel-run with its default library,
# the packaged accel-lab first on PATH, no tools/setup.sh.
env -u ACCEL_LIBRARY PATH="/usr/sbin:/usr/bin:$PATH" DEMO_ACCEL_RUN=/usr/bin/accel-run \
    DEMO_SETUP=0 DEMO_SECONDS=2 bash "$REPO/tools/demo.sh" >"$T/demo.out" 2>&1
rc=$?
sed 's/^/  demo: /' "$T/demo.out"
check_eq "tools/demo.sh with /usr/bin/accel-run" "$rc" 0
check "the accelerated nginx counted frames through the DPDK port" grep -q 'stats: frames in [1-9]' "$T/demo.out"

# --- remove ----------------------------------------------------------------

dpkg --purge accel >>"$T/dpkg.log" 2>&1
rc=$?
INSTALLED=0
check_eq "dpkg --purge accel" "$rc" 0
check_not "/usr/bin/accel-run is gone" test -e /usr/bin/accel-run
check_not "/etc/accel/rules.conf is gone (purged)" test -e /etc/accel/rules.conf
if [[ -x /usr/local/bin/accel-run ]]; then
    check "/usr/local/bin/accel-run --help still works" /usr/local/bin/accel-run --help
fi
finish
