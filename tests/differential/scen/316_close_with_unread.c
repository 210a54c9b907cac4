/*
 * Behaviour: close() of a connection with unread received data returns 0
 * at once (Linux resets such a connection); a connection to the sink with
 * SO_LINGER {1, 1} that shuts down its sending side gets the sink's
 * summary of what it sent, and its close returns 0 (all acknowledged).
 */
#include "scen.h"

int
main(void)
{
    struct linger lg = {1, 1};
    char buf[64];
    long r;
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    T(send(fd, "unread", 6, 0));
    d_wait(fd, POLLIN);
    T(close(fd));
    fd = d_connect(D_SINK);
    T(send(fd, "12345", 5, 0));
    T(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
    T(shutdown(fd, SHUT_WR));
    r = T(d_read_full(fd, buf, sizeof(buf)));
    NOTE("reply %s", tr_data(buf, r > 0 ? (size_t)r : 0));
    T(close(fd));
    return 0;
}
