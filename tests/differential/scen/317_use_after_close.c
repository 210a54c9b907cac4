/*
 * Behaviour: every call on the number of a closed accelerated socket
 * (connected, listening, UDP) fails with EBADF, a second close included;
 * poll reports POLLNVAL for it.
 */
#include "scen.h"

static void
dead(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char buf[4];
    int v;
    socklen_t vl = sizeof(v);

    T(close(fd));
    T(close(fd));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    T(getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &vl));
    T(shutdown(fd, SHUT_RDWR));
    T(listen(fd, 1));
    T(accept(fd, NULL, NULL));
    T(fcntl(fd, F_GETFL));
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
}

int
main(void)
{
    struct sockaddr_in a = d_sin(D_SUBJ_IP, 0);
    int u;

    tr_init();
    dead(d_connect(D_ECHO));
    dead(d_listen(D_LPORT_BASE + 317));
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u, SA(&a), sizeof(a)));
    dead(u);
    return 0;
}
