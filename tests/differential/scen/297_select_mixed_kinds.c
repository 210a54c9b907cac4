/*
 * Behaviour: select() over a pipe, an eventfd, a TCP connection, a
 * listener and a UDP socket: the read set keeps exactly the ready ones
 * (pipe with data, eventfd signalled, echo back, connection pending,
 * datagram queued), the write set every writable one (not the listener
 * nor the pipe's read end), the except set nothing (no urgent data); the
 * count is the sum over the three sets; pselect agrees.
 */
#include "scen.h"

#include <sys/eventfd.h>

static int fds[6];
static const char *names[] = {"pipe-r", "pipe-w", "eventfd",
                              "tcp",    "listen", "udp"};

static void
sel(const char *what, int use_pselect)
{
    fd_set r, w, e;
    struct timeval tv = {0, 0};
    struct timespec ts = {0, 0};
    int mx = 0, i;

    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_ZERO(&e);
    for (i = 0; i < 6; i++) {
        FD_SET(fds[i], &r);
        FD_SET(fds[i], &w);
        FD_SET(fds[i], &e);
        if (fds[i] > mx)
            mx = fds[i];
    }
    if (use_pselect)
        T(pselect(mx + 1, &r, &w, &e, &ts, NULL));
    else
        T(select(mx + 1, &r, &w, &e, &tv));
    for (i = 0; i < 6; i++)
        NOTE("%s %s: r%d w%d e%d", what, names[i], FD_ISSET(fds[i], &r) ? 1 : 0,
             FD_ISSET(fds[i], &w) ? 1 : 0, FD_ISSET(fds[i], &e) ? 1 : 0);
}

int
main(void)
{
    struct sockaddr_in u = d_sin(D_PEER_IP, D_UDP_ECHO);
    int pfd[2], c;
    uint64_t one = 1;

    tr_init();
    T(pipe(pfd));
    fds[0] = pfd[0];
    fds[1] = pfd[1];
    fds[2] = TF(eventfd(0, 0));
    fds[3] = d_connect(D_ECHO);
    fds[4] = d_listen(D_LPORT_BASE + 297);
    fds[5] = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(fds[5], SA(&u), sizeof(u)));
    sel("idle", 0);
    T(write(pfd[1], "p", 1));
    T(write(fds[2], &one, sizeof(one)));
    T(send(fds[3], "t", 1, 0));
    T(send(fds[5], "u", 1, 0));
    d_connect_back(D_LPORT_BASE + 297, "hold");
    d_wait(fds[3], POLLIN);
    d_wait(fds[5], POLLIN);
    d_wait(fds[4], POLLIN);
    sel("ready", 0);
    sel("ready (pselect)", 1);
    c = TF(accept(fds[4], NULL, NULL));
    T(close(c));
    for (int i = 0; i < 6; i++)
        T(close(fds[i]));
    return 0;
}
