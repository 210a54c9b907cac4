/*
 * Behaviour: close() of a socket whose connect is still in SYN-SENT (the
 * peer's deaf port never answers the SYN) ends the attempt without a
 * segment: Linux sends no RST (RFC 9293 3.10.4: a CLOSE in SYN-SENT deletes
 * the TCB), and no SYN retransmission follows. The wire mode checks that
 * the flow is a lone SYN in both worlds.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, D_DEAF);
    struct pollfd p;
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    T(connect(fd, SA(&a), sizeof(a)));
    p = (struct pollfd){.fd = fd, .events = POLLOUT};
    T(poll(&p, 1, 50));
    NOTE("revents %s", tr_pollev(p.revents));
    T(close(fd));
    return 0;
}
