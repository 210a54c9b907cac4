/*
 * Behaviour: a non-blocking send to a peer that never reads eventually
 * fails with EAGAIN after some bytes were accepted, and again right after;
 * MSG_DONTWAIT on the (then blocking) socket is EAGAIN too; a blocking
 * send with SO_SNDTIMEO 100 ms ends, once the buffer is full, with EAGAIN.
 * Byte counts vary and are not printed.
 */
#include "scen.h"

/* Send until the socket stays full: EAGAIN and no POLLOUT within 200 ms. */
static int
fill(int fd, const char *chunk, size_t len, int flags)
{
    struct pollfd p;
    ssize_t n;

    for (;;) {
        n = send(fd, chunk, len, flags);
        if (n > 0)
            continue;
        if (n < 0 && errno == EAGAIN) {
            p = (struct pollfd){.fd = fd, .events = POLLOUT};
            if (poll(&p, 1, 200) == 0)
                return EAGAIN;
            continue;
        }
        return n < 0 ? errno : 0;
    }
}

int
main(void)
{
    static char chunk[65536];
    struct timeval tv = {0, 100000};
    int fd, err;
    ssize_t n;

    tr_init();
    fd = d_connect(D_HOLD);
    T(fcntl(fd, F_SETFL, O_NONBLOCK));
    memset(chunk, 'h', sizeof(chunk));
    err = fill(fd, chunk, sizeof(chunk), 0);
    NOTE("filled: %s", err ? tr_errname(err) : "no error");
    /* Top up the last bytes of room so the next sends find none. */
    while (send(fd, chunk, 100, 0) > 0)
        ;
    T(send(fd, chunk, 1000, 0));
    T(fcntl(fd, F_SETFL, 0));
    T(send(fd, chunk, 1000, MSG_DONTWAIT));
    T(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
    do
        n = send(fd, chunk, sizeof(chunk), 0);
    while (n > 0);
    NOTE("blocking send with SO_SNDTIMEO ended: %ld %s", (long)n,
         n < 0 ? tr_errname(errno) : "");
    T(close(fd));
    return 0;
}
