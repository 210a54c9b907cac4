/*
 * Behaviour: SO_KEEPALIVE defaults to 0 and reads back 1 when set;
 * TCP_KEEPIDLE/TCP_KEEPINTVL/TCP_KEEPCNT have Linux's defaults
 * (7200/75/9), read back what was set, and reject 0 and out-of-range
 * values with EINVAL; on a connected socket too.
 */
#include "scen.h"

static void
get(int fd, int level, int opt, const char *name)
{
    int v = -1;
    socklen_t l = sizeof(v);

    T(getsockopt(fd, level, opt, &v, &l));
    NOTE("%s = %d", name, v);
}

static void
set(int fd, int level, int opt, int v)
{
    T(setsockopt(fd, level, opt, &v, sizeof(v)));
}

static void
all(int fd)
{
    get(fd, SOL_SOCKET, SO_KEEPALIVE, "SO_KEEPALIVE");
    get(fd, IPPROTO_TCP, TCP_KEEPIDLE, "TCP_KEEPIDLE");
    get(fd, IPPROTO_TCP, TCP_KEEPINTVL, "TCP_KEEPINTVL");
    get(fd, IPPROTO_TCP, TCP_KEEPCNT, "TCP_KEEPCNT");
}

int
main(void)
{
    int fd, c;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    all(fd);
    set(fd, SOL_SOCKET, SO_KEEPALIVE, 5);
    set(fd, IPPROTO_TCP, TCP_KEEPIDLE, 30);
    set(fd, IPPROTO_TCP, TCP_KEEPINTVL, 5);
    set(fd, IPPROTO_TCP, TCP_KEEPCNT, 3);
    all(fd);
    set(fd, IPPROTO_TCP, TCP_KEEPIDLE, 0);
    set(fd, IPPROTO_TCP, TCP_KEEPIDLE, 32768);
    set(fd, IPPROTO_TCP, TCP_KEEPINTVL, 0);
    set(fd, IPPROTO_TCP, TCP_KEEPINTVL, 32768);
    set(fd, IPPROTO_TCP, TCP_KEEPCNT, 0);
    set(fd, IPPROTO_TCP, TCP_KEEPCNT, 128);
    set(fd, IPPROTO_TCP, TCP_KEEPIDLE, 32767);
    all(fd);
    T(close(fd));

    c = d_connect(D_ECHO);
    set(c, SOL_SOCKET, SO_KEEPALIVE, 1);
    set(c, IPPROTO_TCP, TCP_KEEPIDLE, 1);
    all(c);
    set(c, SOL_SOCKET, SO_KEEPALIVE, 0);
    get(c, SOL_SOCKET, SO_KEEPALIVE, "SO_KEEPALIVE");
    T(close(c));
    return 0;
}
