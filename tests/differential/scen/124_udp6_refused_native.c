/*
 * Behaviour: as 123_udp6_refused_mapped, over IPv6: the peer's ICMPv6 port
 * unreachable for fd00:200::1:7009 makes the connected AF_INET6 UDP
 * socket's recv fail with ECONNREFUSED once (after POLLERR).
 */
#define PEER D_PEER_IP6
#include "123_udp6_refused_mapped.c"
