#!/bin/sh
# fetch-lwip.sh DEST: put Debian's lwIP source tree (the `lwip` source
# package) at DEST, so the build can compile lwIP with our own lwipopts.h.
#
# Idempotent: does nothing when DEST/src/core/tcp.c exists. Otherwise it
# makes sure apt has a deb-src entry (derived from the machine's existing
# `deb` entry in /etc/apt/sources.list.d/debian.sources: same URIs and
# Signed-By, the release's main and -updates suites, component main),
# runs apt-get update, installs dpkg-dev if `apt-get source` needs it,
# unpacks the source in a temporary directory and moves the tree to DEST.
# Everything it does is reported on stderr; stdout stays empty.
set -eu

log() { echo "fetch-lwip: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ $# -eq 1 ] || die "usage: fetch-lwip.sh DEST"
DEST=$1

if [ -f "$DEST/src/core/tcp.c" ]; then
    log "lwIP source already present in $DEST"
    exit 0
fi

SUDO=
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "needs root (or sudo) to configure apt"
    SUDO=sudo
fi

SRC_LIST=/etc/apt/sources.list.d/debian.sources
OUR_LIST=/etc/apt/sources.list.d/accel-deb-src.sources

has_deb_src() {
    grep -rqsE '^[[:space:]]*(Types:.*deb-src|deb-src[[:space:]])' \
        /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null
}

if has_deb_src; then
    log "a deb-src entry is already configured"
else
    [ -f "$SRC_LIST" ] || die "no deb-src entry and no $SRC_LIST to derive one from"
    codename=bookworm
    if [ -r /etc/os-release ]; then
        c=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
        [ -n "$c" ] && codename=$c
    fi
    # The first deb822 stanza of type deb whose suites are the release's
    # own (not -security): take its URIs and Signed-By.
    stanza=$(awk -v rel="$codename" '
        BEGIN { RS = ""; FS = "\n" }
        {
            types = ""; suites = ""; uris = ""; signed = ""
            for (i = 1; i <= NF; i++) {
                if ($i ~ /^Types:/) types = $i
                else if ($i ~ /^Suites:/) suites = $i
                else if ($i ~ /^URIs:/) uris = $i
                else if ($i ~ /^Signed-By:/) signed = $i
            }
            if (types ~ /[[:space:]]deb([[:space:]]|$)/ &&
                (" " suites " ") ~ (" " rel " ") && uris != "") {
                print uris; if (signed != "") print signed; exit
            }
        }' "$SRC_LIST")
    [ -n "$stanza" ] || die "no '$codename' deb entry found in $SRC_LIST"
    log "adding $OUR_LIST (deb-src derived from $SRC_LIST)"
    {
        echo "Types: deb-src"
        echo "$stanza" | grep '^URIs:'
        echo "Suites: $codename $codename-updates"
        echo "Components: main"
        echo "$stanza" | grep '^Signed-By:' || true
    } | $SUDO tee "$OUR_LIST" >/dev/null
fi

log "apt-get update"
$SUDO apt-get update -qq >&2 || die "apt-get update failed"

if ! command -v dpkg-source >/dev/null 2>&1; then
    log "installing dpkg-dev (needed by apt-get source)"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpkg-dev >&2 \
        || die "could not install dpkg-dev"
fi

tmp=$(mktemp -d)
chmod 755 "$tmp" # lets apt download as _apt without a warning
trap 'rm -rf "$tmp"' EXIT
log "apt-get source lwip (in $tmp)"
(cd "$tmp" && apt-get source -qq lwip >&2) || die "apt-get source lwip failed"

tree=
for d in "$tmp"/lwip-*/; do
    [ -f "$d/src/core/tcp.c" ] && tree=${d%/}
done
[ -n "$tree" ] || die "unpacked source has no src/core/tcp.c"

mkdir -p "$(dirname "$DEST")"
rm -rf "$DEST.tmp.$$"
mv "$tree" "$DEST.tmp.$$"
rm -rf "$DEST"
mv "$DEST.tmp.$$" "$DEST"
log "lwIP source ($(basename "$tree")) is in $DEST"
