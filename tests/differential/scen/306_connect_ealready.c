/*
 * Behaviour: a non-blocking connect still in progress (an address nobody
 * has: SYN_SENT for seconds): EINPROGRESS, then EALREADY on every
 * further connect (same address, another address); poll reports nothing
 * for POLLIN|POLLOUT; SO_ERROR is 0; getsockname gives the subject's
 * address with an ephemeral port, getpeername ENOTCONN; listen is EINVAL;
 * a connect to AF_UNSPEC aborts the attempt, after which the socket can
 * connect to the echo service.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_NONLOCAL_IP, D_ECHO);
    struct sockaddr_in b = d_sin(D_PEER_IP, D_ECHO);
    struct sockaddr_in u = {.sin_family = AF_UNSPEC};
    struct pollfd p;
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    T(connect(fd, SA(&a), sizeof(a)));
    T(connect(fd, SA(&a), sizeof(a)));
    T(connect(fd, SA(&b), sizeof(b)));
    p = (struct pollfd){fd, POLLIN | POLLOUT, 0};
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    d_name(fd, 1, "name");
    d_peer(fd, 0, "peer");
    T(listen(fd, 1));
    T(connect(fd, SA(&u), sizeof(u)));
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    T(connect(fd, SA(&b), sizeof(b)));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLOUT)));
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    d_peer(fd, 0, "peer");
    T(close(fd));
    return 0;
}
