/*
 * Behaviour: SO_RCVBUF/SO_SNDBUF report twice the value set (Linux
 * doubles it for bookkeeping), are clamped to the minimum for tiny values,
 * and to twice net.core.{r,w}mem_max for huge ones; on TCP and UDP.
 */
#include "scen.h"

static void
setget(int fd, int opt, const char *name, int v)
{
    int got = -1;
    socklen_t l = sizeof(got);

    T(setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v)));
    T(getsockopt(fd, SOL_SOCKET, opt, &got, &l));
    NOTE("%s set %d -> %d", name, v, got);
}

int
main(void)
{
    int fd, u, c;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    setget(fd, SO_RCVBUF, "tcp SO_RCVBUF", 65536);
    setget(fd, SO_SNDBUF, "tcp SO_SNDBUF", 65536);
    setget(fd, SO_RCVBUF, "tcp SO_RCVBUF", 1);
    setget(fd, SO_SNDBUF, "tcp SO_SNDBUF", 1);
    setget(fd, SO_RCVBUF, "tcp SO_RCVBUF", 0);
    setget(fd, SO_RCVBUF, "tcp SO_RCVBUF", 1000);
    setget(fd, SO_SNDBUF, "tcp SO_SNDBUF", 3000);
    setget(fd, SO_RCVBUF, "tcp SO_RCVBUF", 1 << 30);
    setget(fd, SO_SNDBUF, "tcp SO_SNDBUF", 1 << 30);
    setget(fd, SO_RCVBUF, "tcp SO_RCVBUF", -5);
    T(close(fd));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    setget(u, SO_RCVBUF, "udp SO_RCVBUF", 100000);
    setget(u, SO_SNDBUF, "udp SO_SNDBUF", 100000);
    T(close(u));

    c = d_connect(D_ECHO);
    setget(c, SO_RCVBUF, "connected SO_RCVBUF", 200000);
    setget(c, SO_SNDBUF, "connected SO_SNDBUF", 200000);
    T(send(c, "ok", 2, 0));
    T(recv(c, (char[2]){0}, 2, MSG_WAITALL));
    T(close(c));
    return 0;
}
