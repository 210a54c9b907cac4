/*
 * Behaviour: binding to an address that is not local fails with
 * EADDRNOTAVAIL (TCP and UDP); binding to the local address, to INADDR_ANY
 * and to port 0 succeeds, port 0 yields an ephemeral port; a wrong family
 * fails with EAFNOSUPPORT and a short address with EINVAL.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in nl = d_sin(D_NONLOCAL_IP, D_LPORT_BASE + 10);
    struct sockaddr_in lo = d_sin(D_SUBJ_IP, 0);
    struct sockaddr_in any = d_sin("0.0.0.0", D_LPORT_BASE + 10);
    struct sockaddr_in6 v6;
    struct sockaddr_in got;
    socklen_t gl = sizeof(got);
    int fd, u;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(fd, SA(&nl), sizeof(nl)));
    memset(&v6, 0, sizeof(v6));
    v6.sin6_family = AF_INET6;
    T(bind(fd, SA(&v6), sizeof(v6)));
    T(bind(fd, SA(&lo), sizeof(lo) - 4));
    T(bind(fd, SA(&lo), sizeof(lo)));
    T(getsockname(fd, SA(&got), &gl));
    NOTE("name %s len %d", tr_addr(&got, 1), (int)gl);
    T(close(fd));

    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(bind(fd, SA(&any), sizeof(any)));
    gl = sizeof(got);
    T(getsockname(fd, SA(&got), &gl));
    NOTE("name %s", tr_addr(&got, 0));
    T(close(fd));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u, SA(&nl), sizeof(nl)));
    T(bind(u, SA(&lo), sizeof(lo)));
    gl = sizeof(got);
    T(getsockname(u, SA(&got), &gl));
    NOTE("name %s", tr_addr(&got, 1));
    T(close(u));
    return 0;
}
