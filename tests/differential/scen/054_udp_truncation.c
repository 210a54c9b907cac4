/*
 * Behaviour: reading a UDP datagram into a smaller buffer returns the
 * buffer's length and discards the rest; recvmsg sets MSG_TRUNC in
 * msg_flags; recv with MSG_TRUNC returns the real datagram length;
 * MSG_PEEK|MSG_TRUNC reports the length without consuming.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in d = d_sin(D_PEER_IP, D_UDP_ECHO);
    char big[100], buf[16];
    struct iovec iov = {buf, 10};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    int u;

    tr_init();
    for (int i = 0; i < 100; i++)
        big[i] = (char)('a' + i % 26);
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(u, SA(&d), sizeof(d)));
    T(send(u, big, 100, 0));
    T(recv(u, buf, 10, 0));
    NOTE("got %s", tr_data(buf, 10));
    T(send(u, big, 100, 0));
    T(recvmsg(u, &m, 0));
    NOTE("flags %s", tr_msgflags(m.msg_flags));
    T(send(u, big, 100, 0));
    T(recv(u, buf, 10, MSG_PEEK | MSG_TRUNC));
    T(recv(u, buf, 10, MSG_TRUNC));
    NOTE("got %s", tr_data(buf, 10));
    T(send(u, big, 50, 0));
    m.msg_flags = -1;
    iov.iov_len = sizeof(buf);
    T(recv(u, buf, 0, MSG_PEEK));
    T(recvmsg(u, &m, MSG_TRUNC));
    NOTE("flags %s", tr_msgflags(m.msg_flags));
    T(close(u));
    return 0;
}
