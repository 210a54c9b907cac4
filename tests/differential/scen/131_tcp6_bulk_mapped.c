/*
 * Behaviour: bulk TCP over an AF_INET6 socket to the peer's IPv4 services
 * in mapped form (::ffff:10.200.0.1): 1 MB to the sink comes back as the
 * right count and hash; 1 MB from the source arrives whole, with the
 * right hash, then EOF.
 */
#include "scen.h"

/* The peer address (132_tcp6_bulk_native.c includes this file with another). */
#ifndef PEER
#define PEER D_PEER_MAPPED
#endif

enum { TOTAL = 1 << 20 };

int
main(void)
{
    static unsigned char buf[65536];
    char line[64];
    uint32_t h = D_FNV_INIT;
    size_t off, i;
    ssize_t r;
    int fd;

    tr_init();
    fd = d_connect6(PEER, D_SINK);
    for (off = 0; off < TOTAL; off += sizeof(buf)) {
        for (i = 0; i < sizeof(buf); i++)
            buf[i] = d_pattern(off + i);
        h = d_fnv(h, buf, sizeof(buf));
        if (d_write_full(fd, buf, sizeof(buf)) < 0)
            d_fatal(__LINE__, "write to sink");
    }
    NOTE("sent %d bytes fnv=%08x", TOTAL, h);
    T(shutdown(fd, SHUT_WR));
    r = d_read_full(fd, line, sizeof(line) - 1);
    line[r > 0 ? r : 0] = '\0';
    NOTE("sink says %s", tr_data(line, strlen(line)));
    T(close(fd));

    fd = d_connect6(PEER, D_SOURCE);
    snprintf(line, sizeof(line), "%d\n", TOTAL);
    T(d_write_full(fd, line, strlen(line)));
    h = D_FNV_INIT;
    off = 0;
    while ((r = read(fd, buf, sizeof(buf))) > 0) {
        h = d_fnv(h, buf, (size_t)r);
        off += (size_t)r;
    }
    NOTE("received %zu bytes fnv=%08x, last read %zd", off, h, r);
    T(close(fd));
    return 0;
}
