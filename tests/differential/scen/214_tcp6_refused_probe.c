/*
 * Behaviour: a non-blocking TCP connect refused by the peer, SO_ERROR
 * pending, over native IPv6 (AF_INET6 to fd00:200::1): SO_ERROR (twice),
 * poll revents (all events and none), epoll and select readiness, FIONREAD,
 * SIOCOUTQ, the names, SO_ACCEPTCONN and TCP_INFO's tcpi_state are Linux's
 * (scen/tmpl_tcp_state.h).
 */
#define STATE ST_REFUSED
#define GROUP G_PROBE
#define LPORT (D_LPORT_BASE + 214)
#define FAM6 1
#include "tmpl_tcp_state.h"
