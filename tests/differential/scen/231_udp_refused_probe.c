/*
 * Behaviour: a UDP socket connected to a closed port, the ICMP port
 * unreachable pending: poll, epoll and select readiness, FIONREAD, SIOCOUTQ,
 * the names, SO_TYPE and SO_ERROR (twice) are Linux's
 * (scen/tmpl_udp_state.h).
 */
#define STATE U_REFUSED
#define GROUP G_PROBE
#include "tmpl_udp_state.h"
