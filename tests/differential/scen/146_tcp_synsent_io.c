/*
 * Behaviour: a non-blocking TCP connect in progress (SYN_SENT: the address
 * has no owner, the neighbour resolution takes seconds): every receive call
 * (recv with MSG_PEEK and without, read, readv, recvfrom, recvmsg, a
 * zero-length recv), then every send call (send, write, sendto with an
 * address, sendmsg, writev, a zero-length send), all non-blocking, give
 * Linux's results and errno (scen/tmpl_tcp_state.h).
 */
#define STATE ST_SYNSENT
#define GROUP G_IO
#define LPORT (D_LPORT_BASE + 146)
#include "tmpl_tcp_state.h"
