/*
 * Behaviour: accept/accept4 on an empty non-blocking listener fail with
 * EAGAIN; poll on it reports nothing; after a peer connects, poll reports
 * POLLIN, accept returns the connection (with the peer's address) and then
 * EAGAIN again. The accepted socket is blocking (no O_NONBLOCK inherited).
 */
#include "scen.h"

int
main(void)
{
    struct pollfd p;
    struct sockaddr_in peer;
    socklen_t pl = sizeof(peer);
    char buf[8];
    int l, c;

    tr_init();
    l = d_listen(D_LPORT_BASE + 12);
    T(fcntl(l, F_SETFL, O_NONBLOCK));
    T(accept(l, NULL, NULL));
    T(accept4(l, NULL, NULL, SOCK_CLOEXEC));
    p = (struct pollfd){.fd = l, .events = POLLIN | POLLOUT};
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    d_connect_back(D_LPORT_BASE + 12, "send:hello");
    NOTE("revents %s", tr_pollev(d_wait(l, POLLIN)));
    c = TF(accept(l, SA(&peer), &pl));
    NOTE("peer %s len %d", tr_addr(&peer, 1), (int)pl);
    T(fcntl(c, F_GETFL) & O_NONBLOCK);
    T(accept(l, NULL, NULL));
    T(d_read_full(c, buf, 5));
    NOTE("got %s", tr_data(buf, 5));
    T(close(c));
    T(close(l));
    return 0;
}
