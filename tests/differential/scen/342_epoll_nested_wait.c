/*
 * Behaviour: an inner epoll set (a connected TCP socket and a pipe) inside
 * an outer one: a blocking epoll_wait on the outer returns when the
 * socket's data arrives; with both the socket and the pipe ready the outer
 * reports the inner once (one event per registration); select() on the
 * inner fd sees it readable and, once both are drained, not; closing the
 * inner fd removes it from the outer set.
 */
#include "scen.h"

static void
sel(int fd, const char *what)
{
    fd_set r;
    struct timeval tv = {0, 0};
    int n;

    FD_ZERO(&r);
    FD_SET(fd, &r);
    n = T(select(fd + 1, &r, NULL, NULL, &tv));
    NOTE("%s: select %d isset %d", what, n, n > 0 && FD_ISSET(fd, &r));
}

int
main(void)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 1}, got[4];
    char buf[16];
    int in, out, fd, p[2], n;

    tr_init();
    fd = d_connect(D_ECHO);
    TF(pipe(p));
    in = TF(epoll_create1(0));
    out = TF(epoll_create1(0));
    T(epoll_ctl(in, EPOLL_CTL_ADD, fd, &ev));
    ev.data.u32 = 3;
    T(epoll_ctl(in, EPOLL_CTL_ADD, p[0], &ev));
    ev.data.u32 = 2;
    T(epoll_ctl(out, EPOLL_CTL_ADD, in, &ev));
    sel(in, "idle");
    T(send(fd, "x", 1, 0));
    n = T(epoll_wait(out, got, 4, 3000)); /* blocks until the echo */
    if (n > 0)
        NOTE("woken: tag %u %s", got[0].data.u32, tr_epollev(got[0].events));
    sel(in, "data");
    T(write(p[1], "y", 1));
    usleep(20000);
    n = T(epoll_wait(out, got, 4, 0)); /* socket and pipe: one event */
    if (n > 0)
        NOTE("both: tag %u %s", got[0].data.u32, tr_epollev(got[0].events));
    T(recv(fd, buf, sizeof(buf), 0));
    sel(in, "pipe only");
    T(read(p[0], buf, sizeof(buf)));
    sel(in, "drained");
    T(epoll_wait(out, got, 4, 0));
    T(send(fd, "z", 1, 0));
    d_wait(fd, POLLIN);
    T(close(in));
    T(epoll_wait(out, got, 4, 0)); /* the inner left with its close */
    T(close(out));
    T(close(p[0]));
    T(close(p[1]));
    T(close(fd));
    return 0;
}
