/*
 * Behaviour: sendmsg with 64 one-byte iovecs (and empty ones between)
 * sends their concatenation; recvmsg scatters the echo over 64 one-byte
 * iovecs; readv with more room than data returns what is there; writev
 * with IOV_MAX iovecs works and IOV_MAX + 1 is EINVAL; on UDP a datagram
 * gathered from 16 iovecs comes back as one datagram of their total.
 */
#include "scen.h"

#include <limits.h>

int
main(void)
{
    static struct iovec big[IOV_MAX + 1];
    struct sockaddr_in u = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct iovec iov[128];
    struct msghdr m;
    char src[64], dst[64], one = 'z';
    long r;
    int fd, us, i;

    tr_init();
    for (i = 0; i < 64; i++) {
        src[i] = (char)('A' + i % 26);
        iov[2 * i] = (struct iovec){src + i, 1};
        iov[2 * i + 1] = (struct iovec){NULL, 0};
    }
    fd = d_connect(D_ECHO);
    memset(&m, 0, sizeof(m));
    m.msg_iov = iov;
    m.msg_iovlen = 128;
    T(sendmsg(fd, &m, 0));
    for (i = 0; i < 64; i++)
        iov[i] = (struct iovec){dst + i, 1};
    m.msg_iovlen = 64;
    d_wait(fd, POLLIN);
    usleep(20000);
    r = T(recvmsg(fd, &m, MSG_WAITALL));
    NOTE("same %d flags %s", r == 64 && memcmp(src, dst, 64) == 0,
         tr_msgflags(m.msg_flags));
    for (i = 0; i <= IOV_MAX; i++)
        big[i] = (struct iovec){&one, 1};
    T(writev(fd, big, IOV_MAX + 1));
    T(writev(fd, big, IOV_MAX));
    T(d_read_full(fd, dst, 64));
    iov[0] = (struct iovec){dst, 64};
    d_wait(fd, POLLIN);
    usleep(20000);
    T(readv(fd, iov, 1) > 0);
    us = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(connect(us, SA(&u), sizeof(u)));
    for (i = 0; i < 16; i++)
        iov[i] = (struct iovec){src + i, 1};
    T(writev(us, iov, 16));
    d_wait(us, POLLIN);
    r = T(recv(us, dst, sizeof(dst), 0));
    NOTE("datagram %s", tr_data(dst, r > 0 ? (size_t)r : 0));
    T(close(us));
    T(close(fd));
    return 0;
}
