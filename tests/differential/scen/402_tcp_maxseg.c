/*
 * Behaviour: TCP_MAXSEG reads 536 on a fresh socket and the value set
 * before connect/listen; on a connected or accepted socket it reads the
 * MSS in use (Linux's mss_cache: the smaller of both sides' MSS, less the
 * 12 bytes of the timestamp option when in use: 1448 on a 1500 MTU). A
 * value set before connect or listen clamps the MSS the SYN (SYN-ACK)
 * advertises and the segments sent; the wire mode compares the MSS
 * options and the largest segment of each direction.
 */
#include "scen.h"

static char out[4000], in[4000];

static void
echo_some(int fd)
{
    T(d_write_full(fd, out, sizeof(out)));
    T(d_read_full(fd, in, sizeof(in)));
    NOTE("same %d", memcmp(in, out, sizeof(in)) == 0);
}

/* The peer connects to l's port; the accepted socket's MSS, an echo. */
static void
accept_echo(int l, int port, const char *what)
{
    int c;

    d_connect_back(port, "echo");
    c = TF(accept(l, NULL, NULL));
    d_geti(c, IPPROTO_TCP, TCP_MAXSEG, what);
    echo_some(c);
    T(close(c));
    T(close(l));
}

int
main(void)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, D_ECHO);
    struct sockaddr_in la = d_sin(D_SUBJ_IP, D_LPORT_BASE + 402);
    int v = 1000, one = 1, fd, l;

    tr_init();
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (char)d_pattern(i);
    fd = TF(socket(AF_INET, SOCK_STREAM, 0));
    d_geti(fd, IPPROTO_TCP, TCP_MAXSEG, "TCP_MAXSEG fresh");
    T(setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &v, sizeof(v)));
    d_geti(fd, IPPROTO_TCP, TCP_MAXSEG, "TCP_MAXSEG set");
    T(connect(fd, SA(&a), sizeof(a)));
    d_geti(fd, IPPROTO_TCP, TCP_MAXSEG, "TCP_MAXSEG connected");
    echo_some(fd);
    T(close(fd));

    fd = d_connect(D_ECHO);
    d_geti(fd, IPPROTO_TCP, TCP_MAXSEG, "TCP_MAXSEG connected default");
    echo_some(fd);
    T(close(fd));

    l = TF(socket(AF_INET, SOCK_STREAM, 0));
    T(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    T(bind(l, SA(&la), sizeof(la)));
    v = 1200;
    T(setsockopt(l, IPPROTO_TCP, TCP_MAXSEG, &v, sizeof(v)));
    T(listen(l, 8));
    d_geti(l, IPPROTO_TCP, TCP_MAXSEG, "TCP_MAXSEG listener");
    accept_echo(l, D_LPORT_BASE + 402, "TCP_MAXSEG accepted");

    l = d_listen(D_LPORT_BASE + 403);
    accept_echo(l, D_LPORT_BASE + 403, "TCP_MAXSEG accepted default");
    return 0;
}
