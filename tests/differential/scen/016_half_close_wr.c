/*
 * Behaviour: after shutdown(SHUT_WR) the peer sees EOF and the socket still
 * receives: data sent before the shutdown is answered by the sink's
 * summary, which arrives after our FIN; send after SHUT_WR fails with
 * EPIPE; once the peer closes too, poll reports
 * POLLIN|POLLOUT|POLLHUP|POLLRDHUP and a second SHUT_WR is ENOTCONN.
 */
#include "scen.h"

int
main(void)
{
    char buf[64];
    struct pollfd p;
    ssize_t n;
    int fd;

    tr_init();
    fd = d_connect(D_SINK);
    T(send(fd, "0123456789", 10, 0));
    T(shutdown(fd, SHUT_WR));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    n = T(d_read_full(fd, buf, sizeof(buf)));
    NOTE("reply %s", tr_data(buf, n > 0 ? (size_t)n : 0));
    T(recv(fd, buf, sizeof(buf), 0));
    p = (struct pollfd){.fd = fd, .events = POLLIN | POLLOUT | POLLRDHUP};
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    T(shutdown(fd, SHUT_WR));
    T(close(fd));
    return 0;
}
