/*
 * Behaviour: an accepted TCP connection whose peer closed at once: SO_ERROR
 * (twice), poll revents (all events and none), epoll and select readiness,
 * FIONREAD, SIOCOUTQ, the names, SO_ACCEPTCONN and TCP_INFO's tcpi_state are
 * Linux's (scen/tmpl_tcp_state.h).
 */
#define STATE ST_ACCEPTED_FIN
#define GROUP G_PROBE
#define LPORT (D_LPORT_BASE + 190)
#include "tmpl_tcp_state.h"
