/*
 * Behaviour: a TCP connection after our SHUT_WR and the peer's FIN
 * (TIME_WAIT): shutdown with a bad "how" is EINVAL, then SHUT_RD, SHUT_WR
 * and SHUT_RDWR in turn give Linux's results and poll revents after each;
 * recv and send after them (scen/tmpl_tcp_state.h).
 */
#define STATE ST_TIME_WAIT
#define GROUP G_SHUT
#define LPORT (D_LPORT_BASE + 171)
#include "tmpl_tcp_state.h"
