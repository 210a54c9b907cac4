#!/usr/bin/env bash
# setup.sh: make this machine ready to build, test and demo accel. Run as
# root on Debian 12; idempotent (a second run only rebuilds what changed).
#
#   1. Debian packages (the list is tools/debian-packages.txt)
#   2. lwIP's source from Debian's source package (stack/fetch-lwip.sh)
#   3. configure and build (cmake -G Ninja, RelWithDebInfo, in build/)
#   4. install (cmake --install build: libaccel.so, accel-run, accel-stat, accel-lab)
#   5. hugepages reserved and hugetlbfs mounted (warns when unavailable);
#      the group accel, /run/accel and the group's hugetlbfs for accel-broker
#   6. the distro's nginx service stopped (apt starts it; port 80 stays free)
#
# Quiet: one line per step on stdout, details in the log file
# (ACCEL_SETUP_LOG, default /var/log/accel-setup.log). -v shows everything.
set -u
set -o pipefail

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
LOG=${ACCEL_SETUP_LOG:-/var/log/accel-setup.log}
BUILD=${ACCEL_BUILD_DIR:-$REPO/build}
VERBOSE=0
case ${1:-} in
"") ;;
-v) VERBOSE=1 ;;
-h | --help)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
*)
    echo "usage: setup.sh [-v]" >&2
    exit 2
    ;;
esac

if [[ $(id -u) -ne 0 ]]; then
    echo "setup: must run as root (sudo $0)" >&2
    exit 1
fi
mkdir -p "$(dirname "$LOG")"
: >>"$LOG" || {
    echo "setup: cannot write the log $LOG (set ACCEL_SETUP_LOG)" >&2
    exit 1
}
echo "=== setup $(date -Is) in $REPO" >>"$LOG"

NSTEPS=6
STEP=0
# step "what" CMD...: run CMD with its output in the log; one line on stdout.
step() {
    local what=$1 start rc
    shift
    STEP=$((STEP + 1))
    start=$(date +%s)
    printf 'setup [%d/%d] %s ... ' "$STEP" "$NSTEPS" "$what"
    echo "--- [$STEP/$NSTEPS] $what: $*" >>"$LOG"
    if ((VERBOSE)); then
        "$@" 2>&1 | tee -a "$LOG"
        rc=${PIPESTATUS[0]}
    else
        "$@" >>"$LOG" 2>&1
        rc=$?
    fi
    if ((rc != 0)); then
        echo "FAILED"
        echo "setup: step '$what' failed (exit $rc). Last lines of $LOG:" >&2
        tail -n 25 "$LOG" | sed 's/^/  | /' >&2
        exit 1
    fi
    echo "ok ($(($(date +%s) - start))s)"
}

packages() { grep -v '^[[:space:]]*\(#\|$\)' "$REPO/tools/debian-packages.txt"; }

install_packages() {
    local missing=() p
    for p in $(packages); do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
        echo "all $(packages | wc -l) packages already installed"
        return 0
    fi
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update || return 1
    apt-get install -y "${missing[@]}"
}

fetch_lwip() { sh "$REPO/stack/fetch-lwip.sh" "$REPO/.deps/lwip"; }

build() {
    cmake -S "$REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
        cmake --build "$BUILD"
}

install_build() {
    cmake --install "$BUILD" && ldconfig &&
        command -v accel-run && command -v accel-lab
}

hugepages() { "$REPO/tools/accel-lab" hugepages; }

# apt starts the distro's nginx; stop it by its pid file, not by name.
stop_distro_nginx() {
    if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
        systemctl stop nginx 2>/dev/null
        systemctl disable nginx 2>/dev/null
    elif command -v service >/dev/null 2>&1; then
        service nginx stop 2>/dev/null
    fi
    local pid
    pid=$(cat /run/nginx.pid 2>/dev/null)
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        kill -QUIT "$pid" 2>/dev/null
        for _ in $(seq 1 30); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        echo "nginx (pid $pid) is still running"
        return 1
    fi
    echo "distro nginx not running"
}

step "Debian packages" install_packages
step "lwIP source" fetch_lwip
step "build ($BUILD)" build
step "install" install_build
step "hugepages" hugepages
step "distro nginx stopped" stop_distro_nginx
echo "setup: done; accel-run and accel-lab are in $(dirname "$(command -v accel-run)") (log: $LOG)"
