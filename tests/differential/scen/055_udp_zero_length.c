/*
 * Behaviour: a zero-length UDP datagram is sent (returns 0), echoed and
 * received as a datagram of length 0 (poll shows POLLIN first), and does
 * not merge with the next datagram.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in d = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    char buf[16];
    int u, n = -1;

    tr_init();
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(sendto(u, "", 0, 0, SA(&d), sizeof(d)));
    NOTE("revents %s", tr_pollev(d_wait(u, POLLIN)));
    T(ioctl(u, FIONREAD, &n));
    NOTE("FIONREAD %d", n);
    T(recvfrom(u, buf, sizeof(buf), 0, SA(&from), &fl));
    NOTE("from %s", tr_addr(&from, 0));
    T(recv(u, buf, sizeof(buf), MSG_DONTWAIT));
    T(sendto(u, NULL, 0, 0, SA(&d), sizeof(d)));
    d_wait(u, POLLIN);
    T(sendto(u, "z", 1, 0, SA(&d), sizeof(d)));
    T(recv(u, buf, sizeof(buf), 0));
    T(recv(u, buf, sizeof(buf), 0));
    T(close(u));
    return 0;
}
