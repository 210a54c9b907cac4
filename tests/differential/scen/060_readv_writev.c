/*
 * Behaviour: writev gathers several iovecs (including an empty one) into
 * one stream, readv scatters the echo over several buffers in order;
 * iovcnt 0 returns 0, a negative iovcnt or more than IOV_MAX fails with
 * EINVAL.
 */
#include "scen.h"

int
main(void)
{
    char a[3], b[4], c[32];
    struct iovec w[4] = {{"abc", 3}, {"", 0}, {"defg", 4}, {"hijklmnop", 9}};
    struct iovec r[3] = {{a, 3}, {b, 4}, {c, sizeof(c)}};
    /* volatile: keep the compiler from rejecting the bad counts. */
    volatile int neg = -1, huge = 2000;
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    T(writev(fd, w, 0));
    T(writev(fd, w, neg));
    T(writev(fd, w, huge));
    T(writev(fd, w, 4));
    d_wait(fd, POLLIN);
    /* The echo may come in pieces: peek until all 16 bytes are there. */
    while (recv(fd, c, 16, MSG_PEEK | MSG_WAITALL) < 16)
        d_wait(fd, POLLIN);
    T(readv(fd, r, 3));
    NOTE("a %s b %s c %s", tr_data(a, 3), tr_data(b, 4), tr_data(c, 9));
    T(readv(fd, r, 0));
    T(readv(fd, r, neg));
    T(close(fd));
    return 0;
}
