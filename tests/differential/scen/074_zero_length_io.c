/*
 * Behaviour: zero-length I/O on a connected TCP socket: send/write of 0
 * bytes return 0; recv of 0 bytes with MSG_DONTWAIT on an empty socket is
 * EAGAIN (a blocking one would wait for data, as Linux does), and returns
 * 0 without consuming anything once data is queued.
 */
#include "scen.h"

int
main(void)
{
    char buf[8];
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    T(send(fd, buf, 0, 0));
    T(write(fd, buf, 0));
    T(recv(fd, buf, 0, MSG_DONTWAIT));
    T(send(fd, "zz", 2, 0));
    while (recv(fd, buf, 2, MSG_PEEK | MSG_WAITALL) < 2)
        d_wait(fd, POLLIN);
    T(recv(fd, buf, 0, 0));
    T(read(fd, buf, 0));
    T(recv(fd, buf, 0, MSG_DONTWAIT));
    T(recv(fd, buf, 2, MSG_WAITALL));
    NOTE("got %s", tr_data(buf, 2));
    T(recv(fd, buf, 0, MSG_DONTWAIT));
    T(close(fd));
    return 0;
}
