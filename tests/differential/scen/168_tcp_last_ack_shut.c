/*
 * Behaviour: a TCP connection closed by the peer and then by our SHUT_WR
 * (both directions closed): shutdown with a bad "how" is EINVAL, then
 * SHUT_RD, SHUT_WR and SHUT_RDWR in turn give Linux's results and poll
 * revents after each; recv and send after them (scen/tmpl_tcp_state.h).
 */
#define STATE ST_LAST_ACK
#define GROUP G_SHUT
#define LPORT (D_LPORT_BASE + 168)
#include "tmpl_tcp_state.h"
