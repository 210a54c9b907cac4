#!/bin/bash
# Scenario (fork model e): a child killed with SIGKILL while it holds
# connections. fork_server (tests/integration/fork/fork_server.c) runs in
# the accelerated netns with 3 children, each serving many connections
# from its own epoll set. A kernel client opens 9 connections (each greeted
# with the pid of the child that accepted it, one echo round trip each),
# SIGKILLs the child holding the first, and then: that child's connections
# must report EOF or RST on the next send/recv within 10 s (not hang); the
# other children's connections still echo; 12 new connections are served
# by the surviving children. The parent stays up and reports the victim
# killed by signal 9 and the others ended by our SIGTERM.
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$(dirname "$(readlink -f "$0")")/fork/lib.sh"

fork_lab_up

sx_bg srv "$FORK_BIN/fork_server" "$AIP" 7400 3 multi
slowwait 20 eval "(( \$(grep -c '^child ' '$T/srv.out') >= 3 ))" || fail "fork_server did not fork 3 children"
peer kill "$AIP" 7400 9 12 >"$T/kill.out" 2>&1
rc=$?
cat "$T/kill.out"
check_rc "kernel client: every check passed" "$rc" "$T/kill.out"
victim=$(awk '$1 == "victim" {print $2}' "$T/kill.out")
[[ -n $victim ]] || fail "the client did not pick a victim"
check "the killed child's connections ended (EOF or RST)" grep -q "^killed child's conn 0: \(eof\|rst\)$" "$T/kill.out"
check "new connections served by surviving children" grep -q "^ok: 12 new connections" "$T/kill.out"
check "parent still alive" alive "$(bg_pid srv)"
check "parent reaped the victim (signal 9)" grep -qx "exit $victim status=signal:9" "$T/srv.out"
bg_stop srv
check_eq "the other two children ended by SIGTERM" "$(grep -c ' status=signal:15$' "$T/srv.out")" 2
check_eq "no child failed" "$(grep -c '^FAIL' "$T/srv.out")" 0
finish
