/*
 * Behaviour: a signal whose handler is installed without SA_RESTART
 * interrupts a blocking recv, read, accept and connect-less recvmsg with
 * EINTR; with SA_RESTART a recv with SO_RCVTIMEO still fails with EINTR
 * (timeouts are never restarted); the handler ran once per interruption.
 */
#include "scen.h"

static volatile sig_atomic_t nalrm;

static void
on_alrm(int sig)
{
    (void)sig;
    nalrm++;
}

static void
arm(int restart)
{
    struct sigaction sa;
    struct itimerval it = {{0, 0}, {0, 100000}};

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alrm;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &it, NULL);
}

int
main(void)
{
    struct timeval tv = {5, 0};
    char buf[8];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    int fd, l;

    tr_init();
    fd = d_connect(D_ECHO);
    arm(0);
    T(recv(fd, buf, sizeof(buf), 0));
    NOTE("alarms %d", (int)nalrm);
    arm(0);
    T(read(fd, buf, sizeof(buf)));
    arm(0);
    T(recvmsg(fd, &m, 0));
    NOTE("alarms %d", (int)nalrm);
    l = d_listen(D_LPORT_BASE + 50);
    arm(0);
    T(accept(l, NULL, NULL));
    NOTE("alarms %d", (int)nalrm);
    T(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    arm(1);
    T(recv(fd, buf, sizeof(buf), 0));
    NOTE("alarms %d", (int)nalrm);
    T(send(fd, "after", 5, 0));
    T(recv(fd, buf, 5, MSG_WAITALL));
    T(close(l));
    T(close(fd));
    return 0;
}
