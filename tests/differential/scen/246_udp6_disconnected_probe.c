/*
 * Behaviour: a UDP socket connected and then disconnected with AF_UNSPEC,
 * over native IPv6 (AF_INET6 to fd00:200::1): poll, epoll and select
 * readiness, FIONREAD, SIOCOUTQ, the names, SO_TYPE and SO_ERROR (twice) are
 * Linux's (scen/tmpl_udp_state.h).
 */
#define STATE U_DISCONNECTED
#define GROUP G_PROBE
#define FAM6 1
#include "tmpl_udp_state.h"
