/*
 * Behaviour: SO_KEEPALIVE defaults to 0 and reads back 1 when set;
 * TCP_KEEPIDLE/TCP_KEEPINTVL/TCP_KEEPCNT have Linux's defaults
 * (7200/75/9), read back what was set, and reject 0 and out-of-range
 * values with EINVAL; on a connected socket too.
 */
#include "scen.h"

static void
all(int fd)
{
    d_geti(fd, SOL_SOCKET, SO_KEEPALIVE, "SO_KEEPALIVE");
    d_geti(fd, IPPROTO_TCP, TCP_KEEPIDLE, "TCP_KEEPIDLE");
    d_geti(fd, IPPROTO_TCP, TCP_KEEPINTVL, "TCP_KEEPINTVL");
    d_geti(fd, IPPROTO_TCP, TCP_KEEPCNT, "TCP_KEEPCNT");
}

int
main(void)
{
    int fd, c;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    all(fd);
    d_seti(fd, SOL_SOCKET, SO_KEEPALIVE, 5);
    d_seti(fd, IPPROTO_TCP, TCP_KEEPIDLE, 30);
    d_seti(fd, IPPROTO_TCP, TCP_KEEPINTVL, 5);
    d_seti(fd, IPPROTO_TCP, TCP_KEEPCNT, 3);
    all(fd);
    d_seti(fd, IPPROTO_TCP, TCP_KEEPIDLE, 0);
    d_seti(fd, IPPROTO_TCP, TCP_KEEPIDLE, 32768);
    d_seti(fd, IPPROTO_TCP, TCP_KEEPINTVL, 0);
    d_seti(fd, IPPROTO_TCP, TCP_KEEPINTVL, 32768);
    d_seti(fd, IPPROTO_TCP, TCP_KEEPCNT, 0);
    d_seti(fd, IPPROTO_TCP, TCP_KEEPCNT, 128);
    d_seti(fd, IPPROTO_TCP, TCP_KEEPIDLE, 32767);
    all(fd);
    T(close(fd));

    c = d_connect(D_ECHO);
    d_seti(c, SOL_SOCKET, SO_KEEPALIVE, 1);
    d_seti(c, IPPROTO_TCP, TCP_KEEPIDLE, 1);
    all(c);
    d_seti(c, SOL_SOCKET, SO_KEEPALIVE, 0);
    d_geti(c, SOL_SOCKET, SO_KEEPALIVE, "SO_KEEPALIVE");
    T(close(c));
    return 0;
}
