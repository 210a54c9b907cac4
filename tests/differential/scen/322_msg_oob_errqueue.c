/*
 * Behaviour: recv(MSG_OOB) on a TCP connection with no urgent data is EINVAL
 * (with MSG_DONTWAIT too); recv(MSG_ERRQUEUE) with an empty error queue is
 * EAGAIN on TCP and UDP; SIOCATMARK is 0; on a UDP socket send with MSG_OOB
 * is EOPNOTSUPP and recv with MSG_OOB|MSG_DONTWAIT EAGAIN.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in u = d_sin(D_PEER_IP, D_UDP_ECHO);
    char buf[16];
    int fd, us, v = -1;

    tr_init();
    fd = d_connect(D_ECHO);
    T(recv(fd, buf, sizeof(buf), MSG_OOB));
    T(recv(fd, buf, sizeof(buf), MSG_OOB | MSG_DONTWAIT));
    T(recv(fd, buf, sizeof(buf), MSG_ERRQUEUE));
    T(ioctl(fd, SIOCATMARK, &v));
    NOTE("SIOCATMARK = %d", v);
    us = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(us, SA(&u), sizeof(u)));
    T(recv(us, buf, sizeof(buf), MSG_ERRQUEUE));
    T(send(us, "x", 1, MSG_OOB));
    T(recv(us, buf, sizeof(buf), MSG_OOB | MSG_DONTWAIT));
    T(close(us));
    T(close(fd));
    return 0;
}
