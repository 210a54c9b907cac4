/*
 * Behaviour: level-triggered epoll with more ready sockets than
 * maxevents: each wait returns maxevents of them and the next wait
 * continues with the others (ready sockets are rotated, none starves):
 * over three waits of 2 with three ready sockets every one is reported,
 * and a wait of 8 reports all three once.
 */
#include "scen.h"

int
main(void)
{
    struct epoll_event ev, out[8];
    int ep, fd[3], i, n, w, seen[3] = {0, 0, 0};

    tr_init();
    ep = TF(epoll_create1(0));
    for (i = 0; i < 3; i++) {
        fd[i] = d_connect(D_ECHO);
        ev = (struct epoll_event){.events = EPOLLIN, .data.u32 = (uint32_t)i};
        T(epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev));
        T(send(fd[i], "x", 1, 0));
        d_wait(fd[i], POLLIN);
    }
    for (w = 0; w < 3; w++) {
        n = (int)T(epoll_wait(ep, out, 2, 0));
        for (i = 0; i < n; i++)
            seen[out[i].data.u32]++;
    }
    NOTE("each seen at least once: %s",
         seen[0] && seen[1] && seen[2] ? "yes" : "no");
    n = (int)T(epoll_wait(ep, out, 8, 0));
    memset(seen, 0, sizeof(seen));
    for (i = 0; i < n; i++)
        seen[out[i].data.u32]++;
    NOTE("seen %d %d %d", seen[0], seen[1], seen[2]);
    for (i = 0; i < 3; i++)
        T(close(fd[i]));
    T(close(ep));
    return 0;
}
