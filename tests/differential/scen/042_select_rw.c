/*
 * Behaviour: select reports a connected socket writable and not readable,
 * readable once data arrives, a listener readable with a pending
 * connection, a socket with a pending error (RST) readable and writable;
 * a zero timeout returns 0 with empty sets; pselect agrees.
 */
#include "scen.h"

static void
sel(const char *what, int fd)
{
    fd_set r, w, e;
    struct timeval tv = {0, 0};
    struct timespec ts = {0, 0};

    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_ZERO(&e);
    FD_SET(fd, &r);
    FD_SET(fd, &w);
    FD_SET(fd, &e);
    T(select(fd + 1, &r, &w, &e, &tv));
    NOTE("%s: r%d w%d e%d", what, FD_ISSET(fd, &r), FD_ISSET(fd, &w),
         FD_ISSET(fd, &e));
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_ZERO(&e);
    FD_SET(fd, &r);
    FD_SET(fd, &w);
    FD_SET(fd, &e);
    T(pselect(fd + 1, &r, &w, &e, &ts, NULL));
    NOTE("%s (pselect): r%d w%d e%d", what, FD_ISSET(fd, &r), FD_ISSET(fd, &w),
         FD_ISSET(fd, &e));
}

int
main(void)
{
    fd_set r;
    struct timeval tv = {0, 0};
    int c, l, x;

    tr_init();
    c = d_connect(D_ECHO);
    sel("connected", c);
    T(send(c, "s", 1, 0));
    FD_ZERO(&r);
    FD_SET(c, &r);
    T(select(c + 1, &r, NULL, NULL, NULL));
    sel("data", c);
    T(close(c));

    l = d_listen(D_LPORT_BASE + 42);
    sel("listener", l);
    d_connect_back(D_LPORT_BASE + 42, "hold");
    FD_ZERO(&r);
    FD_SET(l, &r);
    T(select(l + 1, &r, NULL, NULL, NULL));
    sel("listener pending", l);

    x = d_connect_rst();
    d_wait(x, 0);
    sel("rst", x);
    T(close(x));
    FD_ZERO(&r);
    T(select(0, &r, NULL, NULL, &tv));
    T(close(l));
    return 0;
}
