/*
 * Behaviour: send/recv flag handling on a connected TCP socket: an unknown
 * high flag bit is ignored by send and recv (the call works), MSG_EOR on a
 * TCP send is accepted, MSG_CMSG_CLOEXEC is ignored by recv; send with a
 * NULL buffer and length 0 returns 0, with length 1 EFAULT; recv into NULL
 * with length 1 is EFAULT when data is queued, and the data stays.
 */
#include "scen.h"

int
main(void)
{
    char buf[16];
    long r;
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    T(send(fd, "a", 1, 0x10000000));
    T(send(fd, "b", 1, MSG_EOR));
    T(send(fd, NULL, 0, 0));
    T(send(fd, NULL, 1, MSG_NOSIGNAL));
    T(d_read_full(fd, buf, 2));
    T(send(fd, "c", 1, 0));
    d_wait(fd, POLLIN);
    T(recv(fd, NULL, 1, 0));
    r = T(recv(fd, buf, sizeof(buf), MSG_CMSG_CLOEXEC | 0x10000000));
    NOTE("got %s", tr_data(buf, r > 0 ? (size_t)r : 0));
    T(close(fd));
    return 0;
}
