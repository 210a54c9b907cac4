/*
 * Behaviour: sending 8 MiB on a non-blocking socket makes partial progress
 * (writes may be short, EAGAIN until POLLOUT) yet every byte arrives in
 * order: the sink's byte count and FNV hash match ours. Partial sizes and
 * EAGAIN counts vary and are not printed.
 */
#include "scen.h"

#define TOTAL (8u << 20)

int
main(void)
{
    static char chunk[100000];
    char reply[64], want[64];
    uint64_t off = 0;
    uint32_t h = D_FNV_INIT;
    int fd, other_err = 0;
    ssize_t n;

    tr_init();
    fd = d_connect(D_SINK);
    T(fcntl(fd, F_SETFL, O_NONBLOCK));
    while (off < TOTAL) {
        size_t len = sizeof(chunk), i;
        if (len > TOTAL - off)
            len = TOTAL - off;
        for (i = 0; i < len; i++)
            chunk[i] = (char)d_pattern(off + i);
        n = send(fd, chunk, len, 0);
        if (n < 0 && errno == EAGAIN) {
            d_wait(fd, POLLOUT);
            continue;
        }
        if (n < 0) {
            other_err = errno;
            break;
        }
        h = d_fnv(h, chunk, (size_t)n);
        off += (uint64_t)n;
    }
    NOTE("sent %llu bytes, error %s", (unsigned long long)off,
         other_err ? tr_errname(other_err) : "none");
    T(shutdown(fd, SHUT_WR));
    T(fcntl(fd, F_SETFL, 0));
    n = T(d_read_full(fd, reply, sizeof(reply)));
    snprintf(want, sizeof(want), "bytes=%u fnv=%08x\n", TOTAL, h);
    NOTE("sink %s, %s", tr_data(reply, n > 0 ? (size_t)n : 0),
         n > 0 && strncmp(reply, want, (size_t)n) == 0 ? "matches"
                                                       : "MISMATCH");
    T(close(fd));
    return 0;
}
