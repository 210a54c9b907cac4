/*
 * Behaviour: an unconnected bound UDP socket with the echo of "hello"
 * queued: poll, epoll and select readiness, FIONREAD, SIOCOUTQ, the names,
 * SO_TYPE and SO_ERROR (twice) are Linux's (scen/tmpl_udp_state.h).
 */
#define STATE U_BOUND_DATA
#define GROUP G_PROBE
#include "tmpl_udp_state.h"
