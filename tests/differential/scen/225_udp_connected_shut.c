/*
 * Behaviour: a UDP socket connected to the echo service, nothing queued:
 * shutdown with a bad "how" is EINVAL, then SHUT_RD, SHUT_WR and SHUT_RDWR
 * in turn give Linux's results (ENOTCONN when unconnected, the flags set all
 * the same) and poll revents, with recv and send between them
 * (scen/tmpl_udp_state.h).
 */
#define STATE U_CONNECTED
#define GROUP G_SHUT
#include "tmpl_udp_state.h"
