/*
 * Behaviour: an unconnected UDP socket sends with sendto (implicit bind to
 * an ephemeral port), receives the echo with recvfrom naming the sender,
 * recvmsg fills msg_name; a NULL address buffer is fine; datagram
 * boundaries are kept (two datagrams, two reads).
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in d = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in from, me;
    socklen_t fl = sizeof(from), ml = sizeof(me);
    char buf[64];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_name = &from,
                       .msg_namelen = sizeof(from),
                       .msg_iov = &iov,
                       .msg_iovlen = 1};
    int u;

    tr_init();
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(sendto(u, "hello", 5, 0, SA(&d), sizeof(d)));
    T(getsockname(u, SA(&me), &ml));
    NOTE("name %s", tr_addr(&me, 1));
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
