/*
 * Behaviour: TCP_INFO's tcpi_bytes_acked and tcpi_bytes_received (Linux's
 * longer struct tcp_info, offsets 120 and 128) count as Linux does: after
 * connect, 1 acked (the SYN) and 0 received; after 1000 bytes echoed,
 * 1001 and 1000; after both FINs, 1002 and 1001.
 */
#include "scen.h"

static void
bytes(int fd, const char *when)
{
    unsigned char raw[232];
    socklen_t l = sizeof(raw);
    uint64_t acked, received;

    memset(raw, 0, sizeof(raw));
    if (T(getsockopt(fd, IPPROTO_TCP, TCP_INFO, raw, &l)) != 0)
        return;
    memcpy(&acked, raw + 120, 8);
    memcpy(&received, raw + 128, 8);
    NOTE("%s: len %d bytes_acked %llu bytes_received %llu", when, (int)l,
         (unsigned long long)acked, (unsigned long long)received);
}

int
main(void)
{
    char out[1000], in[1000];
    int fd;

    tr_init();
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (char)('a' + i % 26);
    fd = d_connect(D_ECHO);
    usleep(50000);
    bytes(fd, "connected");
    T(send(fd, out, sizeof(out), 0));
    T(d_read_full(fd, in, sizeof(in)));
    NOTE("echo %s", memcmp(in, out, sizeof(in)) == 0 ? "same" : "differs");
    usleep(50000);
    bytes(fd, "echoed");
    T(shutdown(fd, SHUT_WR));
    T(read(fd, in, sizeof(in)));
    usleep(50000);
    bytes(fd, "both closed");
    T(close(fd));
    return 0;
}
