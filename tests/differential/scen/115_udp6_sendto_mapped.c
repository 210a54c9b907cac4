/*
 * Behaviour: an unconnected AF_INET6 UDP socket sends to the peer's UDP
 * echo as ::ffff:10.200.0.1 (implicit bind: named [::]:eph); recvfrom
 * names the sender [::ffff:10.200.0.1]:7007 with len 28, recvmsg sets
 * msg_namelen 28; datagram boundaries are kept.
 */
#include "scen.h"

/* The peer address (116_udp6_sendto_native.c includes this file with another).
 */
#ifndef PEER
#define PEER D_PEER_MAPPED
#endif

int
main(void)
{
    struct sockaddr_in6 d = d_sin6(PEER, D_UDP_ECHO);
    struct sockaddr_in6 from;
    socklen_t fl = sizeof(from);
    char buf[64];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_name = &from,
                       .msg_namelen = sizeof(from),
                       .msg_iov = &iov,
                       .msg_iovlen = 1};
    int u;

    tr_init();
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(sendto(u, "hello", 5, 0, SA(&d), sizeof(d)));
    d_name(u, 1, "name");
    memset(&from, 0, sizeof(from));
    T(recvfrom(u, buf, sizeof(buf), 0, SA(&from), &fl));
    NOTE("from %s len %d data %s", tr_addr(&from, 0), (int)fl, tr_data(buf, 5));
    T(sendto(u, "one", 3, 0, SA(&d), sizeof(d)));
    T(sendto(u, "three", 5, 0, SA(&d), sizeof(d)));
    T(recvfrom(u, buf, sizeof(buf), 0, NULL, NULL));
    memset(&from, 0, sizeof(from));
    T(recvmsg(u, &m, 0));
    NOTE("msg from %s namelen %d flags %s data %s", tr_addr(&from, 0),
         (int)m.msg_namelen, tr_msgflags(m.msg_flags), tr_data(buf, 5));
    T(recv(u, buf, sizeof(buf), MSG_DONTWAIT));
    T(close(u));
    return 0;
}
