/*
 * Behaviour: a non-blocking connect() returns EINPROGRESS; poll reports
 * POLLOUT when established, SO_ERROR is 0, getpeername names the peer;
 * the first connect() after completion returns 0 (reports the success,
 * as Linux does) and the next one fails with EISCONN.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, D_ECHO);
    struct sockaddr_in got;
    socklen_t gl = sizeof(got);
    int fd, err = -1;
    socklen_t el = sizeof(err);
    char buf[4];

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    T(connect(fd, SA(&a), sizeof(a)));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLOUT)));
    T(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el));
    NOTE("SO_ERROR %s", err ? tr_errname(err) : "0");
    T(getpeername(fd, SA(&got), &gl));
    NOTE("peer %s", tr_addr(&got, 0));
    T(connect(fd, SA(&a), sizeof(a)));
    T(connect(fd, SA(&a), sizeof(a)));
    T(send(fd, "abc", 3, 0));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLIN)));
    T(recv(fd, buf, 3, MSG_WAITALL));
    T(close(fd));
    return 0;
}
