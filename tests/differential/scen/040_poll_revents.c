/*
 * Behaviour: poll revents per socket state: fresh TCP socket
 * POLLOUT|POLLHUP, listener nothing (then POLLIN with a pending
 * connection), connected POLLOUT, data POLLIN|POLLOUT, peer FIN adds
 * POLLRDHUP, a closed fd POLLNVAL, a negative fd is skipped, a UDP socket
 * POLLOUT; POLLRDNORM/POLLWRNORM are reported when asked for.
 */
#include "scen.h"

static void
show(const char *what, int fd, int events)
{
    struct pollfd p = {.fd = fd, .events = (short)events};

    T(poll(&p, 1, 0));
    NOTE("%s: %s", what, tr_pollev(p.revents));
}

#define ALL (POLLIN | POLLOUT | POLLRDHUP | POLLPRI)

int
main(void)
{
    int s, l, c, u, dead;

    tr_init();
    s = TF(socket(AF_INET, SOCK_STREAM, 0));
    show("fresh tcp", s, ALL);
    show("fresh tcp rdnorm", s, POLLRDNORM | POLLWRNORM);
    l = d_listen(D_LPORT_BASE + 40);
    show("listener", l, ALL);
    d_connect_back(D_LPORT_BASE + 40, "close");
    d_wait(l, POLLIN);
    show("listener pending", l, ALL);
    c = d_connect(D_SOURCE);
    show("connected", c, ALL);
    T(send(c, "3\n", 2, 0));
    d_wait(c, POLLRDHUP);
    show("data+fin", c, ALL);
    show("data+fin rdnorm", c, POLLRDNORM | POLLWRNORM);
    show("data+fin no events", c, 0);
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    show("udp", u, ALL);
    dead = TF(dup(u));
    T(close(dead));
    show("closed fd", dead, ALL);
    show("negative fd", -1, ALL);
    T(close(u));
    T(close(c));
    T(close(l));
    T(close(s));
    return 0;
}
