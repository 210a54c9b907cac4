/*
 * Behaviour: bind() on an already bound socket fails with EINVAL (TCP and
 * UDP), including after an implicit bind by connect(); the first address
 * stays (getsockname).
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_SUBJ_IP, D_LPORT_BASE + 8);
    struct sockaddr_in b = d_sin(D_SUBJ_IP, D_LPORT_BASE + 108);
    struct sockaddr_in got;
    socklen_t gl = sizeof(got);
    int one = 1, fd, u, c;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    T(bind(fd, SA(&a), sizeof(a)));
    T(bind(fd, SA(&a), sizeof(a)));
    T(bind(fd, SA(&b), sizeof(b)));
    T(getsockname(fd, SA(&got), &gl));
    NOTE("name %s", tr_addr(&got, 0));
    T(close(fd));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u, SA(&a), sizeof(a)));
    T(bind(u, SA(&b), sizeof(b)));
    T(close(u));

    c = d_connect(D_ECHO);
    T(bind(c, SA(&b), sizeof(b)));
    T(close(c));
    return 0;
}
