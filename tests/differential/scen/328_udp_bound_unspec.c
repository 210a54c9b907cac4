/*
 * Behaviour: a UDP socket bound explicitly to an address and port and
 * then connected keeps both after an AF_UNSPEC disconnect (the bind locks
 * them): named 10.200.0.2:P before and after, getpeername ENOTCONN after,
 * and a datagram from the peer to P still arrives (sendto echo, reply
 * read with recvfrom).
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in b = d_sin(D_SUBJ_IP, D_LPORT_BASE + 328);
    struct sockaddr_in e = d_sin(D_PEER_IP, D_UDP_ECHO);
    struct sockaddr_in u = {.sin_family = AF_UNSPEC};
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    char buf[8];
    int fd;

    tr_init();
    fd = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(fd, SA(&b), sizeof(b)));
    T(connect(fd, SA(&e), sizeof(e)));
    d_name(fd, 0, "connected");
    T(connect(fd, SA(&u), sizeof(u)));
    d_name(fd, 0, "disconnected");
    d_peer(fd, 0, "peer");
    T(sendto(fd, "back", 4, 0, SA(&e), sizeof(e)));
    T(recvfrom(fd, buf, sizeof(buf), 0, SA(&from), &fl));
    NOTE("from %s", tr_addr(&from, 0));
    T(close(fd));
    return 0;
}
