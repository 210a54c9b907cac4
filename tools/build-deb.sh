#!/usr/bin/env bash
# build-deb.sh: the Debian package (debian/) from this checkout, checked by
# lintian.
#
#   tools/build-deb.sh [OUTDIR]      (default OUTDIR: build/deb)
#
# Copies the tree (the files git knows, as they are in the working tree, or
# everything but build output and .deps/ outside a git checkout) to
# OUTDIR/accel-VERSION, runs `dpkg-buildpackage -b -us -uc` there with
# LWIP_DIR at this checkout's .deps/lwip (fetched by stack/fetch-lwip.sh when
# missing: root), then lintian on the result. Quiet: the build's output goes
# to OUTDIR/build.log, lintian's to OUTDIR/lintian.txt; stdout gets one line
# per step and the .deb's path last. Exit status 1 when the build fails or
# lintian reports an error (E:); warnings are listed, not fatal.
#
# DEB_BUILD_OPTIONS is passed on (nocheck skips the unit and stack tests of
# the build, and sets the nocheck build profile so googletest is not needed;
# parallel=N is added when absent).
set -u
set -o pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
OUT=$(readlink -m "${1:-$REPO/build/deb}")
LWIP_DIR=${LWIP_DIR:-$REPO/.deps/lwip}

die() {
    echo "build-deb: error: $*" >&2
    exit 1
}
case ${1:-} in
-h | --help)
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
for t in dpkg-buildpackage dh lintian; do
    command -v "$t" >/dev/null 2>&1 ||
        die "$t not found: install dpkg-dev, debhelper and lintian (tools/setup.sh does)"
done

if [[ ! -f $LWIP_DIR/src/core/tcp.c ]]; then
    echo "build-deb: fetching lwIP's source into $LWIP_DIR"
    sh "$REPO/stack/fetch-lwip.sh" "$LWIP_DIR" || die "no lwIP source (stack/fetch-lwip.sh failed)"
fi

VERSION=$(cd "$REPO" && dpkg-parsechangelog -S Version) || die "cannot read debian/changelog"
SRC=$OUT/accel-$VERSION
rm -rf "$OUT"
mkdir -p "$SRC" || die "cannot create $SRC"

# The tree as it is checked out, without build output or .deps/.
echo "build-deb: copying the tree to $SRC"
if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
        tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$SRC"
else
    tar -C "$REPO" --exclude=./.deps --exclude='./build*' --exclude='./obj-*' \
        --exclude=./.git -cf - . | tar -xf - -C "$SRC"
fi || die "cannot copy the tree"
[[ -x $SRC/debian/rules ]] || die "$SRC/debian/rules is missing"

opts=${DEB_BUILD_OPTIONS:-}
[[ $opts == *parallel=* ]] || opts="$opts parallel=$(nproc 2>/dev/null || echo 2)"
opts=${opts# }
profiles=${DEB_BUILD_PROFILES:-}
[[ " $opts " == *" nocheck "* && " $profiles " != *" nocheck "* ]] && profiles="$profiles nocheck"
profiles=${profiles# }
echo "build-deb: dpkg-buildpackage -b -us -uc (DEB_BUILD_OPTIONS='$opts'${profiles:+ DEB_BUILD_PROFILES='$profiles'}, log: $OUT/build.log)"
start=$(date +%s)
if ! (cd "$SRC" && DEB_BUILD_OPTIONS=$opts DEB_BUILD_PROFILES=$profiles LWIP_DIR=$LWIP_DIR \
    dpkg-buildpackage -b -us -uc) >"$OUT/build.log" 2>&1; then
    tail -n 30 "$OUT/build.log" | sed 's/^/  | /' >&2
    die "dpkg-buildpackage failed (full log: $OUT/build.log)"
fi
echo "build-deb: built in $(($(date +%s) - start))s"

changes=$(ls "$OUT"/accel_"$VERSION"_*.changes 2>/dev/null | head -n 1)
deb=$(ls "$OUT"/accel_"$VERSION"_*.deb 2>/dev/null | head -n 1)
[[ -n $changes && -n $deb ]] || die "no .changes or .deb in $OUT"

# lintian refuses nothing as root, but says so on stderr: keep it in the file.
lintian --info --display-info "$changes" >"$OUT/lintian.txt" 2>&1
errors=$(grep -c '^E: ' "$OUT/lintian.txt")
warnings=$(grep -c '^W: ' "$OUT/lintian.txt")
echo "build-deb: lintian: $errors errors, $warnings warnings ($OUT/lintian.txt)"
grep -E '^(E|W): ' "$OUT/lintian.txt" | sed 's/^/  /'
((errors == 0)) || die "lintian reports errors"
echo "$deb"
