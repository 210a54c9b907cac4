/*
 * Behaviour: shutdown(SHUT_RD) on a listener with a connection queued
 * stops it listening (returns 0, SO_ACCEPTCONN 0, accept EINVAL, poll
 * POLLOUT|POLLHUP as a closed socket); shutdown(SHUT_WR) on a listener is
 * a no-op that returns 0 (it keeps listening and accepting).
 */
#include "scen.h"

int
main(void)
{
    struct pollfd p;
    int l, c;

    tr_init();
    l = d_listen(D_LPORT_BASE + 311);
    d_connect_back(D_LPORT_BASE + 311, "hold");
    d_wait(l, POLLIN);
    T(shutdown(l, SHUT_WR));
    d_geti(l, SOL_SOCKET, SO_ACCEPTCONN, "SO_ACCEPTCONN");
    c = TF(accept(l, NULL, NULL));
    T(close(c));
    d_connect_back(D_LPORT_BASE + 311, "hold");
    d_wait(l, POLLIN);
    T(shutdown(l, SHUT_RD));
    d_geti(l, SOL_SOCKET, SO_ACCEPTCONN, "SO_ACCEPTCONN");
    T(accept4(l, NULL, NULL, SOCK_NONBLOCK));
    p = (struct pollfd){l, POLLIN | POLLOUT, 0};
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    T(close(l));
    return 0;
}
