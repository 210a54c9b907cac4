/*
 * Behaviour: a non-blocking TCP connect in progress (SYN_SENT: the address
 * has no owner, the neighbour resolution takes seconds): SO_ERROR (twice),
 * poll revents (all events and none), epoll and select readiness, FIONREAD,
 * SIOCOUTQ, the names, SO_ACCEPTCONN and TCP_INFO's tcpi_state are Linux's
 * (scen/tmpl_tcp_state.h).
 */
#define STATE ST_SYNSENT
#define GROUP G_PROBE
#define LPORT (D_LPORT_BASE + 148)
#include "tmpl_tcp_state.h"
