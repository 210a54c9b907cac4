/*
 * Behaviour: SO_ERROR is 0 on healthy sockets (fresh, connected, UDP,
 * listener), is set by an asynchronous error (refused non-blocking connect)
 * and cleared by reading it (a read with optlen 0 included, as Linux
 * clears it before copying).
 */
#include "scen.h"

static void
soerr(int fd, socklen_t len)
{
    int err = -1;

    T(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
    NOTE("SO_ERROR len %d %s", (int)len,
         err == -1 ? "untouched"
         : err     ? tr_errname(err)
                   : "0");
}

int
main(void)
{
    struct sockaddr_in r = d_sin(D_PEER_IP, D_REFUSED);
    int s, c, u, l;

    tr_init();
    s = TF(socket(AF_INET, SOCK_STREAM, 0));
    soerr(s, sizeof(int));
    T(close(s));
    c = d_connect(D_ECHO);
    soerr(c, sizeof(int));
    T(close(c));
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    soerr(u, sizeof(int));
    T(close(u));
    l = d_listen(D_LPORT_BASE + 25);
    soerr(l, sizeof(int));
    T(close(l));

    s = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    T(connect(s, SA(&r), sizeof(r)));
    d_wait(s, POLLOUT);
    soerr(s, 0);
    soerr(s, sizeof(int));
    soerr(s, sizeof(int));
    T(close(s));
    return 0;
}
