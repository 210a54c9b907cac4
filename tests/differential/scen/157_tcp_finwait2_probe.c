/*
 * Behaviour: a TCP connection after our SHUT_WR while the source service
 * keeps sending (FIN_WAIT2, receive buffer full): SO_ERROR (twice), poll
 * revents (all events and none), epoll and select readiness, FIONREAD,
 * SIOCOUTQ, the names, SO_ACCEPTCONN and TCP_INFO's tcpi_state are Linux's
 * (scen/tmpl_tcp_state.h).
 */
#define STATE ST_FINWAIT2
#define GROUP G_PROBE
#define LPORT (D_LPORT_BASE + 157)
#include "tmpl_tcp_state.h"
