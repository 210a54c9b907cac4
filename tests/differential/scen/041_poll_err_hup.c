/*
 * Behaviour: poll revents for error states: after a peer RST
 * POLLIN|POLLOUT|POLLERR|POLLHUP|POLLRDHUP (POLLERR/POLLHUP even with
 * events 0), after the error is consumed, after a refused connect, after
 * both directions are shut down (POLLHUP), and ppoll gives the same.
 */
#include "scen.h"

#define ALL (POLLIN | POLLOUT | POLLRDHUP)

static void
show(const char *what, int fd, int events)
{
    struct pollfd p = {.fd = fd, .events = (short)events};
    struct timespec ts = {0, 0};

    T(poll(&p, 1, 0));
    NOTE("%s: %s", what, tr_pollev(p.revents));
    p.revents = 0;
    T(ppoll(&p, 1, &ts, NULL));
    NOTE("%s (ppoll): %s", what, tr_pollev(p.revents));
}

int
main(void)
{
    struct sockaddr_in r = d_sin(D_PEER_IP, D_REFUSED);
    char buf[4];
    int fd;

    tr_init();
    fd = d_connect_rst();
    d_wait(fd, 0);
    show("rst", fd, ALL);
    show("rst events 0", fd, 0);
    T(recv(fd, buf, sizeof(buf), 0));
    show("rst consumed", fd, ALL);
    T(close(fd));

    fd = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    T(connect(fd, SA(&r), sizeof(r)));
    d_wait(fd, POLLOUT);
    show("refused", fd, ALL);
    T(close(fd));

    fd = d_connect(D_ECHO);
    T(shutdown(fd, SHUT_WR));
    d_wait(fd, POLLRDHUP);
    show("both closed", fd, ALL);
    T(close(fd));
    return 0;
}
