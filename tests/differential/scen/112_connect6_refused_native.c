/*
 * Behaviour: as 111_connect6_refused_mapped, to the peer's native IPv6
 * address: an AF_INET6 TCP connect to fd00:200::1:7009 fails with
 * ECONNREFUSED, SO_ERROR is 0 afterwards, the socket is unconnected and a
 * second connect to the echo port succeeds.
 */
#define PEER D_PEER_IP6
#include "111_connect6_refused_mapped.c"
