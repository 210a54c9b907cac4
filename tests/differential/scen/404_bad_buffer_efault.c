/*
 * Behaviour: a buffer pointer the process cannot access fails with
 * EFAULT on a connected TCP socket (send, write, recv, read, sendmsg and
 * recvmsg with a bad iov_base), and nothing is sent or consumed: the data
 * that was waiting is still read afterwards. UDP sendto fails the same
 * way; a UDP recvfrom into a bad buffer fails with EFAULT and drops the
 * datagram (Linux's udp_recvmsg counts it in sk_drops).
 */
#include "scen.h"

/* Read through a volatile so the compiler cannot see the bad address. */
static void *volatile bad_addr = (void *)16;
#define BAD (bad_addr)

int
main(void)
{
    char buf[16];
    struct iovec iov = {.iov_base = BAD, .iov_len = 4};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    struct sockaddr_in ua = d_sin(D_PEER_IP, D_UDP_ECHO);
    int fd, u;

    tr_init();
    fd = d_connect(D_ECHO);
    T(send(fd, BAD, 4, 0));
    T(write(fd, BAD, 4));
    T(sendmsg(fd, &m, 0));
    T(send(fd, "abcd", 4, 0));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLIN)));
    T(recv(fd, BAD, 4, 0));
    T(read(fd, BAD, 4));
    T(recvmsg(fd, &m, 0));
    T(d_read_full(fd, buf, 4));
    NOTE("data %s", tr_data(buf, 4));
    T(close(fd));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(u, SA(&ua), sizeof(ua)));
    T(sendto(u, BAD, 4, 0, NULL, 0));
    T(send(u, "wxyz", 4, 0));
    NOTE("revents %s", tr_pollev(d_wait(u, POLLIN)));
    T(recvfrom(u, BAD, 4, 0, NULL, NULL));
    T(recv(u, buf, sizeof(buf), MSG_DONTWAIT));
    T(close(u));
    return 0;
}
