/*
 * Behaviour: as 113_connect6_nonblock_mapped, to the peer's native IPv6
 * address fd00:200::1: EINPROGRESS, POLLOUT and SO_ERROR 0; to the refused
 * port, POLLOUT|POLLERR|POLLHUP and SO_ERROR ECONNREFUSED.
 */
#define PEER D_PEER_IP6
#include "113_connect6_nonblock_mapped.c"
