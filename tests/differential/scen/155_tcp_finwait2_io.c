/*
 * Behaviour: a TCP connection after our SHUT_WR while the source service
 * keeps sending (FIN_WAIT2, receive buffer full): every receive call (recv with
 * MSG_PEEK and without, read, readv, recvfrom, recvmsg, a zero-length recv),
 * then every send call (send, write, sendto with an address, sendmsg,
 * writev, a zero-length send), all non-blocking, give Linux's results and
 * errno (scen/tmpl_tcp_state.h).
 */
#define STATE ST_FINWAIT2
#define GROUP G_IO
#define LPORT (D_LPORT_BASE + 155)
#include "tmpl_tcp_state.h"
