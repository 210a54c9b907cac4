/*
 * Behaviour: a TCP connection after shutdown(SHUT_RDWR), the peer's FIN
 * back: SO_ERROR (twice), poll revents (all events and none), epoll and
 * select readiness, FIONREAD, SIOCOUTQ, the names, SO_ACCEPTCONN and
 * TCP_INFO's tcpi_state are Linux's (scen/tmpl_tcp_state.h).
 */
#define STATE ST_SHUT_RDWR
#define GROUP G_PROBE
#define LPORT (D_LPORT_BASE + 163)
#include "tmpl_tcp_state.h"
