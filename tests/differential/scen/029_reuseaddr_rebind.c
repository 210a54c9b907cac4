/*
 * Behaviour: after a server closes an accepted connection first (leaving
 * it in FIN_WAIT/TIME_WAIT) and its listener, a new socket cannot bind the
 * port without SO_REUSEADDR (EADDRINUSE) but can with it, and listen
 * succeeds; a second listener on the same port with SO_REUSEADDR on both
 * still fails while the first listens.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 29;
    struct sockaddr_in a = d_sin(D_SUBJ_IP, port);
    int one = 1, l, c, s, s2;

    tr_init();
    l = d_listen(port);
    d_connect_back(port, "hold");
    c = TF(accept(l, NULL, NULL));
    T(close(c));
    T(close(l));

    s = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(s, SA(&a), sizeof(a)));
    T(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    T(bind(s, SA(&a), sizeof(a)));
    T(listen(s, 4));

    s2 = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(setsockopt(s2, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    T(bind(s2, SA(&a), sizeof(a)));
    T(close(s2));

    d_connect_back(port, "send:again");
    c = TF(accept(s, NULL, NULL));
    char buf[8];
    T(d_read_full(c, buf, 5));
    NOTE("got %s", tr_data(buf, 5));
    T(close(c));
    T(close(s));
    return 0;
}
