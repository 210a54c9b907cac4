/*
 * Behaviour: as 118_udp6_connect_mapped, to fd00:200::1:7007: named
 * [fd00:200::2]:eph, peer [fd00:200::1]:7007, send and recv, then an
 * AF_UNSPEC connect disconnects (ENOTCONN, EDESTADDRREQ, name [::]:0).
 */
#define PEER D_PEER_IP6
#include "118_udp6_connect_mapped.c"
