/*
 * Behaviour: send/write/sendmsg without an address on an unconnected UDP
 * socket fail with EDESTADDRREQ; the failed send still auto-binds the
 * socket on Linux (a later bind() is EINVAL); sendto with a wrong family
 * fails with EAFNOSUPPORT, with a short length EINVAL; recv on an
 * unconnected UDP socket with MSG_DONTWAIT is EAGAIN.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in b = d_sin(D_SUBJ_IP, D_LPORT_BASE + 56);
    struct sockaddr_in d = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in6 v6;
    struct iovec iov = {"x", 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    char buf[4];
    int u;

    tr_init();
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(send(u, "x", 1, 0));
    T(write(u, "x", 1));
    T(sendmsg(u, &m, 0));
    T(recv(u, buf, sizeof(buf), MSG_DONTWAIT));
    T(bind(u, SA(&b), sizeof(b)));
    T(send(u, "x", 1, 0));
    memset(&v6, 0, sizeof(v6));
    v6.sin6_family = AF_INET6;
    T(sendto(u, "x", 1, 0, SA(&v6), sizeof(v6)));
    T(sendto(u, "x", 1, 0, SA(&d), 4));
    T(sendto(u, "x", 1, 0, SA(&d), sizeof(d)));
    T(recv(u, buf, sizeof(buf), 0));
    T(close(u));
    return 0;
}
