/*
 * Behaviour: a connected UDP socket whose ICMP port unreachable is pending
 * keeps the error across an AF_UNSPEC disconnect (SO_ERROR then reads
 * ECONNREFUSED once, then 0); the disconnected socket, bound only
 * implicitly, is named 0.0.0.0:0, getpeername is ENOTCONN, and it can
 * connect again to the echo service and get its answer.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in r = d_sin(D_PEER_IP, D_REFUSED);
    struct sockaddr_in e = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in u = {.sin_family = AF_UNSPEC};
    char buf[8];
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(fd, SA(&r), sizeof(r)));
    T(send(fd, "x", 1, 0));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLERR)));
    T(connect(fd, SA(&u), sizeof(u)));
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    d_name(fd, 1, "name");
    d_peer(fd, 0, "peer");
    T(connect(fd, SA(&e), sizeof(e)));
    T(send(fd, "again", 5, 0));
    T(recv(fd, buf, sizeof(buf), 0));
    T(close(fd));
    return 0;
}
