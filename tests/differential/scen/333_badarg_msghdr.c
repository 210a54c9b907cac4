/*
 * Behaviour: sendmsg/recvmsg msghdr errors on accelerated sockets: an
 * msg_iovlen above IOV_MAX is EMSGSIZE (both calls), a NULL msg_iov with a
 * non-zero length EFAULT, a msg_name on a connected TCP socket is ignored, a
 * zero-iovec sendmsg returns 0 on TCP; on UDP a msg_namelen one byte short
 * of sockaddr_in is EINVAL, and a zero-iovec sendmsg sends an empty
 * datagram, echoed back and read as length 0 with msg_flags 0.
 */
#include "scen.h"

#include <limits.h>

int
main(void)
{
    struct sockaddr_in e = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct iovec iov = {"x", 1};
    struct msghdr m;
    char buf[8];
    int fd, u;

    tr_init();
    fd = d_connect(D_ECHO);
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = IOV_MAX + 1;
    T(sendmsg(fd, &m, MSG_NOSIGNAL));
    T(recvmsg(fd, &m, MSG_DONTWAIT));
    m.msg_iov = NULL;
    m.msg_iovlen = 1;
    T(sendmsg(fd, &m, MSG_NOSIGNAL));
    m.msg_iov = &iov;
    m.msg_name = &e;
    m.msg_namelen = sizeof(e);
    T(sendmsg(fd, &m, 0));
    T(d_read_full(fd, buf, 1));
    memset(&m, 0, sizeof(m));
    T(sendmsg(fd, &m, 0));
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    m.msg_name = &e;
    m.msg_namelen = sizeof(e) - 1;
    T(sendmsg(u, &m, 0));
    m.msg_namelen = sizeof(e);
    T(sendmsg(u, &m, 0));
    d_wait(u, POLLIN);
    memset(&m, 0, sizeof(m));
    iov = (struct iovec){buf, sizeof(buf)};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    T(recvmsg(u, &m, 0));
    NOTE("flags %s", tr_msgflags(m.msg_flags));
    T(close(u));
    T(close(fd));
    return 0;
}
