/*
 * Behaviour: setsockopt with a too short option length fails with EINVAL
 * (int options with optlen 0 and 1, SO_LINGER with 4, timeouts with 4),
 * unknown levels/options fail with ENOPROTOOPT, a NULL value with EFAULT,
 * and a valid call still succeeds afterwards.
 */
#include "scen.h"

int
main(void)
{
    int one = 1, fd;
    struct linger l = {1, 0};
    struct timeval tv = {1, 0};

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, 0));
    T(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, 1));
    T(setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, 0));
    T(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &one, 2));
    T(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, 0));
    T(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, 1));
    T(setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &one, 3));
    T(setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, 4));
    T(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, 4));
    T(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, 8));
    T(setsockopt(fd, SOL_SOCKET, 9999, &one, sizeof(one)));
    T(setsockopt(fd, IPPROTO_TCP, 9999, &one, sizeof(one)));
    T(setsockopt(fd, 12345, 1, &one, sizeof(one)));
    T(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, NULL, sizeof(one)));
    T(setsockopt(fd, SOL_SOCKET, SO_TYPE, &one, sizeof(one)));
    T(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    T(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, 8));
    T(close(fd));
    return 0;
}
