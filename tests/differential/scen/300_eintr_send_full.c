/*
 * Behaviour: a blocking send into a connection whose peer never reads
 * (D_HOLD), once the buffers on both sides are full (nothing taken for
 * 300 ms), is interrupted by a signal without SA_RESTART: EINTR, nothing
 * sent; with SA_RESTART and SO_SNDTIMEO 300 ms set, the interrupted send
 * fails with EINTR as well (a call with a timeout is never restarted);
 * the next send times out with EAGAIN. One alarm per interruption.
 */
#include "scen.h"

/* Fill until nothing more is taken for 300 ms. */
static void
fill(int fd)
{
    static char buf[65536];
    struct pollfd p = {.fd = fd, .events = POLLOUT};

    for (;;) {
        while (send(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
            ;
        if (poll(&p, 1, 300) == 0)
            return;
    }
}

int
main(void)
{
    struct timeval tv = {0, 300000};
    char buf[1024] = {0};
    int fd;

    tr_init();
    fd = d_connect(D_HOLD);
    fill(fd);
    NOTE("filled");
    d_alarm_arm(0);
    T(send(fd, buf, sizeof(buf), 0));
    NOTE("alarms %d", (int)d_alarms);
    T(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
    d_alarm_arm(1);
    T(send(fd, buf, sizeof(buf), 0));
    NOTE("alarms %d", (int)d_alarms);
    T(send(fd, buf, sizeof(buf), 0));
    T(close(fd));
    return 0;
}
