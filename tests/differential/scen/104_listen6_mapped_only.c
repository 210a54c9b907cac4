/*
 * Behaviour: a listener bound to ::ffff:10.200.0.2:P takes the peer's IPv4
 * connection (accept names [::ffff:10.200.0.1]:eph, len 28; the accepted
 * socket is named [::ffff:10.200.0.2]:P) but the IPv6 one to
 * fd00:200::2:P is refused.
 */
#include "scen.h"

/* Where to listen, and the connect-back that fails and the one that
 * works (105_listen6_native_only.c includes this file with the others). */
#ifndef LISTEN_IP
#define LISTEN_IP D_SUBJ_MAPPED
#define REFUSED_IP D_SUBJ_IP6
#define OK_IP D_SUBJ_IP
#endif

int
main(void)
{
    int port = D_LPORT_BASE + 104;
    struct sockaddr_in6 from;
    socklen_t fl = sizeof(from);
    char buf[8];
    int l, s;

    tr_init();
    l = d_listen6(LISTEN_IP, port, -1);
    d_connect_back_try(REFUSED_IP, port, "send:no");
    d_connect_back_try(OK_IP, port, "send:yes");
    s = TF(accept(l, SA(&from), &fl));
    NOTE("accepted from %s len %d", tr_addr(&from, 1), (int)fl);
    d_name(s, 0, "accepted name");
    T(read(s, buf, sizeof(buf)));
    T(close(s));
    T(close(l));
    return 0;
}
