/*
 * Behaviour: a TCP connection with the echo of "hello" queued, unread, over
 * native IPv6 (AF_INET6 to fd00:200::1): SO_ERROR (twice), poll revents (all
 * events and none), epoll and select readiness, FIONREAD, SIOCOUTQ, the
 * names, SO_ACCEPTCONN and TCP_INFO's tcpi_state are Linux's
 * (scen/tmpl_tcp_state.h).
 */
#define STATE ST_ESTAB_DATA
#define GROUP G_PROBE
#define LPORT (D_LPORT_BASE + 202)
#define FAM6 1
#include "tmpl_tcp_state.h"
