/*
 * Behaviour: sendmsg with several iovecs sends their concatenation;
 * recvmsg scatters into several iovecs with msg_flags 0; on UDP, recvmsg
 * fills msg_name/msg_namelen and one datagram spreads across iovecs;
 * sendmsg with msg_name on a connected TCP socket ignores the name (Linux);
 * MSG_TRUNC in msg_flags when the iovecs are too short for a datagram.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in d = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in from;
    char x[5], y[5], z[5];
    struct iovec wv[3] = {{"12345", 5}, {"678", 3}, {"90", 2}};
    struct iovec rv[3] = {{x, 5}, {y, 5}, {z, 5}};
    struct msghdr w = {.msg_iov = wv, .msg_iovlen = 3};
    struct msghdr r = {.msg_iov = rv, .msg_iovlen = 3};
    int fd, u;

    tr_init();
    fd = d_connect(D_ECHO);
    T(sendmsg(fd, &w, 0));
    while (recv(fd, x, 10, MSG_PEEK | MSG_WAITALL) < 10)
        d_wait(fd, POLLIN);
    T(recvmsg(fd, &r, 0));
    NOTE("x %s y %s flags %s", tr_data(x, 5), tr_data(y, 5),
         tr_msgflags(r.msg_flags));
    w.msg_name = &d;
    w.msg_namelen = sizeof(d);
    T(sendmsg(fd, &w, MSG_NOSIGNAL));
    T(close(fd));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(sendmsg(u, &w, 0));
    memset(&from, 0, sizeof(from));
    r.msg_name = &from;
    r.msg_namelen = sizeof(from);
    T(recvmsg(u, &r, 0));
    NOTE("from %s namelen %d x %s y %s flags %s", tr_addr(&from, 0),
         (int)r.msg_namelen, tr_data(x, 5), tr_data(y, 5),
         tr_msgflags(r.msg_flags));
    T(sendmsg(u, &w, 0));
    rv[0].iov_len = 4;
    r.msg_iovlen = 1;
    T(recvmsg(u, &r, 0));
    NOTE("x %s flags %s", tr_data(x, 4), tr_msgflags(r.msg_flags));
    T(close(u));
    return 0;
}
