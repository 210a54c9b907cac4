/*
 * Behaviour: a connected UDP socket with the echo of "hello" queued, over
 * native IPv6 (AF_INET6 to fd00:200::1): shutdown with a bad "how" is
 * EINVAL, then SHUT_RD, SHUT_WR and SHUT_RDWR in turn give Linux's results
 * (ENOTCONN when unconnected, the flags set all the same) and poll revents,
 * with recv and send between them (scen/tmpl_udp_state.h).
 */
#define STATE U_CONN_DATA
#define GROUP G_SHUT
#define FAM6 1
#include "tmpl_udp_state.h"
