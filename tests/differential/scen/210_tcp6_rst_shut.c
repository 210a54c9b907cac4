/*
 * Behaviour: a TCP connection reset by the peer, the error not yet reported,
 * over native IPv6 (AF_INET6 to fd00:200::1): shutdown with a bad "how" is
 * EINVAL, then SHUT_RD, SHUT_WR and SHUT_RDWR in turn give Linux's results
 * and poll revents after each; recv and send after them
 * (scen/tmpl_tcp_state.h).
 */
#define STATE ST_RST
#define GROUP G_SHUT
#define LPORT (D_LPORT_BASE + 210)
#define FAM6 1
#include "tmpl_tcp_state.h"
