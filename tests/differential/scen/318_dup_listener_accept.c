/*
 * Behaviour: a dup of a listener accepts from the same queue: a pending
 * connection is reported readable on both numbers and accepted through
 * the dup; after the original is closed the dup still listens and
 * accepts the next one; SO_ACCEPTCONN reads 1 through the dup.
 */
#include "scen.h"

int
main(void)
{
    struct pollfd p[2];
    char buf[4];
    int l, d, c;

    tr_init();
    l = d_listen(D_LPORT_BASE + 318);
    d = TF(dup(l));
    d_geti(d, SOL_SOCKET, SO_ACCEPTCONN, "SO_ACCEPTCONN");
    d_connect_back(D_LPORT_BASE + 318, "send:a");
    d_wait(l, POLLIN);
    p[0] = (struct pollfd){l, POLLIN, 0};
    p[1] = (struct pollfd){d, POLLIN, 0};
    T(poll(p, 2, 0));
    NOTE("revents %s %s", tr_pollev(p[0].revents), tr_pollev(p[1].revents));
    c = TF(accept(d, NULL, NULL));
    T(d_read_full(c, buf, 1));
    T(close(c));
    T(close(l));
    d_connect_back(D_LPORT_BASE + 318, "send:b");
    c = TF(accept(d, NULL, NULL));
    T(d_read_full(c, buf, 1));
    NOTE("got %s", tr_data(buf, 1));
    T(close(c));
    T(close(d));
    return 0;
}
