/*
 * Behaviour: an unconnected bound UDP socket with the echo of "hello"
 * queued: shutdown with a bad "how" is EINVAL, then SHUT_RD, SHUT_WR and
 * SHUT_RDWR in turn give Linux's results (ENOTCONN when unconnected, the
 * flags set all the same) and poll revents, with recv and send between them
 * (scen/tmpl_udp_state.h).
 */
#define STATE U_BOUND_DATA
#define GROUP G_SHUT
#include "tmpl_udp_state.h"
