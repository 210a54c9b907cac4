/*
 * Behaviour: recvfrom's address arguments on a UDP socket: a NULL address
 * with a length (the length is left alone), a length of 0 (nothing
 * written, 16 reported), 8 (half the address, 16 reported), a large
 * buffer (16 reported), a negative length (EINVAL, the datagram stays
 * queued), a NULL length with an address (fine, nothing written).
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in e = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_storage a;
    socklen_t al;
    char buf[8];
    int fd, i;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_DGRAM, 0));
    for (i = 0; i < 6; i++)
        T(sendto(fd, "d", 1, 0, SA(&e), sizeof(e)));
    usleep(50000);
    al = 77;
    T(recvfrom(fd, buf, sizeof(buf), 0, NULL, &al));
    NOTE("al %d", (int)al);
    memset(&a, 0xee, sizeof(a));
    al = 0;
    T(recvfrom(fd, buf, sizeof(buf), 0, SA(&a), &al));
    NOTE("al %d first byte %02x", (int)al, ((unsigned char *)&a)[0]);
    memset(&a, 0, sizeof(a));
    al = 8;
    T(recvfrom(fd, buf, sizeof(buf), 0, SA(&a), &al));
    NOTE("al %d family %d port %d", (int)al, a.ss_family,
         ntohs(((struct sockaddr_in *)&a)->sin_port));
    al = sizeof(a);
    T(recvfrom(fd, buf, sizeof(buf), 0, SA(&a), &al));
    NOTE("al %d %s", (int)al, tr_addr(&a, 0));
    al = (socklen_t)-1;
    T(recvfrom(fd, buf, sizeof(buf), 0, SA(&a), &al));
    T(recvfrom(fd, buf, sizeof(buf), 0, SA(&a), NULL));
    T(recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL));
    T(recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL));
    T(close(fd));
    return 0;
}
