#!/bin/bash
# Scenario: PostgreSQL (Debian's, unmodified; it refuses to run as root)
# accelerated as the user postgres, which has no capability at all: its
# port goes through accel-broker (docs/DESIGN.md section 3, "Privileges").
# The postmaster listens on the stack's address and forks a backend per
# connection (and its auxiliary processes), all sharing the port (section
# 8); pgbench runs from the kernel peer.
#
# Checks:
#   1. the postmaster answers on the stack's address, its data path is
#      af_xdp "(steered, accel-broker)" and it never ran as root;
#   2. pgbench -i, then pgbench -c 4 -t 250: every transaction completes;
#   3. the files, sockets and memory accel made are owner- or group-only
#      while it runs (check_private, tests/lib/unpriv.sh);
#   4. fast shutdown; the postmaster's counters show the connections and
#      frames went through the stack; accel-broker released the interface
#      and left accel's program attached (ACCEL_XDP_KEEP).
. "$(dirname "$(readlink -f "$0")")/../lib/netns.sh"
. "$LIBDIR/unpriv.sh"

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -x $PGBIN/postgres && -x $PGBIN/initdb ]] ||
    fail "PostgreSQL is not installed (tools/setup.sh installs postgresql)"
command -v pgbench >/dev/null || fail "pgbench is not installed (postgresql-contrib)"
PORT=5432
TX=250

lab_up
unpriv_setup postgres

log "---- initdb as postgres (no accel)"
install -d -o postgres -g postgres -m 0700 "$T/pg" "$T/pgsock"
setpriv --reuid=postgres --regid=postgres --init-groups "$PGBIN/initdb" -D "$T/pg" \
    -U postgres --auth=trust >"$T/initdb.out" 2>&1 || fail "initdb: $(tail -3 "$T/initdb.out")"
echo "host all all 10.200.0.0/24 trust" >>"$T/pg/pg_hba.conf"

log "---- 1. the postmaster as postgres, accelerated"
bg_start_as pg postgres ACCEL_STATS=2 "$PGBIN/postgres" -D "$T/pg" \
    -c listen_addresses="$AIP" -c port="$PORT" -c unix_socket_directories="$T/pgsock" \
    -c max_connections=20 -c shared_buffers=16MB -c fsync=off
pg=$(bg_pid pg)
wait_tcp K "$AIP" "$PORT" 30 || fail "postgres did not answer on $AIP:$PORT"
check_eq "the postmaster's user" "$(stat -c %U "/proc/$pg")" postgres
check_eq "the postmaster has no capability" \
    "$(awk '/^CapEff/ {print $2}' "/proc/$pg/status")" 0000000000000000

log "---- 2. pgbench from the kernel peer"
PGB() { K timeout 120 pgbench -h "$AIP" -p "$PORT" -U postgres "$@" postgres; }
check "pgbench -i" PGB -i -s 1 -q
PGB -c 4 -j 2 -t "$TX" >"$T/pgbench.out" 2>&1
check_eq "pgbench -c 4 -t $TX: exit status" "$?" 0
check_eq "pgbench: transactions" \
    "$(sed -n 's/^number of transactions actually processed: \([0-9/]*\).*/\1/p' "$T/pgbench.out")" \
    "$((4 * TX))/$((4 * TX))"

log "---- 3. what accel made is not open to others"
check_private "$pg"

log "---- 4. shutdown, counters, the broker's cleanup"
kill -INT "$pg"
busywait 20000 dead "$pg" || check_fail "postgres did not stop on SIGINT"
wait "$pg" 2>/dev/null
check_on_stack pg postgres 6 100
finish
