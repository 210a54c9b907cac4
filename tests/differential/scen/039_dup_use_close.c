/*
 * Behaviour: dup/dup2/dup3 of a connected socket share the connection:
 * data sent on one is echoed to the other; closing the original leaves the
 * duplicate working; the peer sees EOF only when the last one is closed;
 * dup2(fd, fd) returns fd, dup3(fd, fd) fails with EINVAL, dup3 with a bad
 * flag fails with EINVAL; dup2 over an open socket closes it first.
 */
#include "scen.h"

int
main(void)
{
    char buf[64];
    int fd, d, other, n;

    tr_init();
    fd = d_connect(D_SINK);
    d = TF(dup(fd));
    T(send(fd, "one", 3, 0));
    T(send(d, "two", 3, 0));
    T(dup2(fd, fd) == fd);
    T(dup3(fd, fd, 0));
    T(dup3(fd, 77, 12345));
    T(dup2(fd, 77));
    T(dup3(fd, 78, O_CLOEXEC));
    T(fcntl(78, F_GETFD));
    T(fcntl(77, F_GETFD));
    T(send(77, "three", 5, 0));
    T(close(fd));
    T(close(77));
    T(close(78));
    T(send(d, "four", 4, 0));
    /* dup2 over an open socket: the old one is closed. */
    other = d_connect(D_ECHO);
    T(dup2(d, other) == other);
    T(send(other, "five", 4, 0));
    T(close(other));
    T(shutdown(d, SHUT_WR));
    n = (int)T(d_read_full(d, buf, sizeof(buf)));
    NOTE("sink %s", tr_data(buf, n > 0 ? (size_t)n : 0));
    T(close(d));
    return 0;
}
