/*
 * Behaviour: a TCP connection closed by the peer and then by our SHUT_WR
 * (both directions closed): SO_ERROR (twice), poll revents (all events and
 * none), epoll and select readiness, FIONREAD, SIOCOUTQ, the names,
 * SO_ACCEPTCONN and TCP_INFO's tcpi_state are Linux's
 * (scen/tmpl_tcp_state.h).
 */
#define STATE ST_LAST_ACK
#define GROUP G_PROBE
#define LPORT (D_LPORT_BASE + 169)
#include "tmpl_tcp_state.h"
