/*
 * Behaviour: several connections completed before accept() are queued
 * (listen backlog) and accepted in arrival order: each one carries the
 * text its peer sent; after the queue drains, non-blocking accept is
 * EAGAIN.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 67;
    char buf[8], mode[16];
    int l, c, i;

    tr_init();
    l = d_listen(port);
    for (i = 0; i < 4; i++) {
        snprintf(mode, sizeof(mode), "send:conn%d", i);
        d_connect_back(port, mode);
    }
    for (i = 0; i < 4; i++) {
        c = TF(accept(l, NULL, NULL));
        T(d_read_full(c, buf, 5));
        NOTE("got %s", tr_data(buf, 5));
        T(close(c));
    }
    T(fcntl(l, F_SETFL, O_NONBLOCK));
    T(accept(l, NULL, NULL));
    T(close(l));
    return 0;
}
