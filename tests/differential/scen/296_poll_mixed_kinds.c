/*
 * Behaviour: one poll() over a pipe, an eventfd, a timerfd, a connected
 * TCP socket, a listener and a UDP socket reports each one's own
 * readiness: at first pipe-write end, eventfd and sockets writable only
 * (listener nothing); then with the pipe written, the eventfd signalled,
 * the timer expired, echo data back, a connection pending and a datagram
 * queued, each one POLLIN too; events 0 entries report nothing.
 */
#include "scen.h"

#include <sys/eventfd.h>
#include <sys/timerfd.h>

static void
show(struct pollfd *p, int n, const char *what)
{
    static const char *names[] = {"pipe-r", "pipe-w", "eventfd", "timerfd",
                                  "tcp",    "listen", "udp",     "tcp-ev0"};

    for (int i = 0; i < n; i++)
        p[i].revents = 0;
    T(poll(p, (nfds_t)n, 0));
    for (int i = 0; i < n; i++)
        NOTE("%s %s: %s", what, names[i], tr_pollev(p[i].revents));
}

int
main(void)
{
    struct sockaddr_in u = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct itimerspec its = {{0, 0}, {0, 1000000}};
    struct pollfd p[8];
    int pfd[2], efd, tfd, tcp, l, udp, c;
    uint64_t one = 1;

    tr_init();
    T(pipe(pfd));
    efd = TF(eventfd(0, 0));
    tfd = TF(timerfd_create(CLOCK_MONOTONIC, 0));
    tcp = d_connect(D_ECHO);
    l = d_listen(D_LPORT_BASE + 296);
    udp = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(udp, SA(&u), sizeof(u)));
    p[0] = (struct pollfd){pfd[0], POLLIN, 0};
    p[1] = (struct pollfd){pfd[1], POLLOUT, 0};
    p[2] = (struct pollfd){efd, POLLIN | POLLOUT, 0};
    p[3] = (struct pollfd){tfd, POLLIN, 0};
    p[4] = (struct pollfd){tcp, POLLIN | POLLOUT, 0};
    p[5] = (struct pollfd){l, POLLIN | POLLOUT, 0};
    p[6] = (struct pollfd){udp, POLLIN | POLLOUT, 0};
    p[7] = (struct pollfd){tcp, 0, 0};
    show(p, 8, "idle");
    T(write(pfd[1], "p", 1));
    T(write(efd, &one, sizeof(one)));
    T(timerfd_settime(tfd, 0, &its, NULL));
    T(send(tcp, "t", 1, 0));
    T(send(udp, "u", 1, 0));
    d_connect_back(D_LPORT_BASE + 296, "hold");
    d_wait(tcp, POLLIN);
    d_wait(udp, POLLIN);
    d_wait(l, POLLIN);
    d_wait(tfd, POLLIN);
    show(p, 8, "ready");
    c = TF(accept(l, NULL, NULL));
    T(close(c));
    T(close(udp));
    T(close(l));
    T(close(tcp));
    T(close(tfd));
    T(close(efd));
    T(close(pfd[0]));
    T(close(pfd[1]));
    return 0;
}
