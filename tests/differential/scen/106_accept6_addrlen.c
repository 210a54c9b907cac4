/*
 * Behaviour: accept's address argument on an AF_INET6 listener, for an
 * IPv6 client: NULL address (fine), a zero length (nothing written, len
 * 28), sizeof(struct sockaddr_in) (16 bytes written, len 28), a larger
 * sockaddr_storage (len 28), and accept4 with SOCK_NONBLOCK filling it.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 106;
    struct sockaddr_storage ss;
    unsigned char *b = (unsigned char *)&ss;
    socklen_t sl;
    int l, s, i;

    tr_init();
    l = d_listen6("::", port, -1);
    for (i = 0; i < 5; i++)
        d_connect_back_to(D_SUBJ_IP6, port, "hold");
    s = TF(accept(l, NULL, NULL));
    T(close(s));
    memset(&ss, 0xee, sizeof(ss));
    sl = 0;
    s = TF(accept(l, SA(&ss), &sl));
    NOTE("zero len -> %d first byte %02x", (int)sl, b[0]);
    T(close(s));
    memset(&ss, 0xee, sizeof(ss));
    sl = sizeof(struct sockaddr_in);
    s = TF(accept(l, SA(&ss), &sl));
    NOTE("len 16 -> %d family %d addr[0..1] %02x%02x byte16 %02x", (int)sl,
         b[0] | b[1] << 8, b[8], b[9], b[16]);
    T(close(s));
    memset(&ss, 0xee, sizeof(ss));
    sl = sizeof(ss);
    s = TF(accept(l, SA(&ss), &sl));
    NOTE("storage -> %d %s byte28 %02x", (int)sl, tr_addr(&ss, 1), b[28]);
    T(close(s));
    sl = sizeof(ss);
    s = TF(accept4(l, SA(&ss), &sl, SOCK_NONBLOCK));
    NOTE("accept4 -> %d %s", (int)sl, tr_addr(&ss, 1));
    T(fcntl(s, F_GETFL) & O_NONBLOCK);
    T(close(s));
    T(close(l));
    return 0;
}
