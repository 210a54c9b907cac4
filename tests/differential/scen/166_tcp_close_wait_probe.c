/*
 * Behaviour: a TCP connection the peer closed at once (CLOSE_WAIT): SO_ERROR
 * (twice), poll revents (all events and none), epoll and select readiness,
 * FIONREAD, SIOCOUTQ, the names, SO_ACCEPTCONN and TCP_INFO's tcpi_state are
 * Linux's (scen/tmpl_tcp_state.h).
 */
#define STATE ST_CLOSE_WAIT
#define GROUP G_PROBE
#define LPORT (D_LPORT_BASE + 166)
#include "tmpl_tcp_state.h"
