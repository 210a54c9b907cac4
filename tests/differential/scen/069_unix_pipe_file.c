/*
 * Behaviour: non-AF_INET descriptors are untouched: an AF_UNIX socketpair
 * (stream and datagram) sends and receives, SO_TYPE/SO_DOMAIN report
 * AF_UNIX, a pipe reads and writes and reports EAGAIN when empty in
 * non-blocking mode, a regular file reads back what was written, and
 * AF_INET6 sockets still get created by the kernel.
 */
#include "scen.h"

int
main(void)
{
    int sp[2], dp[2], p[2], d = -1, f, s6;
    socklen_t dl = sizeof(d);
    char buf[16], path[] = "/tmp/accel-diff-XXXXXX";

    tr_init();
    T(socketpair(AF_UNIX, SOCK_STREAM, 0, sp));
    T(send(sp[0], "unix", 4, 0));
    T(recv(sp[1], buf, sizeof(buf), 0));
    T(getsockopt(sp[0], SOL_SOCKET, SO_DOMAIN, &d, &dl));
    NOTE("domain %d", d);
    T(shutdown(sp[0], SHUT_WR));
    T(recv(sp[1], buf, sizeof(buf), 0));
    T(close(sp[0]));
    T(close(sp[1]));

    T(socketpair(AF_UNIX, SOCK_DGRAM, 0, dp));
    T(send(dp[0], "d1", 2, 0));
    T(send(dp[0], "", 0, 0));
    T(recv(dp[1], buf, 1, 0));
    T(recv(dp[1], buf, sizeof(buf), 0));
    T(close(dp[0]));
    T(close(dp[1]));

    T(pipe2(p, O_NONBLOCK));
    T(read(p[0], buf, sizeof(buf)));
    T(write(p[1], "pipe", 4));
    T(read(p[0], buf, sizeof(buf)));
    T(recv(p[0], buf, sizeof(buf), 0));
    T(close(p[0]));
    T(close(p[1]));

    f = TF(mkstemp(path));
    T(unlink(path));
    T(write(f, "file", 4));
    T(pread(f, buf, sizeof(buf), 0));
    T(close(f));

    s6 = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(close(s6));
    return 0;
}
