/*
 * Behaviour: connect() with AF_UNSPEC disconnects whatever the TCP state:
 * on a listener it stops listening (0; accept is then EINVAL and the
 * socket can listen again), on an established connection it aborts it (0;
 * recv then returns 0, getpeername ENOTCONN) and the socket connects
 * again to the echo service, which answers.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in u = {.sin_family = AF_UNSPEC};
    struct sockaddr_in b = d_sin(D_PEER_IP, D_ECHO);
    char buf[8];
    int l, fd;

    tr_init();
    l = d_listen(D_LPORT_BASE + 309);
    T(connect(l, SA(&u), sizeof(u)));
    d_geti(l, SOL_SOCKET, SO_ACCEPTCONN, "SO_ACCEPTCONN");
    T(accept4(l, NULL, NULL, SOCK_NONBLOCK));
    T(listen(l, 4));
    d_geti(l, SOL_SOCKET, SO_ACCEPTCONN, "SO_ACCEPTCONN");
    T(close(l));
    fd = d_connect(D_ECHO);
    T(connect(fd, SA(&u), sizeof(u)));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    d_peer(fd, 0, "peer");
    T(connect(fd, SA(&b), sizeof(b)));
    T(send(fd, "again", 5, 0));
    T(d_read_full(fd, buf, 5));
    T(close(fd));
    return 0;
}
