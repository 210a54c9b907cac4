/*
 * Behaviour: a TCP connection after our SHUT_WR while the source service
 * keeps sending (FIN_WAIT2, receive buffer full): shutdown with a bad "how" is
 * EINVAL, then SHUT_RD, SHUT_WR and SHUT_RDWR in turn give Linux's results
 * and poll revents after each; recv and send after them
 * (scen/tmpl_tcp_state.h).
 */
#define STATE ST_FINWAIT2
#define GROUP G_SHUT
#define LPORT (D_LPORT_BASE + 156)
#include "tmpl_tcp_state.h"
