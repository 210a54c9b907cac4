/*
 * Behaviour: a dual-stack listener on [::]:P accepts the peer's IPv4
 * connection to 10.200.0.2:P: accept names the client
 * [::ffff:10.200.0.1]:eph with len 28, the accepted socket is AF_INET6
 * (SO_DOMAIN), named [::ffff:10.200.0.2]:P with the same peer name,
 * inherits IPV6_V6ONLY 0, and echoes data; a short accept buffer (16)
 * gets the first bytes and len 28.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 101;
    struct sockaddr_in6 from;
    unsigned char small[16];
    socklen_t fl = sizeof(from);
    char buf[16];
    int l, s, s2;

    tr_init();
    l = d_listen6("::", port, -1);
    d_connect_back_to(D_SUBJ_IP, port, "echo");
    memset(&from, 0, sizeof(from));
    s = TF(accept(l, SA(&from), &fl));
    NOTE("accepted from %s len %d", tr_addr(&from, 1), (int)fl);
    d_geti(s, SOL_SOCKET, SO_DOMAIN, "accepted SO_DOMAIN");
    d_geti(s, IPPROTO_IPV6, IPV6_V6ONLY, "accepted IPV6_V6ONLY");
    d_name(s, 0, "accepted name");
    d_peer(s, 1, "accepted peer");
    T(send(s, "via v4", 6, 0));
    T(d_read_full(s, buf, 6));
    NOTE("echo %s", tr_data(buf, 6));
    T(shutdown(s, SHUT_WR));
    T(read(s, buf, sizeof(buf)));
    T(close(s));

    d_connect_back_to(D_SUBJ_IP, port, "hold");
    fl = sizeof(small);
    memset(small, 0, sizeof(small));
    s2 = TF(accept(l, SA(small), &fl));
    NOTE("short accept len %d family %d addr[0..7] "
         "%02x%02x%02x%02x%02x%02x%02x%02x",
         (int)fl, small[0] | small[1] << 8, small[8], small[9], small[10],
         small[11], small[12], small[13], small[14], small[15]);
    T(close(s2));
    T(close(l));
    return 0;
}
