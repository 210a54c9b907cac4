/*
 * Behaviour: an AF_INET6 TCP connection reset by the peer (SO_LINGER 0
 * close on D_RST), mapped over IPv4 and then over IPv6: polled for
 * POLLRDHUP it shows POLLERR|POLLHUP|POLLRDHUP, recv fails with ECONNRESET
 * once, then reads 0; send fails with EPIPE (MSG_NOSIGNAL); SO_ERROR is 0
 * by then.
 */
#include "scen.h"

static void
reset(const char *ip)
{
    char buf[8];
    int fd = d_connect6(ip, D_RST);

    T(send(fd, "r", 1, MSG_NOSIGNAL));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLRDHUP)));
    T(recv(fd, buf, sizeof(buf), 0));
    T(recv(fd, buf, sizeof(buf), 0));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    T(close(fd));
}

int
main(void)
{
    tr_init();
    reset(D_PEER_MAPPED);
    reset(D_PEER_IP6);
    return 0;
}
