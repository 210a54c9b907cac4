/*
 * Behaviour: when the peer aborts (close with SO_LINGER 0 -> RST), poll
 * reports POLLIN|POLLOUT|POLLERR|POLLHUP|POLLRDHUP, SO_ERROR is
 * ECONNRESET, the first recv fails with ECONNRESET, later recvs return 0,
 * send fails with EPIPE.
 */
#include "scen.h"

int
main(void)
{
    char buf[8];
    struct pollfd p;
    int fd, err = -1;
    socklen_t el = sizeof(err);

    tr_init();
    fd = d_connect_rst();
    /* events = 0: only POLLERR/POLLHUP can end this wait. */
    NOTE("wait %s", tr_pollev(d_wait(fd, 0)));
    /* Linux's tcp_reset sets sk_err, which wakes the wait, before
     * tcp_done sets sk_shutdown (POLLIN|POLLRDHUP): a poll at once could
     * see the socket in between (the kernel-twice self-check did once). */
    usleep(20000);
    p = (struct pollfd){.fd = fd, .events = POLLIN | POLLOUT | POLLRDHUP};
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    T(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el));
    NOTE("SO_ERROR %s", err ? tr_errname(err) : "0");
    T(close(fd));

    fd = d_connect_rst();
    d_wait(fd, 0);
    usleep(20000); /* as above */
    T(recv(fd, buf, sizeof(buf), 0));
    T(recv(fd, buf, sizeof(buf), 0));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    p.fd = fd;
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    T(close(fd));
    return 0;
}
