/*
 * Behaviour: the peer closes an AF_INET6 connection at once (D_CLOSE), over
 * IPv4 (mapped) and IPv6: polled for POLLRDHUP it shows POLLRDHUP, recv
 * returns 0 twice, getpeername still names the peer, a first send
 * succeeds (the peer answers it with RST: POLLERR|POLLHUP), and the next
 * sends fail with EPIPE.
 */
#include "scen.h"

static void
closed(const char *ip)
{
    char buf[8];
    int fd = d_connect6(ip, D_CLOSE);

    NOTE("revents %s", tr_pollev(d_wait(fd, POLLRDHUP)));
    T(recv(fd, buf, sizeof(buf), 0));
    T(recv(fd, buf, sizeof(buf), 0));
    d_peer(fd, 0, "peer after FIN");
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLERR)));
    T(send(fd, "y", 1, MSG_NOSIGNAL));
    T(send(fd, "z", 1, MSG_NOSIGNAL));
    T(close(fd));
}

int
main(void)
{
    tr_init();
    closed(D_PEER_MAPPED);
    closed(D_PEER_IP6);
    return 0;
}
