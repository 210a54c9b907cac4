/*
 * Behaviour: a non-blocking connect() to a port with no listener returns
 * EINPROGRESS; poll then reports POLLOUT|POLLERR|POLLHUP, SO_ERROR reads
 * ECONNREFUSED once and 0 after; recv after that returns 0 / errors as
 * Linux does.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in r = d_sin(D_PEER_IP, D_REFUSED);
    int fd, err = -1;
    socklen_t el = sizeof(err);
    char buf[4];

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    T(connect(fd, SA(&r), sizeof(r)));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLOUT | POLLIN | POLLRDHUP)));
    T(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el));
    NOTE("SO_ERROR %s", err ? tr_errname(err) : "0");
    err = -1;
    T(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el));
    NOTE("SO_ERROR %s", err ? tr_errname(err) : "0");
    T(recv(fd, buf, sizeof(buf), 0));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    T(close(fd));

    /* The error is also reported by the next connect() call. */
    fd = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    T(connect(fd, SA(&r), sizeof(r)));
    d_wait(fd, POLLOUT);
    T(connect(fd, SA(&r), sizeof(r)));
    T(close(fd));
    return 0;
}
