/*
 * Behaviour: a blocking connect() to a port with no listener fails with
 * ECONNREFUSED; afterwards SO_ERROR is 0, getpeername fails with
 * ENOTCONN, send fails with EPIPE, and the socket can connect again (to a
 * listening port) successfully.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in r = d_sin(D_PEER_IP, D_REFUSED);
    struct sockaddr_in e = d_sin(D_PEER_IP, D_ECHO);
    struct sockaddr_in got;
    socklen_t gl = sizeof(got);
    int fd, err = -1;
    socklen_t el = sizeof(err);

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(connect(fd, SA(&r), sizeof(r)));
    T(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el));
    NOTE("SO_ERROR %s", err ? tr_errname(err) : "0");
    T(getpeername(fd, SA(&got), &gl));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    T(connect(fd, SA(&r), sizeof(r)));
    T(connect(fd, SA(&e), sizeof(e)));
    T(close(fd));
    return 0;
}
