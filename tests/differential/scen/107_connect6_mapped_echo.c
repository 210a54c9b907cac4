/*
 * Behaviour: an AF_INET6 TCP socket connects to the peer's IPv4 echo
 * service as ::ffff:10.200.0.1: it is named [::ffff:10.200.0.2]:eph, its
 * peer [::ffff:10.200.0.1]:7001 (len 28); data echoes; SO_DOMAIN stays
 * AF_INET6; shutdown(SHUT_WR) makes the peer close, read gives 0,
 * POLLIN|POLLHUP|POLLRDHUP show, and with both sides closed getpeername is
 * ENOTCONN; close.
 */
#include "scen.h"

int
main(void)
{
    char buf[32];
    int c;

    tr_init();
    c = d_connect6(D_PEER_MAPPED, D_ECHO);
    d_name(c, 1, "name");
    d_peer(c, 0, "peer");
    d_geti(c, SOL_SOCKET, SO_DOMAIN, "SO_DOMAIN");
    T(send(c, "mapped hello", 12, 0));
    T(d_read_full(c, buf, 12));
    NOTE("echo %s", tr_data(buf, 12));
    T(shutdown(c, SHUT_WR));
    T(read(c, buf, sizeof(buf)));
    NOTE("revents %s", tr_pollev(d_wait(c, POLLIN | POLLRDHUP)));
    d_peer(c, 0, "peer after EOF");
    T(close(c));
    return 0;
}
