/*
 * Behaviour: listen() takes any backlog: 0 still queues one connection,
 * a negative backlog and INT_MAX are accepted (clamped to somaxconn); a
 * second listen() changes the backlog of a listening socket; three
 * connections queued under backlog 3 are all accepted, in order.
 */
#include "scen.h"

#include <limits.h>

int
main(void)
{
    struct sockaddr_in a = d_sin(D_SUBJ_IP, D_LPORT_BASE + 310);
    char buf[8];
    int l, c, one = 1;

    tr_init();
    l = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    T(bind(l, SA(&a), sizeof(a)));
    T(listen(l, 0));
    d_connect_back(D_LPORT_BASE + 310, "send:0");
    c = TF(accept(l, NULL, NULL));
    T(d_read_full(c, buf, 1));
    T(close(c));
    T(listen(l, -1));
    T(listen(l, INT_MAX));
    T(listen(l, 3));
    d_connect_back(D_LPORT_BASE + 310, "send:1");
    d_connect_back(D_LPORT_BASE + 310, "send:2");
    d_connect_back(D_LPORT_BASE + 310, "send:3");
    for (int i = 0; i < 3; i++) {
        c = TF(accept(l, NULL, NULL));
        T(d_read_full(c, buf, 1));
        NOTE("got %s", tr_data(buf, 1));
        T(close(c));
    }
    T(close(l));
    return 0;
}
