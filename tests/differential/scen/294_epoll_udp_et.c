/*
 * Behaviour: a UDP socket registered edge-triggered: two datagrams
 * arriving before the wait are reported as one EPOLLIN; reading one (one
 * left) reports nothing new; a third arrival reports again; reading all
 * to EAGAIN then a fourth reports again.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
    char buf[16];
    int ep, fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0));
    T(connect(fd, SA(&a), sizeof(a)));
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    T(send(fd, "1", 1, 0));
    T(send(fd, "2", 1, 0));
    usleep(50000);
    d_ep_one(ep, "two");
    d_ep_one(ep, "again");
    T(recv(fd, buf, sizeof(buf), 0));
    d_ep_one(ep, "one read");
    T(send(fd, "3", 1, 0));
    usleep(50000);
    d_ep_one(ep, "third");
    T(recv(fd, buf, sizeof(buf), 0));
    T(recv(fd, buf, sizeof(buf), 0));
    T(recv(fd, buf, sizeof(buf), 0));
    d_ep_one(ep, "drained");
    T(send(fd, "4", 1, 0));
    usleep(50000);
    d_ep_one(ep, "fourth");
    T(close(ep));
    T(close(fd));
    return 0;
}
