/*
 * Behaviour: listen() on a connected TCP socket fails with EINVAL and the
 * connection keeps working; listen() on a UDP socket fails with EOPNOTSUPP;
 * listen() twice on a listener succeeds (backlog update).
 */
#include "scen.h"

int
main(void)
{
    char buf[8];
    int fd, u, l;

    tr_init();
    fd = d_connect(D_ECHO);
    T(listen(fd, 5));
    T(send(fd, "ping", 4, 0));
    T(d_read_full(fd, buf, 4));
    NOTE("echo %s", tr_data(buf, 4));
    T(close(fd));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(listen(u, 5));
    T(close(u));

    l = d_listen(D_LPORT_BASE + 3);
    T(listen(l, 100));
    T(listen(l, 0));
    T(close(l));
    return 0;
}
