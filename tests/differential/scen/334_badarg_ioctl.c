/*
 * Behaviour: ioctl on accelerated sockets (connected TCP, listener, bound
 * UDP): an unknown socket request is ENODEV, FIONREAD and SIOCOUTQ with a
 * NULL argument EFAULT (EINVAL on the listener, checked first), FIONBIO with
 * NULL EFAULT, SIOCOUTQNSD 0 on TCP, EINVAL on a listener and ENOTTY on UDP,
 * SIOCINQ 0 (EINVAL on a listener), SIOCGSTAMP without a received timestamp
 * ENOENT.
 */
#include "scen.h"

#include <linux/sockios.h>

static void
probe(int fd, const char *what)
{
    int v = -1;

    NOTE("%s", what);
    T(ioctl(fd, 0x89ff, &v));
    T(ioctl(fd, FIONREAD, NULL));
    T(ioctl(fd, SIOCOUTQ, NULL));
    T(ioctl(fd, FIONBIO, NULL));
    if (T(ioctl(fd, SIOCOUTQNSD, &v)) == 0)
        NOTE("SIOCOUTQNSD = %d", v);
    if (T(ioctl(fd, SIOCINQ, &v)) == 0)
        NOTE("SIOCINQ = %d", v);
    struct timeval tv;
    T(ioctl(fd, SIOCGSTAMP, &tv));
}

int
main(void)
{
    struct sockaddr_in b = d_sin(D_SUBJ_IP, 0);
    int fd, l, u;

    tr_init();
    fd = d_connect(D_ECHO);
    l = d_listen(D_LPORT_BASE + 334);
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u, SA(&b), sizeof(b)));
    probe(fd, "tcp");
    probe(l, "listener");
    probe(u, "udp");
    T(close(u));
    T(close(l));
    T(close(fd));
    return 0;
}
