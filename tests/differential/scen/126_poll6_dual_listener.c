/*
 * Behaviour: poll and select on a dual-stack listener on [::]:P and on an
 * AF_INET6 client socket connected to the peer's echo over IPv6: the
 * listener is not readable, then POLLIN after an IPv4 connect-back and
 * again after an IPv6 one (both accepted); the client is POLLOUT only,
 * then POLLIN|POLLOUT once its echo is back; select agrees.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 126;
    struct pollfd p[2];
    struct timeval tv = {0, 0};
    fd_set rs;
    char buf[8];
    int l, c, s, i;

    tr_init();
    l = d_listen6("::", port, -1);
    c = d_connect6(D_PEER_IP6, D_ECHO);
    p[0] = (struct pollfd){.fd = l, .events = POLLIN};
    p[1] = (struct pollfd){.fd = c, .events = POLLIN | POLLOUT};
    T(poll(p, 2, 0));
    NOTE("listener %s client %s", tr_pollev(p[0].revents),
         tr_pollev(p[1].revents));
    for (i = 0; i < 2; i++) {
        d_connect_back_to(i ? D_SUBJ_IP6 : D_SUBJ_IP, port, "hold");
        T(poll(p, 1, -1));
        NOTE("listener %s", tr_pollev(p[0].revents));
        FD_ZERO(&rs);
        FD_SET(l, &rs);
        T(select(l + 1, &rs, NULL, NULL, &tv));
        s = TF(accept(l, NULL, NULL));
        d_peer(s, 1, "accepted peer");
        T(close(s));
        T(poll(p, 1, 0));
    }
    T(send(c, "ping", 4, 0));
    d_wait(c, POLLIN);
    T(poll(p + 1, 1, 0));
    NOTE("client %s", tr_pollev(p[1].revents));
    T(read(c, buf, sizeof(buf)));
    T(close(c));
    T(close(l));
    return 0;
}
