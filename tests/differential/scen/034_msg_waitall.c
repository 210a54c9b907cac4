/*
 * Behaviour: recv with MSG_WAITALL on a blocking socket returns the full
 * requested length even when the data arrives in many segments; at EOF it
 * returns what is left (short count), then 0.
 */
#include "scen.h"

int
main(void)
{
    static char buf[300000];
    uint32_t h = D_FNV_INIT, want = D_FNV_INIT;
    int fd;

    tr_init();
    fd = d_connect(D_SOURCE);
    T(send(fd, "250000\n", 7, 0));
    T(recv(fd, buf, 200000, MSG_WAITALL));
    h = d_fnv(h, buf, 200000);
    T(recv(fd, buf + 200000, 100000, MSG_WAITALL));
    h = d_fnv(h, buf + 200000, 50000);
    for (uint64_t i = 0; i < 250000; i++) {
        unsigned char c = d_pattern(i);
        want = d_fnv(want, &c, 1);
    }
    NOTE("data %s", h == want ? "matches pattern" : "CORRUPT");
    T(recv(fd, buf, 10, MSG_WAITALL));
    T(close(fd));
    return 0;
}
