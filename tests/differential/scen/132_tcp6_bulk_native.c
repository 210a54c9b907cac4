/*
 * Behaviour: as 131_tcp6_bulk_mapped, over IPv6 to fd00:200::1: 1 MB to
 * the sink and 1 MB from the source, counts and hashes right, then EOF.
 */
#define PEER D_PEER_IP6
#include "131_tcp6_bulk_mapped.c"
