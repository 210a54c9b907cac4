/*
 * Behaviour: MSG_PEEK returns data without consuming it (repeatable, also
 * with a smaller buffer and with MSG_DONTWAIT); a normal recv then returns
 * the same bytes; FIONREAD is unchanged by a peek.
 */
#include "scen.h"

int
main(void)
{
    char buf[32];
    int fd, n = -1;

    tr_init();
    fd = d_connect(D_SOURCE);
    T(send(fd, "11\n", 3, 0));
    /* The source closes after sending: wait for the FIN, all data is in. */
    d_wait(fd, POLLRDHUP);
    T(recv(fd, buf, 4, MSG_PEEK));
    NOTE("peek %s", tr_data(buf, 4));
    T(recv(fd, buf, sizeof(buf), MSG_PEEK));
    NOTE("peek %s", tr_data(buf, 11));
    T(ioctl(fd, FIONREAD, &n));
    NOTE("FIONREAD %d", n);
    T(recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
    T(recv(fd, buf, 5, 0));
    NOTE("read %s", tr_data(buf, 5));
    T(recv(fd, buf, sizeof(buf), MSG_PEEK));
    NOTE("peek %s", tr_data(buf, 6));
    T(recv(fd, buf, sizeof(buf), 0));
    NOTE("read %s", tr_data(buf, 6));
    T(recv(fd, buf, sizeof(buf), MSG_PEEK));
    T(close(fd));
    return 0;
}
