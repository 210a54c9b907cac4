/*
 * Behaviour: an accepted TCP connection whose peer closed at once: shutdown
 * with a bad "how" is EINVAL, then SHUT_RD, SHUT_WR and SHUT_RDWR in turn
 * give Linux's results and poll revents after each; recv and send after them
 * (scen/tmpl_tcp_state.h).
 */
#define STATE ST_ACCEPTED_FIN
#define GROUP G_SHUT
#define LPORT (D_LPORT_BASE + 189)
#include "tmpl_tcp_state.h"
