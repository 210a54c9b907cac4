/*
 * Behaviour: shutdown(SHUT_RD) makes recv return 0 at once and poll report
 * POLLIN|POLLRDHUP, while sending still works; shutdown with a bad "how"
 * fails with EINVAL, shutdown on an unconnected socket with ENOTCONN,
 * SHUT_RDWR then poll reports POLLHUP, and POLLERR once the peer's data
 * (its answer to our FIN) was met with a RST.
 */
#include "scen.h"

int
main(void)
{
    char buf[8];
    struct pollfd p;
    int fd, u;

    tr_init();
    fd = d_connect(D_SINK);
    T(shutdown(fd, 7));
    T(shutdown(fd, -1));
    T(shutdown(fd, SHUT_RD));
    T(recv(fd, buf, sizeof(buf), 0));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    p = (struct pollfd){.fd = fd, .events = POLLIN | POLLOUT | POLLRDHUP};
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    T(send(fd, "abc", 3, 0));
    T(shutdown(fd, SHUT_RDWR));
    /* The sink answers our FIN with a line, which a socket shut for
     * reading answers with a RST (POLLERR). Whether that has happened by
     * the next call is a race in either world: wait until it has. */
    usleep(200000);
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    T(close(fd));

    u = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(shutdown(u, SHUT_RD));
    T(shutdown(u, SHUT_RDWR));
    T(close(u));
    return 0;
}
