/*
 * Behaviour: a datagram queued on an unconnected UDP socket stays queued
 * when the socket then connects to another port: recv returns it ("old");
 * the connection to the closed port then gets its ICMP error (POLLERR),
 * reported by the next recv as ECONNREFUSED once, then EAGAIN.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in e = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in r = d_sin(D_PEER_IP, D_REFUSED);
    char buf[8];
    long n;
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(sendto(fd, "old", 3, 0, SA(&e), sizeof(e)));
    d_wait(fd, POLLIN);
    T(connect(fd, SA(&r), sizeof(r)));
    n = T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    NOTE("got %s", tr_data(buf, n > 0 ? (size_t)n : 0));
    T(send(fd, "x", 1, 0));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLERR)));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    T(close(fd));
    return 0;
}
