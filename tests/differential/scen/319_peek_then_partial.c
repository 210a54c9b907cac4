/*
 * Behaviour: MSG_PEEK with a buffer larger than what is queued returns
 * what is there; MSG_PEEK|MSG_WAITALL|MSG_DONTWAIT returns it too without
 * waiting; a peek of 0 bytes returns 0; four reads of 3 bytes take the 10
 * queued bytes in order (3, 3, 3, then the last 1), FIONREAD following
 * each step; then EAGAIN.
 */
#include "scen.h"

int
main(void)
{
    char buf[32];
    long r;
    int fd, v;

    tr_init();
    fd = d_connect(D_ECHO);
    d_echoed(fd, "0123456789", 10);
    r = T(recv(fd, buf, sizeof(buf), MSG_PEEK));
    NOTE("peek %s", tr_data(buf, r > 0 ? (size_t)r : 0));
    r = T(recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_WAITALL | MSG_DONTWAIT));
    T(recv(fd, buf, 0, MSG_PEEK));
    for (int i = 0; i < 4; i++) {
        r = T(recv(fd, buf, 3, 0));
        NOTE("got %s", tr_data(buf, r > 0 ? (size_t)r : 0));
        T(ioctl(fd, FIONREAD, &v));
        NOTE("FIONREAD = %d", v);
    }
    T(recv(fd, buf, 3, MSG_DONTWAIT));
    T(close(fd));
    return 0;
}
