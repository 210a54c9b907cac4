#!/bin/sh
# CI check (ctest, label unit): library code never calls an interposed name
# directly, only through libc_<name>() (STYLE.md 2.4). A direct call from
# inside libaccel.so would bind to our own wrapper and recurse or bypass
# the in-library mark. Every relocation in the preload objects that names
# an interposed symbol is such a call (the wrappers define the names but
# never reference them), so any hit fails the check.
#
# usage: check-libc-calls.sh EXPORTS_MAP OBJECT...
set -eu
map=$1
shift
names=$(sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$map")
[ -n "$names" ] || { echo "no names in $map" >&2; exit 1; }
[ $# -gt 0 ] || { echo "no objects given" >&2; exit 1; }
pattern=$(printf '%s\n' $names | sed 's/.*/^&$/' )
bad=0
for obj in "$@"; do
    hits=$(readelf -rW "$obj" | awk 'NF >= 5 && $1 ~ /^[0-9a-f]+$/ { s = $5; sub(/@.*/, "", s); print s }' |
           grep -x -F "$(printf '%s\n' $names)" | sort -u || true)
    if [ -n "$hits" ]; then
        echo "$(basename "$obj"): direct call to interposed name(s): $(echo $hits)" >&2
        bad=1
    fi
done
[ $bad -eq 0 ] && echo "ok: $# objects, no direct calls to $(printf '%s\n' $names | wc -l) interposed names"
exit $bad
