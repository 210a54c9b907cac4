/*
 * Behaviour: a fresh AF_INET6 socket (TCP and UDP) is named [::]:0 with
 * length 28 (sizeof(struct sockaddr_in6)); getpeername is ENOTCONN; a
 * buffer of sizeof(struct sockaddr_in) (16) is filled with the first 16
 * bytes and the full length 28 is reported; a zero length copies nothing.
 */
#include "scen.h"

int
main(void)
{
    struct sockaddr_in6 a;
    unsigned char small[16];
    socklen_t al;
    int t, u;

    tr_init();
    t = TF(socket(AF_INET6, SOCK_STREAM, 0));
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    d_name(t, 0, "tcp name");
    d_name(u, 0, "udp name");
    d_peer(t, 0, "tcp peer");
    d_peer(u, 0, "udp peer");
    memset(small, 0xee, sizeof(small));
    al = sizeof(small);
    T(getsockname(t, SA(small), &al));
    NOTE("short buffer len %d family %d port %02x%02x flow %02x%02x%02x%02x "
         "addr0 %02x",
         (int)al, small[0] | small[1] << 8, small[2], small[3], small[4],
         small[5], small[6], small[7], small[8]);
    memset(&a, 0xee, sizeof(a));
    al = 0;
    T(getsockname(u, SA(&a), &al));
    NOTE("zero buffer len %d first byte %02x", (int)al,
         ((unsigned char *)&a)[0]);
    T(close(t));
    T(close(u));
    return 0;
}
