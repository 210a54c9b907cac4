/*
 * Behaviour: poll() entries that name the same socket twice (with
 * different events), a negative fd (skipped: revents 0, not counted), a
 * closed fd (POLLNVAL, counted) and a socket asked for nothing: the
 * return value counts entries with non-zero revents, each duplicate gets
 * its own answer.
 */
#include "scen.h"

int
main(void)
{
    struct pollfd p[5];
    int fd, closed;

    tr_init();
    fd = d_connect(D_ECHO);
    closed = TF(dup(fd));
    T(close(closed));
    T(send(fd, "x", 1, 0));
    d_wait(fd, POLLIN);
    p[0] = (struct pollfd){fd, POLLIN, 0};
    p[1] = (struct pollfd){fd, POLLOUT, 0};
    p[2] = (struct pollfd){-5, POLLIN, 0};
    p[3] = (struct pollfd){closed, POLLIN, 0};
    p[4] = (struct pollfd){fd, 0, 0};
    T(poll(p, 5, 0));
    for (int i = 0; i < 5; i++)
        NOTE("entry %d: %s", i, tr_pollev(p[i].revents));
    T(poll(p, 3, 0));
    T(poll(NULL, 0, 10));
    T(close(fd));
    return 0;
}
