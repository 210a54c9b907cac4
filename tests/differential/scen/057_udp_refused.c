/*
 * Behaviour: a connected UDP socket sending to a port with no listener gets
 * the ICMP port unreachable as an asynchronous error: poll reports
 * POLLERR, the next recv fails with ECONNREFUSED (SO_ERROR reads it
 * otherwise), and then the socket works normally again. The waits are
 * bounded (2 s) so a missing error shows as a difference, not a hang.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in d = d_sin(D_PEER_IP, D_REFUSED);
    char buf[8];
    struct pollfd p;
    int u, err = -1;
    socklen_t el = sizeof(err);

    tr_init();
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(u, SA(&d), sizeof(d)));
    T(send(u, "ping", 4, 0));
    p = (struct pollfd){.fd = u, .events = POLLIN};
    T(poll(&p, 1, 2000));
    NOTE("revents %s", tr_pollev(p.revents));
    T(recv(u, buf, sizeof(buf), MSG_DONTWAIT));
    T(recv(u, buf, sizeof(buf), MSG_DONTWAIT));
    T(send(u, "ping", 4, 0));
    T(poll(&p, 1, 2000));
    T(getsockopt(u, SOL_SOCKET, SO_ERROR, &err, &el));
    NOTE("SO_ERROR %s", err ? tr_errname(err) : "0");
    T(recv(u, buf, sizeof(buf), MSG_DONTWAIT));
    T(close(u));
    return 0;
}
