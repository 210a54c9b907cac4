/*
 * Behaviour: accept4 with SOCK_NONBLOCK|SOCK_CLOEXEC gives a socket with
 * O_NONBLOCK and FD_CLOEXEC; plain accept on a non-blocking listener gives
 * a blocking socket without FD_CLOEXEC; accept4 with an unknown flag fails
 * with EINVAL; the address length is filled.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 64;
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    char buf[8];
    int l, c1, c2;

    tr_init();
    l = d_listen(port);
    T(accept4(l, NULL, NULL, 0x40000000));
    d_connect_back(port, "send:one");
    c1 = TF(accept4(l, SA(&a), &al, SOCK_NONBLOCK | SOCK_CLOEXEC));
    NOTE("peer %s len %d", tr_addr(&a, 1), (int)al);
    T(fcntl(c1, F_GETFL) & O_NONBLOCK);
    T(fcntl(c1, F_GETFD));
    d_wait(c1, POLLIN);
    T(recv(c1, buf, 3, MSG_WAITALL));
    T(recv(c1, buf, 3, 0));
    T(fcntl(l, F_SETFL, O_NONBLOCK));
    d_connect_back(port, "send:two");
    d_wait(l, POLLIN);
    c2 = TF(accept(l, NULL, NULL));
    T(fcntl(c2, F_GETFL) & O_NONBLOCK);
    T(fcntl(c2, F_GETFD));
    T(recv(c2, buf, 3, MSG_WAITALL));
    T(close(c1));
    T(close(c2));
    T(close(l));
    return 0;
}
