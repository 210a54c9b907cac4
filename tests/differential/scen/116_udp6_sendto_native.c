/*
 * Behaviour: as 115_udp6_sendto_mapped, to the peer's native IPv6 address:
 * sendto fd00:200::1:7007 from an unconnected AF_INET6 UDP socket
 * ([::]:eph), recvfrom names [fd00:200::1]:7007 with len 28, recvmsg sets
 * msg_namelen 28, boundaries kept.
 */
#define PEER D_PEER_IP6
#include "115_udp6_sendto_mapped.c"
