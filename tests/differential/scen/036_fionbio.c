/*
 * Behaviour: ioctl(FIONBIO, 1) switches a socket to non-blocking (visible
 * as O_NONBLOCK in F_GETFL, recv EAGAIN), FIONBIO 0 switches it back.
 */
#include "scen.h"

int
main(void)
{
    int on = 1, off = 0, fd, l;
    char buf[4];

    tr_init();
    fd = d_connect(D_ECHO);
    T(ioctl(fd, FIONBIO, &on));
    T(fcntl(fd, F_GETFL) & O_NONBLOCK);
    T(recv(fd, buf, sizeof(buf), 0));
    T(ioctl(fd, FIONBIO, &off));
    T(fcntl(fd, F_GETFL) & O_NONBLOCK);
    T(send(fd, "b", 1, 0));
    T(recv(fd, buf, sizeof(buf), 0));
    T(close(fd));

    l = d_listen(D_LPORT_BASE + 36);
    T(ioctl(l, FIONBIO, &on));
    T(accept(l, NULL, NULL));
    T(close(l));
    return 0;
}
