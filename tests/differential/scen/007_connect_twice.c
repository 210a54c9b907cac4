/*
 * Behaviour: a second connect() on a connected TCP socket fails with
 * EISCONN (same or other address); the connection stays usable.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, D_ECHO);
    struct sockaddr_in b = d_sin(D_PEER_IP, D_SINK);
    char buf[4];
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(connect(fd, SA(&a), sizeof(a)));
    T(connect(fd, SA(&a), sizeof(a)));
    T(connect(fd, SA(&b), sizeof(b)));
    T(send(fd, "abc", 3, 0));
    T(d_read_full(fd, buf, 3));
    NOTE("echo %s", tr_data(buf, 3));
    T(close(fd));
    return 0;
}
