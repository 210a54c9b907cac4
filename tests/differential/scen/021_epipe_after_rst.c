/*
 * Behaviour: after the peer's RST has been consumed (recv ECONNRESET),
 * send fails with EPIPE: one SIGPIPE without MSG_NOSIGNAL (counted by a
 * handler), none with it.
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
    char buf[8];
    int fd;

    tr_init();
    signal(SIGPIPE, on_pipe);
    fd = d_connect_rst();
    d_wait(fd, 0);
    T(recv(fd, buf, sizeof(buf), 0));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    NOTE("sigpipe %d", (int)npipe);
    T(send(fd, "x", 1, 0));
    NOTE("sigpipe %d", (int)npipe);
    T(write(fd, "x", 1));
    NOTE("sigpipe %d", (int)npipe);
    T(close(fd));

    /* RST not consumed yet: the pending error is reported first. */
    fd = d_connect_rst();
    d_wait(fd, 0);
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    NOTE("sigpipe %d", (int)npipe);
    T(close(fd));
    return 0;
}
