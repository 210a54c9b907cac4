/*
 * Behaviour: sending on a socket after shutdown(SHUT_WR) fails with EPIPE
 * and raises exactly one SIGPIPE per call (send, write, writev, sendmsg),
 * none with MSG_NOSIGNAL; with SIGPIPE ignored the error stays EPIPE.
 */
#include "scen.h"

static volatile sig_atomic_t npipe;

static void
on_pipe(int sig)
{
    (void)sig;
    npipe++;
}

int
main(void)
{
    struct iovec iov = {"x", 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    struct sigaction sa;
    int fd;

    tr_init();
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_pipe;
    sigaction(SIGPIPE, &sa, NULL);
    fd = d_connect(D_SINK);
    T(shutdown(fd, SHUT_WR));
    T(send(fd, "x", 1, 0));
    NOTE("sigpipe %d", (int)npipe);
    T(write(fd, "x", 1));
    NOTE("sigpipe %d", (int)npipe);
    T(writev(fd, &iov, 1));
    NOTE("sigpipe %d", (int)npipe);
    T(sendmsg(fd, &m, 0));
    NOTE("sigpipe %d", (int)npipe);
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    T(sendmsg(fd, &m, MSG_NOSIGNAL));
    NOTE("sigpipe %d", (int)npipe);
    signal(SIGPIPE, SIG_IGN);
    T(send(fd, "x", 1, 0));
    NOTE("sigpipe %d", (int)npipe);
    T(close(fd));
    return 0;
}
