/*
 * Behaviour: a dual-stack listener on [::]:P accepts the peer's IPv6
 * connection to fd00:200::2:P: accept names the client
 * [fd00:200::1]:eph with len 28 (flowinfo 0, scope 0), the accepted
 * socket is named [fd00:200::2]:P with the same peer name, and echoes
 * data; then an IPv4 client on the same listener, to show both kinds
 * in one queue.
 */
#include "scen.h"

int
main(void)
{
    int port = D_LPORT_BASE + 102;
    struct sockaddr_in6 from;
    socklen_t fl = sizeof(from);
    char buf[16];
    int l, s;

    tr_init();
    l = d_listen6("::", port, -1);
    d_connect_back_to(D_SUBJ_IP6, port, "echo");
    memset(&from, 0, sizeof(from));
    s = TF(accept(l, SA(&from), &fl));
    NOTE("accepted from %s len %d", tr_addr(&from, 1), (int)fl);
    d_name(s, 0, "accepted name");
    d_peer(s, 1, "accepted peer");
    T(send(s, "via v6", 6, 0));
    T(d_read_full(s, buf, 6));
    NOTE("echo %s", tr_data(buf, 6));
    T(shutdown(s, SHUT_WR));
    T(read(s, buf, sizeof(buf)));
    T(close(s));

    d_connect_back_to(D_SUBJ_IP6, port, "send:six");
    d_connect_back_to(D_SUBJ_IP, port, "send:four");
    for (int i = 0; i < 2; i++) {
        fl = sizeof(from);
        s = TF(accept(l, SA(&from), &fl));
        NOTE("accepted from %s", tr_addr(&from, 1));
        T(read(s, buf, sizeof(buf)));
        T(close(s));
    }
    T(close(l));
    return 0;
}
