/*
 * Behaviour: an AF_INET6 TCP socket connects to the peer's echo service at
 * fd00:200::1: it is named [fd00:200::2]:eph, its peer [fd00:200::1]:7001
 * (len 28, flowinfo 0, scope 0); data echoes (a small message and 100 KB);
 * shutdown(SHUT_WR) makes the peer close, read gives 0; close.
 */
#include "scen.h"

int
main(void)
{
    static char big[100000], back[100000];
    char buf[32];
    int c;
    size_t i;

    tr_init();
    for (i = 0; i < sizeof(big); i++)
        big[i] = (char)d_pattern(i);
    c = d_connect6(D_PEER_IP6, D_ECHO);
    d_name(c, 1, "name");
    d_peer(c, 0, "peer");
    T(send(c, "native hello", 12, 0));
    T(d_read_full(c, buf, 12));
    NOTE("echo %s", tr_data(buf, 12));
    T(d_write_full(c, big, sizeof(big)));
    T(d_read_full(c, back, sizeof(back)));
    NOTE("bulk echo fnv %08x", d_fnv(D_FNV_INIT, back, sizeof(back)));
    T(shutdown(c, SHUT_WR));
    T(read(c, buf, sizeof(buf)));
    T(close(c));
    return 0;
}
