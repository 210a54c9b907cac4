/*
 * Behaviour: dup2 of a pipe onto the number of a connected socket closes
 * the socket (the peer sees EOF: a new connection to the same echo
 * service works, and the number now reads the pipe); dup2 of a socket
 * onto a pipe's number makes that number the socket; dup3 with O_CLOEXEC
 * sets FD_CLOEXEC on the new number only.
 */
#include "scen.h"

int
main(void)
{
    char buf[8];
    long r;
    int fd, pfd[2], n, other;

    tr_init();
    fd = d_connect(D_ECHO);
    T(pipe(pfd));
    T(write(pfd[1], "pipe", 4));
    T(dup2(pfd[0], fd) == fd);
    r = T(read(fd, buf, sizeof(buf)));
    NOTE("read %s", tr_data(buf, r > 0 ? (size_t)r : 0));
    T(getsockname(fd, NULL, NULL));
    other = d_connect(D_ECHO);
    n = TF(dup(pfd[1]));
    T(dup3(other, n, O_CLOEXEC) == n);
    T(fcntl(n, F_GETFD));
    T(fcntl(other, F_GETFD));
    T(send(n, "via", 3, 0));
    T(d_read_full(other, buf, 3));
    NOTE("got %s", tr_data(buf, 3));
    T(close(n));
    T(close(other));
    T(close(fd));
    T(close(pfd[0]));
    T(close(pfd[1]));
    return 0;
}
