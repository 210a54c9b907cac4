/*
 * Behaviour: shutdown through one descriptor acts on the shared socket:
 * SHUT_WR on a dup makes the echo close, and the original reads EOF and
 * polls POLLIN|POLLOUT|POLLHUP|POLLRDHUP; closing the dup leaves the
 * original open (getpeername still works), closing it too releases it
 * (further calls on either number EBADF).
 */
#include "scen.h"

int
main(void)
{
    struct pollfd p;
    char buf[8];
    int fd, d;

    tr_init();
    fd = d_connect(D_ECHO);
    d = TF(dup(fd));
    T(send(fd, "x", 1, 0));
    T(shutdown(d, SHUT_WR));
    T(d_read_full(fd, buf, 1));
    T(recv(fd, buf, sizeof(buf), 0));
    p = (struct pollfd){fd, POLLIN | POLLOUT | POLLRDHUP, 0};
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    T(close(d));
    d_peer(fd, 0, "peer");
    T(send(d, "y", 1, MSG_NOSIGNAL));
    T(close(fd));
    T(send(fd, "y", 1, MSG_NOSIGNAL));
    T(close(fd));
    return 0;
}
