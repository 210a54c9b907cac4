/*
 * Behaviour: TCP_CONGESTION on a connected socket: it reads the system's
 * default, "reno" can be set and reads back, an unknown name is ENOENT (the
 * old value stays), "cubic" can be set; a 4-byte buffer gets the first 4
 * bytes of the name with length 4; on a UDP socket set is ENOPROTOOPT and
 * get EOPNOTSUPP.
 */
#include "scen.h"

static void
get(int fd)
{
    char n[16];
    socklen_t l = sizeof(n);

    memset(n, 0, sizeof(n));
    if (T(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, n, &l)) == 0)
        NOTE("congestion %s len %d", tr_data(n, strnlen(n, sizeof(n))), (int)l);
}

int
main(void)
{
    struct sockaddr_in b = d_sin(D_SUBJ_IP, 0);
    char n[4];
    socklen_t l = sizeof(n);
    int fd, u;

    tr_init();
    fd = d_connect(D_ECHO);
    get(fd);
    T(setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4));
    get(fd);
    T(setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "nosuchcc", 8));
    get(fd);
    T(setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5));
    get(fd);
    T(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, n, &l));
    NOTE("short %s len %d", tr_data(n, l), (int)l);
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u, SA(&b), sizeof(b)));
    T(setsockopt(u, IPPROTO_TCP, TCP_CONGESTION, "reno", 4));
    get(u);
    T(close(u));
    T(close(fd));
    return 0;
}
