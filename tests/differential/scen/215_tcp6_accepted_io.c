/*
 * Behaviour: an accepted TCP connection whose peer reads to EOF, over native
 * IPv6 (AF_INET6 to fd00:200::1): every receive call (recv with MSG_PEEK and
 * without, read, readv, recvfrom, recvmsg, a zero-length recv), then every
 * send call (send, write, sendto with an address, sendmsg, writev, a
 * zero-length send), all non-blocking, give Linux's results and errno
 * (scen/tmpl_tcp_state.h).
 */
#define STATE ST_ACCEPTED
#define GROUP G_IO
#define LPORT (D_LPORT_BASE + 215)
#define FAM6 1
#include "tmpl_tcp_state.h"
