/*
 * Behaviour: a TCP connection reset by the peer, the error not yet reported:
 * every receive call (recv with MSG_PEEK and without, read, readv, recvfrom,
 * recvmsg, a zero-length recv), then every send call (send, write, sendto
 * with an address, sendmsg, writev, a zero-length send), all non-blocking,
 * give Linux's results and errno (scen/tmpl_tcp_state.h).
 */
#define STATE ST_RST
#define GROUP G_IO
#define LPORT (D_LPORT_BASE + 173)
#include "tmpl_tcp_state.h"
