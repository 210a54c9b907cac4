/*
 * Behaviour: when the peer closes its side (FIN) after sending, we read the
 * data, then EOF (0) repeatedly, poll shows POLLIN|POLLRDHUP with POLLOUT
 * still set; our side can still send (the peer here is gone, so that first
 * send succeeds locally).
 */
#include "scen.h"

int
main(void)
{
    char buf[64];
    struct pollfd p;
    int fd;

    tr_init();
    fd = d_connect(D_SOURCE);
    T(send(fd, "6\n", 2, 0));
    T(d_read_full(fd, buf, 6));
    NOTE("data %s", tr_data(buf, 6));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLRDHUP)));
    T(recv(fd, buf, sizeof(buf), 0));
    T(read(fd, buf, sizeof(buf)));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    p = (struct pollfd){.fd = fd, .events = POLLIN | POLLOUT | POLLRDHUP};
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    T(send(fd, "late", 4, MSG_NOSIGNAL));
    T(close(fd));
    return 0;
}
