/*
 * Behaviour: a TCP connection after our SHUT_WR and the peer's FIN
 * (TIME_WAIT), over native IPv6 (AF_INET6 to fd00:200::1): SO_ERROR (twice),
 * poll revents (all events and none), epoll and select readiness, FIONREAD,
 * SIOCOUTQ, the names, SO_ACCEPTCONN and TCP_INFO's tcpi_state are Linux's
 * (scen/tmpl_tcp_state.h).
 */
#define STATE ST_TIME_WAIT
#define GROUP G_PROBE
#define LPORT (D_LPORT_BASE + 208)
#define FAM6 1
#include "tmpl_tcp_state.h"
