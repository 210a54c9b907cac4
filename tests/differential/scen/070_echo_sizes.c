/*
 * Behaviour: blocking send/recv round trips of sizes 1 B to 1 MiB through
 * the echo service return every byte intact (hash compared), with
 * send returning the full length on a blocking socket.
 */
#include "scen.h"

static char out[1 << 20], in[1 << 20];

int
main(void)
{
    static const size_t sizes[] = {1,    2,     100,   1460,   1461,
                                   4096, 65535, 65536, 200000, 1 << 20};
    int fd;

    tr_init();
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (char)d_pattern(i);
    fd = d_connect(D_ECHO);
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        ssize_t s, r;
        /* A thread-free echo: send in slices so the peer never
         * blocks on a full return path. */
        size_t off = 0;
        r = 0;
        while (off < n) {
            size_t slice = n - off < 32768 ? n - off : 32768;
            s = send(fd, out + off, slice, 0);
            if (s != (ssize_t)slice)
                break;
            off += slice;
            ssize_t got = d_read_full(fd, in + off - slice, slice);
            if (got != (ssize_t)slice)
                break;
            r += got;
        }
        NOTE("size %zu: sent %zu received %zd %s", n, off, r,
             memcmp(out, in, n) == 0 ? "intact" : "CORRUPT");
    }
    T(close(fd));
    return 0;
}
