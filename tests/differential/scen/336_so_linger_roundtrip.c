/*
 * Behaviour: SO_LINGER round trips on a connected TCP socket, a listener and
 * a bound UDP socket: {0,0} by default; {1,5} reads back {1,5}, {7,3} reads
 * {1,3} (onoff normalised), {0,9} leaves the time as it was ({0,3}), {1,-1}
 * reads Linux's clamp of a negative time, {1,2} reads back; the accepted
 * connection inherits the listener's {1,2}.
 */
#include "scen.h"

static void
lg(int fd, int on, int sec)
{
    struct linger l = {on, sec};
    socklen_t ll = sizeof(l);

    T(setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
    memset(&l, 0x55, sizeof(l));
    T(getsockopt(fd, SOL_SOCKET, SO_LINGER, &l, &ll));
    NOTE("set {%d,%d} got {%d,%d} len %d", on, sec, l.l_onoff, l.l_linger,
         (int)ll);
}

static void
all(int fd)
{
    lg(fd, 0, 0);
    lg(fd, 1, 5);
    lg(fd, 7, 3);
    lg(fd, 0, 9);
    lg(fd, 1, -1);
    lg(fd, 1, 2);
}

int
main(void)
{
    struct sockaddr_in b = d_sin(D_SUBJ_IP, 0);
    struct linger l;
    socklen_t ll = sizeof(l);
    int fd, lfd, c, u;

    tr_init();
    fd = d_connect(D_ECHO);
    all(fd);
    lfd = d_listen(D_LPORT_BASE + 336);
    all(lfd);
    d_connect_back(D_LPORT_BASE + 336, "hold");
    c = TF(accept(lfd, NULL, NULL));
    T(getsockopt(c, SOL_SOCKET, SO_LINGER, &l, &ll));
    NOTE("accepted {%d,%d}", l.l_onoff, l.l_linger);
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u, SA(&b), sizeof(b)));
    all(u);
    T(close(u));
    T(close(c));
    T(close(lfd));
    lg(fd, 0, 0);
    T(close(fd));
    return 0;
}
