/*
 * Behaviour: FIONREAD (and SIOCINQ) is 0 on an empty connected socket,
 * the number of queued bytes once data is in, 0 again after reading; on a
 * listener it fails with EINVAL; on UDP it is the size of the first queued
 * datagram.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in d = d_sin(D_PEER_IP, D_UDP_ECHO);
    char buf[64];
    int fd, l, u, n;

    tr_init();
    fd = d_connect(D_SOURCE);
    n = -1;
    T(ioctl(fd, FIONREAD, &n));
    NOTE("FIONREAD %d", n);
    T(send(fd, "20\n", 3, 0));
    d_wait(fd, POLLRDHUP);
    n = -1;
    T(ioctl(fd, FIONREAD, &n));
    NOTE("FIONREAD %d", n);
    T(recv(fd, buf, 15, 0));
    n = -1;
    T(ioctl(fd, FIONREAD, &n));
    NOTE("FIONREAD %d", n);
    T(recv(fd, buf, sizeof(buf), 0));
    n = -1;
    T(ioctl(fd, FIONREAD, &n));
    NOTE("FIONREAD at EOF %d", n);
    T(close(fd));

    l = d_listen(D_LPORT_BASE + 35);
    T(ioctl(l, FIONREAD, &n));
    T(close(l));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    n = -1;
    T(ioctl(u, FIONREAD, &n));
    NOTE("udp FIONREAD empty %d", n);
    T(sendto(u, "first", 5, 0, SA(&d), sizeof(d)));
    d_wait(u, POLLIN);
    T(sendto(u, "second-longer", 13, 0, SA(&d), sizeof(d)));
    n = -1;
    T(ioctl(u, FIONREAD, &n));
    NOTE("udp FIONREAD %d", n);
    T(recv(u, buf, sizeof(buf), 0));
    T(close(u));
    return 0;
}
