/*
 * Behaviour: MSG_WAITALL on a non-blocking socket (or with MSG_DONTWAIT)
 * does not wait: it returns the 4 bytes queued when 10 are asked, and
 * EAGAIN when nothing is; with SO_RCVTIMEO 200 ms on a blocking socket it
 * returns the partial 4 bytes once the timeout expires.
 */
#include "scen.h"

int
main(void)
{
    struct timeval tv = {0, 200000};
    char buf[16];
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    d_echoed(fd, "abcd", 4);
    T(recv(fd, buf, 10, MSG_WAITALL | MSG_DONTWAIT));
    T(recv(fd, buf, 10, MSG_WAITALL | MSG_DONTWAIT));
    T(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    d_echoed(fd, "efgh", 4);
    T(recv(fd, buf, 10, MSG_WAITALL));
    T(recv(fd, buf, 10, MSG_WAITALL));
    T(close(fd));
    return 0;
}
