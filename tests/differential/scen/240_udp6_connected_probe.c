/*
 * Behaviour: a UDP socket connected to the echo service, nothing queued,
 * over native IPv6 (AF_INET6 to fd00:200::1): poll, epoll and select
 * readiness, FIONREAD, SIOCOUTQ, the names, SO_TYPE and SO_ERROR (twice) are
 * Linux's (scen/tmpl_udp_state.h).
 */
#define STATE U_CONNECTED
#define GROUP G_PROBE
#define FAM6 1
#include "tmpl_udp_state.h"
