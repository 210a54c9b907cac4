/*
 * Behaviour: datagram edges over IPv6 to fd00:200::1: a 100-byte datagram
 * read into 10 bytes is cut (recv 10; recvmsg reports MSG_TRUNC; recv
 * with MSG_TRUNC returns the full 100); a zero-length datagram echoes and
 * reads as 0 with the sender's name; FIONREAD gives the next datagram's
 * size.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in6 d = d_sin6(D_PEER_IP6, D_UDP_ECHO), from;
    socklen_t fl = sizeof(from);
    char big[100], buf[10];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    int u, avail = -1;

    tr_init();
    memset(big, 'b', sizeof(big));
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    T(connect(u, SA(&d), sizeof(d)));
    T(send(u, big, sizeof(big), 0));
    d_wait(u, POLLIN);
    T(ioctl(u, FIONREAD, &avail));
    NOTE("FIONREAD %d", avail);
    T(recv(u, buf, sizeof(buf), 0));
    T(send(u, big, sizeof(big), 0));
    T(recvmsg(u, &m, 0));
    NOTE("flags %s", tr_msgflags(m.msg_flags));
    T(send(u, big, sizeof(big), 0));
    T(recv(u, buf, sizeof(buf), MSG_TRUNC));
    T(send(u, "", 0, 0));
    T(recvfrom(u, buf, sizeof(buf), 0, SA(&from), &fl));
    NOTE("zero-length from %s len %d", tr_addr(&from, 0), (int)fl);
    T(recv(u, buf, sizeof(buf), MSG_DONTWAIT));
    T(close(u));
    return 0;
}
