/*
 * Behaviour: a connected UDP socket sends with send/write, receives with
 * recv/read, reports the peer with getpeername; sendto with the connected
 * address works, sendto another address on a connected socket is allowed
 * on Linux; connect to AF_UNSPEC dissolves the association (getpeername
 * ENOTCONN, send EDESTADDRREQ); a UDP socket may connect again.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in d = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr un = {.sa_family = AF_UNSPEC};
    struct sockaddr_in got;
    socklen_t gl = sizeof(got);
    char buf[64];
    int u;

    tr_init();
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(u, SA(&d), sizeof(d)));
    T(getpeername(u, SA(&got), &gl));
    NOTE("peer %s", tr_addr(&got, 0));
    T(send(u, "s1", 2, 0));
    T(recv(u, buf, sizeof(buf), 0));
    NOTE("got %s", tr_data(buf, 2));
    T(write(u, "w2", 2));
    T(read(u, buf, sizeof(buf)));
    NOTE("got %s", tr_data(buf, 2));
    T(sendto(u, "t3", 2, 0, SA(&d), sizeof(d)));
    T(recv(u, buf, sizeof(buf), 0));
    T(connect(u, &un, sizeof(un)));
    gl = sizeof(got);
    T(getpeername(u, SA(&got), &gl));
    T(send(u, "x", 1, 0));
    T(connect(u, SA(&d), sizeof(d)));
    T(send(u, "again", 5, 0));
    T(recv(u, buf, sizeof(buf), 0));
    NOTE("got %s", tr_data(buf, 5));
    T(close(u));
    return 0;
}
