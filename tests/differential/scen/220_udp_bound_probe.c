/*
 * Behaviour: a UDP socket bound to the subject's address (port 0),
 * unconnected, nothing queued: poll, epoll and select readiness, FIONREAD,
 * SIOCOUTQ, the names, SO_TYPE and SO_ERROR (twice) are Linux's
 * (scen/tmpl_udp_state.h).
 */
#define STATE U_BOUND
#define GROUP G_PROBE
#include "tmpl_udp_state.h"
