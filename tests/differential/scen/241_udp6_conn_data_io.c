/*
 * Behaviour: a connected UDP socket with the echo of "hello" queued, over
 * native IPv6 (AF_INET6 to fd00:200::1): receive calls (peeks with MSG_PEEK
 * and MSG_TRUNC, recvfrom and recvmsg naming the sender, read, recv, readv,
 * a zero-length recv), then send calls (send, write, sendto, sendmsg without
 * and with a name, writev, a zero-length send), non-blocking, give Linux's
 * results and errno (scen/tmpl_udp_state.h).
 */
#define STATE U_CONN_DATA
#define GROUP G_IO
#define FAM6 1
#include "tmpl_udp_state.h"
