/*
 * Behaviour: setsockopt/getsockopt argument errors on a connected TCP socket
 * (on the stack): unknown options ENOPROTOOPT at every level, an unknown
 * level ENOPROTOOPT to set and EOPNOTSUPP to get, UDP_CORK on TCP
 * ENOPROTOOPT/EOPNOTSUPP, a NULL value EFAULT, a NULL optlen EFAULT, a
 * negative optlen EINVAL, short lengths for int, linger and timeval options
 * EINVAL; a good call still works after them.
 */
#include "scen.h"

#include <netinet/udp.h>

int
main(void)
{
    struct linger lg = {1, 0};
    struct timeval tv = {1, 0};
    int fd, v = 1;
    socklen_t l;

    tr_init();
    fd = d_connect(D_ECHO);
    T(setsockopt(fd, 12345, 1, &v, sizeof(v)));
    T(setsockopt(fd, SOL_SOCKET, 9999, &v, sizeof(v)));
    T(setsockopt(fd, IPPROTO_TCP, 9999, &v, sizeof(v)));
    T(setsockopt(fd, IPPROTO_IP, 9999, &v, sizeof(v)));
    T(setsockopt(fd, IPPROTO_UDP, UDP_CORK, &v, sizeof(v)));
    T(setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, NULL, sizeof(v)));
    T(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, 2));
    T(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg) - 1));
    T(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv) - 1));
    l = sizeof(v);
    T(getsockopt(fd, 12345, 1, &v, &l));
    T(getsockopt(fd, SOL_SOCKET, 9999, &v, &l));
    T(getsockopt(fd, IPPROTO_TCP, 9999, &v, &l));
    T(getsockopt(fd, IPPROTO_UDP, UDP_CORK, &v, &l));
    T(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, NULL));
    l = (socklen_t)-1;
    T(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l));
    l = sizeof(v);
    T(getsockopt(fd, SOL_SOCKET, SO_TYPE, NULL, &l));
    d_seti(fd, IPPROTO_TCP, TCP_NODELAY, 1);
    d_geti(fd, IPPROTO_TCP, TCP_NODELAY, "TCP_NODELAY");
    T(send(fd, "ok", 2, 0));
    T(d_read_full(fd, &v, 2));
    T(close(fd));
    return 0;
}
