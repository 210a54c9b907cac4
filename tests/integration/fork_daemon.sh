#!/bin/bash
# Scenario (fork model): a daemon. The process that starts the data path
# (it listens) forks and exits at once, before its child has run, as
# nginx's default `daemon on`, sshd or any SysV daemon does; the child
# (setsid) forks two workers that accept from the inherited listener
# through epoll. fork/daemon.py is the daemon and its client. The parent
# leaves with os._exit, then with sys.exit (atexit handlers and library
# destructors run). Checks: the command returns 0, kernel clients get
# every answer from the workers; both workers stop on request (the
# second stop may wait on the first one's queue: it moves to the other
# worker when the first exits, where it used to be reset) and exit 0; a
# connection while only the daemon lives is refused (the daemon, which
# never polls the port itself, answers from its progress thread); no
# accelerated process dies (the exiting parent used to close the port
# under its children: their first poll crashed).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$(dirname "$(readlink -f "$0")")/fork/lib.sh"

N=30
fork_lab_up

port=7700
for how in _exit exit; do
    port=$((port + 1))
    log "check: the parent leaves with $how right after its fork"
    SX ACCEL_STATS=2 "$PY" "$FORK_DIR/daemon.py" serve "$AIP" "$port" "$how" \
        >"$T/daemon-$how.out" 2>"$T/daemon-$how.err"
    check_eq "$how: the daemon's start command exit status" "$?" 0
    K timeout -k 5 120 "$PY" "$FORK_DIR/daemon.py" client "$AIP" "$port" "$N" \
        >"$T/client-$how.out" 2>&1
    check_rc "$how: client exit status" "$?" "$T/client-$how.out"
    check "$how: $N answers from both workers, both stopped" \
        grep -Eq "^clients ok: $N answers from 2 workers, 2 stopped" "$T/client-$how.out"
    wait_line "$T/daemon-$how.out" '^workers done' 30
    check_eq "$how: the workers' exit statuses" "$(head -1 "$T/daemon-$how.out")" "workers done: 0 0"
    # Nobody holds the listener now; the daemon lives on (4 s) without
    # polling: its progress thread must answer with RST.
    check_eq "$how: a connection while only the daemon lives is refused" \
        "$(K timeout -k 5 60 "$PY" "$FORK_DIR/daemon.py" refused "$AIP" "$port" 2>&1)" refused
    wait_line "$T/daemon-$how.out" '^daemon done' 30
    if ((!FORK_KERNEL)); then
        # Stats come at exit(): the daemon's, and the parent's when it
        # left by sys.exit (os._exit, as the workers use, skips them).
        want=1
        [[ $how == exit ]] && want=2
        slowwait 20 eval "(( \$(grep -c 'stats: data path' '$T/daemon-$how.err') >= $want ))"
        check_eq "$how: processes that ran on the accelerated port (stats at exit)" \
            "$(grep -Ec 'stats: data path: af_(xdp|packet)' "$T/daemon-$how.err")" "$want"
        check "$how: no process died holding the port lock" \
            eval "! grep -q 'died holding the port lock' '$T/daemon-$how.err'"
    fi
done
finish
