/*
 * Behaviour: sockets closed (or deleted from the set) while their
 * readiness waits to be reported leave the set: the next epoll_wait
 * reports exactly the others, once each. Twelve echo connections become
 * readable in order; the first, a middle and the last are closed, another
 * is deleted, before any wait; then two waits of up to 64 events, with a
 * read of every reported socket in between (level-triggered).
 */
#include "scen.h"

#define NS 12

static void
report(int ep, const int *fd)
{
    struct epoll_event ev[64];
    unsigned seen[NS] = {0};
    char line[NS * 4 + 1] = "", buf[8];
    int n = (int)T(epoll_wait(ep, ev, 64, 0));

    for (int i = 0; i < n; i++)
        seen[ev[i].data.u32]++;
    /* Report by tag, so the order epoll returns them in does not show. */
    for (int i = 0; i < NS; i++)
        if (seen[i] > 0)
            snprintf(line + strlen(line), sizeof(line) - strlen(line), " %d%s",
                     i, seen[i] > 1 ? "(twice)" : "");
    NOTE("ready:%s", line);
    for (int i = 0; i < NS; i++)
        if (seen[i] > 0 && recv(fd[i], buf, sizeof(buf), 0) != 1)
            NOTE("socket %d: no byte to read", i);
}

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN};
    int ep, fd[NS];

    tr_init();
    ep = TF(epoll_create1(0));
    for (int i = 0; i < NS; i++) {
        fd[i] = d_connect(D_ECHO);
        ev.data.u32 = (uint32_t)i;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev) != 0)
            NOTE("add %d: %s", i, tr_errname(errno));
    }
    for (int i = 0; i < NS; i++) {
        if (send(fd[i], "e", 1, 0) != 1)
            NOTE("send %d: %s", i, tr_errname(errno));
        d_wait(fd[i], POLLIN);
    }
    T(close(fd[0]));
    T(close(fd[5]));
    T(close(fd[NS - 1]));
    T(epoll_ctl(ep, EPOLL_CTL_DEL, fd[3], NULL));
    report(ep, fd);
    report(ep, fd);
    for (int i = 0; i < NS; i++)
        if (i != 0 && i != 5 && i != NS - 1)
            close(fd[i]);
    T(close(ep));
    return 0;
}
