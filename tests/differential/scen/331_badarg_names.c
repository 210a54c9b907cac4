/*
 * Behaviour: getsockname/getpeername/bind argument errors on accelerated
 * sockets (connected TCP, bound UDP): a negative length EINVAL, a NULL
 * length or address EFAULT, a zero length copies nothing and reports 16
 * (getpeername of the unconnected UDP socket ENOTCONN first); a second bind
 * EINVAL, before a short length (EINVAL), an AF_INET6 address (EAFNOSUPPORT)
 * or a NULL address (EFAULT) are looked at.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a, b = d_sin(D_SUBJ_IP, 0);
    struct sockaddr_in6 s6 = d_sin6(D_SUBJ_IP6, 0);
    socklen_t al;
    int fd, u;

    tr_init();
    fd = d_connect(D_ECHO);
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u, SA(&b), sizeof(b)));
    for (int i = 0; i < 2; i++) {
        int s = i ? u : fd;
        al = (socklen_t)-1;
        T(getsockname(s, SA(&a), &al));
        T(getsockname(s, SA(&a), NULL));
        al = sizeof(a);
        T(getsockname(s, NULL, &al));
        al = 0;
        T(getsockname(s, SA(&a), &al));
        NOTE("al %d", (int)al);
        al = (socklen_t)-1;
        T(getpeername(s, SA(&a), &al));
        al = 0;
        T(getpeername(s, SA(&a), &al));
        NOTE("al %d", (int)al);
        T(bind(s, SA(&b), sizeof(b)));
        T(bind(s, SA(&b), 8));
        T(bind(s, SA(&s6), sizeof(s6)));
        T(bind(s, NULL, sizeof(b)));
    }
    T(close(u));
    T(close(fd));
    return 0;
}
