/*
 * Template of the int socket option round trips (scenarios 247-280): one
 * option is read (its default) and set to each of a list of values, each
 * set followed by a read, on every kind of socket the stack serves: a
 * bound TCP socket, a listener, the connection accepted from it (which
 * first shows what it inherited from the listener's last value), a
 * connected TCP socket and a bound UDP socket. A scenario file defines
 *   LEVEL, OPT   the option
 *   VALS         the values, as an int array initialiser {a, b, ...}
 *   LPORT        the subject port to listen on
 *   FAM6         (optional) AF_INET6 sockets over native IPv6
 * and includes this file. A short option length (sizeof(int) - 1) is
 * tried once per socket too.
 */
#include "tmpl_common.h"

#define O_STR2(x) #x
#define O_STR(x) O_STR2(x)

static void
o_get(int fd, const char *what)
{
    int v = -12345;
    socklen_t l = sizeof(v);

    if (T(getsockopt(fd, LEVEL, OPT, &v, &l)) == 0)
        NOTE("%s: %s = %d (len %d)", what, O_STR(OPT), v, (int)l);
}

static void
o_round(int fd, const char *what)
{
    static const int vals[] = VALS;
    int v = 1;

    o_get(fd, what);
    T(setsockopt(fd, LEVEL, OPT, &v, sizeof(v) - 1));
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        NOTE("set %d", vals[i]);
        T(setsockopt(fd, LEVEL, OPT, &vals[i], sizeof(vals[i])));
        o_get(fd, what);
    }
}

int
main(void)
{
    struct sockaddr_in6 a;
    socklen_t al;
    int fd, l, c, one = 1;

    tr_init();
    fd = TF(socket(FAM, SOCK_STREAM, 0));
    al = t_addr(&a, S_SUBJ, 0);
    T(bind(fd, SA(&a), al));
    o_round(fd, "bound");
    T(close(fd));

    l = TF(socket(FAM, SOCK_STREAM, 0));
    T(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    al = t_addr(&a, S_SUBJ, LPORT);
    T(bind(l, SA(&a), al));
    T(listen(l, 4));
    o_round(l, "listener");
    d_connect_back_to(S_SUBJ, LPORT, "hold");
    c = TF(accept(l, NULL, NULL));
    o_get(c, "accepted (inherited)");
    o_round(c, "accepted");
    T(close(c));
    T(close(l));

    fd = TF(socket(FAM, SOCK_STREAM, 0));
    al = t_addr(&a, S_PEER, D_ECHO);
    T(connect(fd, SA(&a), al));
    o_round(fd, "connected");
    T(send(fd, "ping", 4, 0));
    T(d_read_full(fd, &c, 4));
    T(close(fd));

    fd = TF(socket(FAM, SOCK_DGRAM, 0));
    al = t_addr(&a, S_SUBJ, 0);
    T(bind(fd, SA(&a), al));
    o_round(fd, "udp");
    T(close(fd));
    return 0;
}
