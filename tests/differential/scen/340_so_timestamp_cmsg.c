/*
 * Behaviour: SO_TIMESTAMP on a UDP socket: off by default, on reads 1;
 * with it on, each received datagram carries an SCM_TIMESTAMP control
 * message (level SOL_SOCKET, a struct timeval: only its presence and size
 * are printed); off again, none.
 */
#include "scen.h"

static void
rx(int fd)
{
    char buf[16], cbuf[128];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = cbuf,
                       .msg_controllen = sizeof(cbuf)};
    struct cmsghdr *c;

    T(send(fd, "t", 1, 0));
    d_wait(fd, POLLIN);
    T(recvmsg(fd, &m, 0));
    NOTE("controllen %s", m.msg_controllen ? ">0" : "0");
    for (c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c))
        NOTE("cmsg level %d type %d len %d", c->cmsg_level, c->cmsg_type,
             (int)c->cmsg_len);
}

int
main(void)
{
    struct sockaddr_in e = d_sin(D_PEER_IP, D_UDP_ECHO);
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(fd, SA(&e), sizeof(e)));
    d_geti(fd, SOL_SOCKET, SO_TIMESTAMP, "SO_TIMESTAMP");
    rx(fd);
    d_seti(fd, SOL_SOCKET, SO_TIMESTAMP, 1);
    d_geti(fd, SOL_SOCKET, SO_TIMESTAMP, "SO_TIMESTAMP");
    rx(fd);
    d_seti(fd, SOL_SOCKET, SO_TIMESTAMP, 0);
    rx(fd);
    T(close(fd));
    return 0;
}
