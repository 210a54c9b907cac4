/*
 * Behaviour: F_GETFD is 0 on a new socket, FD_CLOEXEC after F_SETFD or
 * SOCK_CLOEXEC; F_DUPFD_CLOEXEC/F_DUPFD duplicates with/without it at or
 * above the requested number, and the duplicate works.
 */
#include "scen.h"

int
main(void)
{
    int fd, c, d1, d2;
    char buf[4];

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(fcntl(fd, F_GETFD));
    T(fcntl(fd, F_SETFD, FD_CLOEXEC));
    T(fcntl(fd, F_GETFD));
    T(fcntl(fd, F_SETFD, 0));
    T(fcntl(fd, F_GETFD));
    T(close(fd));
    fd = TF(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    T(fcntl(fd, F_GETFD));
    T(close(fd));

    c = d_connect(D_ECHO);
    d1 = T(fcntl(c, F_DUPFD_CLOEXEC, 300));
    d2 = T(fcntl(c, F_DUPFD, 300));
    T(fcntl(d1, F_GETFD));
    T(fcntl(d2, F_GETFD));
    T(fcntl(c, F_GETFD));
    T(send(d2, "dup", 3, 0));
    T(recv(d1, buf, 3, MSG_WAITALL));
    T(close(d1));
    T(close(d2));
    T(send(c, "c", 1, 0));
    T(recv(c, buf, 1, 0));
    T(close(c));
    return 0;
}
