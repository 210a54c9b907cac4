/*
 * Behaviour: a TCP socket bound to the subject's address (port 0), never
 * connected: shutdown with a bad "how" is EINVAL, then SHUT_RD, SHUT_WR and
 * SHUT_RDWR in turn give Linux's results and poll revents after each; recv
 * and send after them (scen/tmpl_tcp_state.h).
 */
#define STATE ST_BOUND
#define GROUP G_SHUT
#define LPORT (D_LPORT_BASE + 141)
#include "tmpl_tcp_state.h"
