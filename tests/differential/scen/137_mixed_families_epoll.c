/*
 * Behaviour: one epoll set holding an AF_INET TCP socket, an AF_INET6 one
 * connected to a mapped address and an AF_INET6 one connected over IPv6,
 * all to the peer's echo: each reports EPOLLOUT only at first, then
 * EPOLLIN|EPOLLOUT once its own echo is back (sent one at a time, so the
 * readiness of each is seen alone), and the data is each its own.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev, out[4];
    const char *names[3] = {"v4", "mapped", "native"};
    char buf[16];
    int fd[3], ep, i, j, n;

    tr_init();
    fd[0] = d_connect(D_ECHO);
    fd[1] = d_connect6(D_PEER_MAPPED, D_ECHO);
    fd[2] = d_connect6(D_PEER_IP6, D_ECHO);
    ep = TF(epoll_create1(0));
    for (i = 0; i < 3; i++) {
        ev.events = EPOLLIN | EPOLLOUT;
        ev.data.u32 = (uint32_t)i;
        T(epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev));
    }
    n = T(epoll_wait(ep, out, 4, 0));
    for (j = 0; j < n; j++)
        NOTE("fd %s %s", names[out[j].data.u32], tr_epollev(out[j].events));
    for (i = 0; i < 3; i++) {
        T(send(fd[i], names[i], strlen(names[i]), 0));
        d_wait(fd[i], POLLIN);
        n = T(epoll_wait(ep, out, 4, 0));
        for (j = 0; j < n; j++)
            if (out[j].events & EPOLLIN)
                NOTE("readable %s %s", names[out[j].data.u32],
                     tr_epollev(out[j].events));
        T(read(fd[i], buf, sizeof(buf)));
        NOTE("%s got %s", names[i], tr_data(buf, strlen(names[i])));
    }
    for (i = 0; i < 3; i++)
        T(close(fd[i]));
    T(close(ep));
    return 0;
}
