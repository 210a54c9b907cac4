/*
 * Behaviour: the _FORTIFY_SOURCE entry points (__read_chk, __recv_chk,
 * __recvfrom_chk, __poll_chk, __ppoll_chk) behave like the plain calls on
 * accelerated sockets: data, EAGAIN, revents. Built with -O2
 * -D_FORTIFY_SOURCE=2 and non-constant lengths so the compiler emits the
 * _chk variants (CMakeLists.txt; checked with nm there).
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in d = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    struct pollfd p[1];
    struct timespec ts = {0, 0};
    char buf[32];
    volatile size_t len = sizeof(buf);
    volatile nfds_t one = 1;
    int fd, u;

    tr_init();
    fd = d_connect(D_ECHO);
    T(fcntl(fd, F_SETFL, O_NONBLOCK));
    T(read(fd, buf, len));
    T(recv(fd, buf, len, 0));
    p[0] = (struct pollfd){.fd = fd, .events = POLLIN};
    T(poll(p, one, 0));
    T(send(fd, "chk", 3, 0));
    d_wait(fd, POLLIN);
    T(poll(p, one, 0));
    NOTE("revents %s", tr_pollev(p[0].revents));
    T(ppoll(p, one, &ts, NULL));
    T(recv(fd, buf, len, MSG_PEEK));
    T(read(fd, buf, len));
    NOTE("got %s", tr_data(buf, 3));
    T(close(fd));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(sendto(u, "dg", 2, 0, SA(&d), sizeof(d)));
    T(recvfrom(u, buf, len, 0, SA(&from), &fl));
    NOTE("from %s data %s", tr_addr(&from, 0), tr_data(buf, 2));
    T(close(u));
    return 0;
}
