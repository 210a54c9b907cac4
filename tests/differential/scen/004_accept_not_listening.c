/*
 * Behaviour: accept() on a TCP socket that is not listening fails with
 * EINVAL (fresh, bound, and connected sockets alike); on a UDP socket it
 * fails with EOPNOTSUPP.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_SUBJ_IP, D_LPORT_BASE + 4);
    struct sockaddr_in peer;
    socklen_t pl = sizeof(peer);
    int fd, b, c, u;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(accept(fd, NULL, NULL));
    T(accept4(fd, SA(&peer), &pl, SOCK_NONBLOCK));
    T(close(fd));

    b = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    T(bind(b, SA(&a), sizeof(a)));
    T(accept(b, NULL, NULL));
    T(close(b));

    c = d_connect(D_ECHO);
    T(accept(c, NULL, NULL));
    T(close(c));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(accept(u, NULL, NULL));
    T(close(u));
    return 0;
}
