#!/usr/bin/env bash
# Fails when a tracked C/C++ source differs from what .clang-format says.
# Usage: tools/check-format.sh [REPO]   (run by ctest, label unit)
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1
command -v clang-format >/dev/null || { echo "clang-format not installed"; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cc' 2>/dev/null | grep -v '^stack/patches/')
((${#files[@]} > 0)) || { echo "no sources found under $top"; exit 1; }
bad=0
for f in "${files[@]}"; do
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
        echo "needs clang-format: $f"
        bad=$((bad + 1))
    fi
done
echo "check-format: ${#files[@]} files, $bad not formatted"
((bad == 0))
