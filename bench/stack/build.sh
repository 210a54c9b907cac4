# Sourced by bench/stack's scripts (POSIX sh).
# bench_stack_build SRC DIR TARGET [CMAKE ARGS...]: configure DIR from SRC
# once (stack only: no preload), then build TARGET; on failure the tool's
# output goes to stderr and the script exits 1.
bench_stack_build() {
    _src=$1 _dir=$2 _target=$3
    shift 3
    if [ ! -f "$_dir/build.ninja" ]; then
        _log=$(cmake -S "$_src" -B "$_dir" -G Ninja \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCEL_BUILD_PRELOAD=OFF \
            "$@" 2>&1) || { echo "$_log" >&2; exit 1; }
    fi
    _log=$(ninja -C "$_dir" "$_target" 2>&1) || { echo "$_log" >&2; exit 1; }
}
