/*
 * Behaviour: connect() argument errors on an AF_INET6 TCP socket: a
 * sockaddr_in (AF_INET, 16 bytes), AF_INET with the IPv6 length, lengths
 * 0, 1 and 23, a NULL address, a multicast destination, a link-local one
 * without scope_id, and [::] (which Linux takes as ::1: refused, nothing
 * listens there); AF_UNSPEC on the unconnected socket; the socket then
 * still connects to the peer.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in6 a = d_sin6(D_PEER_IP6, D_ECHO);
    struct sockaddr_in6 wide4, un;
    struct sockaddr_in6 mc = d_sin6("ff0e::1:2", D_ECHO);
    struct sockaddr_in6 ll = d_sin6("fe80::1", D_ECHO);
    struct sockaddr_in6 any = d_sin6("::", D_REFUSED);
    struct sockaddr_in a4 = d_sin(D_PEER_IP, D_ECHO);
    int fd;

    tr_init();
    memset(&wide4, 0, sizeof(wide4));
    memcpy(&wide4, &a4, sizeof(a4));
    memset(&un, 0, sizeof(un));
    un.sin6_family = AF_UNSPEC;
    fd = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(connect(fd, SA(&a4), sizeof(a4)));
    T(connect(fd, SA(&wide4), sizeof(wide4)));
    T(connect(fd, SA(&a), 0));
    T(connect(fd, SA(&a), 1));
    T(connect(fd, SA(&a), 23));
    T(connect(fd, NULL, sizeof(a)));
    T(connect(fd, SA(&mc), sizeof(mc)));
    T(connect(fd, SA(&ll), sizeof(ll)));
    T(connect(fd, SA(&un), sizeof(un)));
    T(close(fd));
    fd = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(connect(fd, SA(&any), sizeof(any)));
    T(close(fd));
    fd = TF(socket(AF_INET6, SOCK_STREAM, 0));
    T(connect(fd, SA(&mc), sizeof(mc)));
    T(connect(fd, SA(&a), 24));
    d_peer(fd, 0, "connected");
    T(close(fd));
    return 0;
}
