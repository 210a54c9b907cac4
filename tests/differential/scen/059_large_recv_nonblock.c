/*
 * Behaviour: receiving 6 MiB on a non-blocking socket with poll between
 * EAGAINs (epoll edge-triggered wakeups here) yields every byte in order,
 * then EOF; the FNV hash matches the pattern. Read sizes are not printed.
 */
#include "scen.h"

#define TOTAL (6u << 20)

int
main(void)
{
    static char buf[65536];
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET | EPOLLRDHUP};
    uint64_t got = 0;
    uint32_t h = D_FNV_INIT, want = D_FNV_INIT;
    int fd, ep, eof = 0, err = 0;
    char line[16];

    tr_init();
    fd = d_connect(D_SOURCE);
    snprintf(line, sizeof(line), "%u\n", TOTAL);
    T(send(fd, line, strlen(line), 0));
    T(fcntl(fd, F_SETFL, O_NONBLOCK));
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    while (!eof && !err) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n > 0) {
            h = d_fnv(h, buf, (size_t)n);
            got += (uint64_t)n;
        } else if (n == 0) {
            eof = 1;
        } else if (errno == EAGAIN) {
            if (epoll_wait(ep, &ev, 1, 10000) <= 0)
                err = ETIMEDOUT;
        } else {
            err = errno;
        }
    }
    for (uint64_t i = 0; i < TOTAL; i++) {
        unsigned char c = d_pattern(i);
        want = d_fnv(want, &c, 1);
    }
    NOTE("received %llu bytes eof %d error %s hash %s", (unsigned long long)got,
         eof, err ? tr_errname(err) : "none",
         h == want ? "matches" : "MISMATCH");
    T(close(ep));
    T(close(fd));
    return 0;
}
