/*
 * Behaviour: a dual-stack listener on [::]:P in an epoll set: an IPv4
 * client (to 10.200.0.2) then an IPv6 client (to fd00:200::2) each make
 * it EPOLLIN; accept names them [::ffff:10.200.0.1]:eph and
 * [fd00:200::1]:eph; the accepted sockets join the set and report EPOLLIN
 * with the peers' data; with nothing queued, epoll_wait times out (0).
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 125;
    struct epoll_event ev = {.events = EPOLLIN}, out[4];
    struct sockaddr_in6 from;
    socklen_t fl;
    char buf[8];
    const char *ips[2] = {D_SUBJ_IP, D_SUBJ_IP6};
    int l, ep, s[2], i, n;

    tr_init();
    l = d_listen6("::", port, -1);
    ep = TF(epoll_create1(0));
    ev.data.fd = l;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev));
    T(epoll_wait(ep, out, 4, 0));
    for (i = 0; i < 2; i++) {
        d_connect_back_to(ips[i], port, i ? "send:v6" : "send:v4");
        n = T(epoll_wait(ep, out, 4, -1));
        NOTE("events %s on listener %d", tr_epollev(out[0].events),
             n == 1 && out[0].data.fd == l);
        fl = sizeof(from);
        s[i] = TF(accept4(l, SA(&from), &fl, SOCK_NONBLOCK));
        NOTE("accepted from %s len %d", tr_addr(&from, 1), (int)fl);
        T(epoll_wait(ep, out, 4, 0));
    }
    for (i = 0; i < 2; i++) {
        ev.data.fd = s[i];
        T(epoll_ctl(ep, EPOLL_CTL_ADD, s[i], &ev));
    }
    for (i = 0; i < 2; i++)
        d_wait(s[i], POLLIN);
    n = T(epoll_wait(ep, out, 4, -1));
    for (i = 0; i < 2; i++) {
        T(read(s[i], buf, sizeof(buf)));
        T(close(s[i]));
    }
    T(epoll_wait(ep, out, 4, 0));
    T(close(ep));
    T(close(l));
    return 0;
}
