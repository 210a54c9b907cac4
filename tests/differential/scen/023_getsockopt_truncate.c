/*
 * Behaviour: getsockopt with a small optlen truncates (optlen 1, 2 and 0
 * for int options) and reports the truncated length; a negative optlen
 * fails with EINVAL; an oversized buffer gets sizeof(int); SO_LINGER is
 * returned whole; unknown options fail with ENOPROTOOPT.
 */
#include "scen.h"

int
main(void)
{
    unsigned char b[16];
    socklen_t len;
    int fd;
    struct linger l;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    for (int want = 0; want <= 2; want++) {
        memset(b, 0xee, sizeof(b));
        len = (socklen_t)want;
        T(getsockopt(fd, SOL_SOCKET, SO_TYPE, b, &len));
        NOTE("optlen %d -> len %d bytes %02x %02x", want, (int)len, b[0], b[1]);
    }
    memset(b, 0xee, sizeof(b));
    len = sizeof(b);
    T(getsockopt(fd, SOL_SOCKET, SO_TYPE, b, &len));
    NOTE("big buffer -> len %d", (int)len);
    len = (socklen_t)-1;
    T(getsockopt(fd, SOL_SOCKET, SO_TYPE, b, &len));
    len = 1;
    T(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, b, &len));
    NOTE("TCP_NODELAY optlen 1 -> len %d byte %02x", (int)len, b[0]);
    len = sizeof(l);
    T(getsockopt(fd, SOL_SOCKET, SO_LINGER, &l, &len));
    NOTE("linger len %d onoff %d linger %d", (int)len, l.l_onoff, l.l_linger);
    len = sizeof(int);
    T(getsockopt(fd, SOL_SOCKET, 9999, b, &len));
    T(getsockopt(fd, IPPROTO_TCP, 9999, b, &len));
    T(close(fd));
    return 0;
}
