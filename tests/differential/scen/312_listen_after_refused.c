/*
 * Behaviour: a TCP socket whose connect was refused keeps its local
 * address and ephemeral port (getsockname) and can listen afterwards
 * (SO_ACCEPTCONN 1) or connect again; a socket that listened and was
 * closed frees its port for another listener at once (SO_REUSEADDR).
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in r = d_sin(D_PEER_IP, D_REFUSED);
    int fd, l;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(connect(fd, SA(&r), sizeof(r)));
    d_name(fd, 1, "name");
    T(listen(fd, 4));
    d_geti(fd, SOL_SOCKET, SO_ACCEPTCONN, "SO_ACCEPTCONN");
    d_name(fd, 1, "name");
    T(close(fd));
    l = d_listen(D_LPORT_BASE + 312);
    T(close(l));
    l = d_listen(D_LPORT_BASE + 312);
    d_connect_back(D_LPORT_BASE + 312, "hold");
    fd = TF(accept(l, NULL, NULL));
    T(close(fd));
    T(close(l));
    return 0;
}
