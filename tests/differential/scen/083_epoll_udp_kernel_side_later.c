/*
 * Behaviour: a UDP socket already in an epoll set that starts talking to a
 * loopback address later (its datagrams then also arrive through the
 * kernel) wakes epoll_wait for a datagram from loopback as for one from
 * the network: first an echo from the peer, then a reply from a loopback
 * socket, each reported EPOLLIN by a blocking epoll_wait and then read.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in peer = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in lo = d_sin("127.0.0.1", D_LPORT_BASE + 83);
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    struct epoll_event ev = {.events = EPOLLIN}, out[2];
    char buf[16];
    int u, r, ep;

    tr_init();
    r = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(r, SA(&lo), sizeof(lo)));
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    ep = TF(epoll_create1(0));
    T(sendto(u, "net", 3, 0, SA(&peer), sizeof(peer)));
    ev.data.u32 = 7;
    T(epoll_ctl(ep, EPOLL_CTL_ADD, u, &ev));
    T(epoll_wait(ep, out, 2, 5000));
    NOTE("tag %u events %#x", out[0].data.u32, out[0].events);
    T(recv(u, buf, sizeof(buf), 0));
    NOTE("got %s", tr_data(buf, 3));
    T(epoll_wait(ep, out, 2, 0));

    T(sendto(u, "lo", 2, 0, SA(&lo), sizeof(lo)));
    T(recvfrom(r, buf, sizeof(buf), 0, SA(&from), &fl));
    T(sendto(r, "back", 4, 0, SA(&from), fl));
    T(epoll_wait(ep, out, 2, 5000));
    NOTE("tag %u events %#x", out[0].data.u32, out[0].events);
    T(recv(u, buf, sizeof(buf), 0));
    NOTE("got %s", tr_data(buf, 4));
    T(epoll_wait(ep, out, 2, 0));
    T(close(ep));
    T(close(u));
    T(close(r));
    return 0;
}
