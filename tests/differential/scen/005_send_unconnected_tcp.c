/*
 * Behaviour: sending on a TCP socket that never connected fails with EPIPE
 * (send, write, sendmsg; SIGPIPE raised unless MSG_NOSIGNAL) and sendto
 * with an address on an unconnected TCP socket fails too; counted with a
 * SIGPIPE handler.
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
    struct sockaddr_in a = d_sin(D_PEER_IP, D_ECHO);
    struct iovec iov = {"x", 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    int fd, b;

    tr_init();
    signal(SIGPIPE, on_pipe);
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(send(fd, "x", 1, 0));
    NOTE("sigpipe count %d", (int)npipe);
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    NOTE("sigpipe count %d", (int)npipe);
    T(write(fd, "x", 1));
    NOTE("sigpipe count %d", (int)npipe);
    T(sendmsg(fd, &m, MSG_NOSIGNAL));
    T(sendto(fd, "x", 1, MSG_NOSIGNAL, SA(&a), sizeof(a)));
    T(send(fd, "", 0, MSG_NOSIGNAL));
    NOTE("sigpipe count %d", (int)npipe);
    T(close(fd));

    b = TF(socket(AF_INET, SOCK_STREAM, 0));
    a = d_sin(D_SUBJ_IP, D_LPORT_BASE + 5);
    T(bind(b, SA(&a), sizeof(a)));
    T(send(b, "x", 1, MSG_NOSIGNAL));
    T(listen(b, 1));
    T(send(b, "x", 1, MSG_NOSIGNAL));
    NOTE("sigpipe count %d", (int)npipe);
    T(close(b));
    return 0;
}
