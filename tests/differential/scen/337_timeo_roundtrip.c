/*
 * Behaviour: SO_RCVTIMEO/SO_SNDTIMEO round trips on a connected TCP and a
 * bound UDP socket: {1,500000} reads back, {0,1} reads back rounded up to
 * one tick ({0,4000} with HZ 250), tv_usec 1000000 is EDOM (the old value
 * stays), a negative tv_sec reads {0,0} (no timeout), {0,100000} reads back;
 * a blocking recv with that 100 ms timeout ends in EAGAIN.
 */
#include "scen.h"

static void
to(int fd, int opt, long s, long us)
{
    struct timeval tv = {s, us};
    socklen_t l = sizeof(tv);

    T(setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv)));
    memset(&tv, 0x55, sizeof(tv));
    T(getsockopt(fd, SOL_SOCKET, opt, &tv, &l));
    NOTE("set {%ld,%ld} got {%ld,%ld}", s, us, (long)tv.tv_sec,
         (long)tv.tv_usec);
}

static void
all(int fd)
{
    for (int i = 0; i < 2; i++) {
        int opt = i ? SO_SNDTIMEO : SO_RCVTIMEO;
        to(fd, opt, 1, 500000);
        to(fd, opt, 0, 1);
        to(fd, opt, 0, 1000000);
        to(fd, opt, -5, 0);
        to(fd, opt, 0, 100000);
    }
}

int
main(void)
{
    struct sockaddr_in b = d_sin(D_SUBJ_IP, 0);
    char buf[4];
    int fd, u;

    tr_init();
    fd = d_connect(D_ECHO);
    all(fd);
    T(recv(fd, buf, sizeof(buf), 0));
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    T(bind(u, SA(&b), sizeof(b)));
    all(u);
    T(recv(u, buf, sizeof(buf), 0));
    T(close(u));
    T(close(fd));
    return 0;
}
