/*
 * Behaviour: other common options read back Linux's defaults and what was
 * set: SO_RCVLOWAT (set/get), SO_SNDLOWAT (read-only: set ENOPROTOOPT),
 * SO_RCVTIMEO/SO_SNDTIMEO (round trip), SO_BROADCAST on UDP,
 * SO_OOBINLINE, IP_TTL (default 64, set 5), IP_TOS.
 */
#include "scen.h"

static void
geti(int fd, int level, int opt, const char *name)
{
    int v = -1;
    socklen_t l = sizeof(v);

    T(getsockopt(fd, level, opt, &v, &l));
    NOTE("%s = %d", name, v);
}

static void
seti(int fd, int level, int opt, int v)
{
    T(setsockopt(fd, level, opt, &v, sizeof(v)));
}

int
main(void)
{
    struct timeval tv = {2, 500000}, got;
    socklen_t gl = sizeof(got);
    int s, u;

    tr_init();
    s = TF(socket(AF_INET, SOCK_STREAM, 0));
    geti(s, SOL_SOCKET, SO_RCVLOWAT, "SO_RCVLOWAT");
    seti(s, SOL_SOCKET, SO_RCVLOWAT, 10);
    geti(s, SOL_SOCKET, SO_RCVLOWAT, "SO_RCVLOWAT");
    geti(s, SOL_SOCKET, SO_SNDLOWAT, "SO_SNDLOWAT");
    seti(s, SOL_SOCKET, SO_SNDLOWAT, 10);
    T(getsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &got, &gl));
    NOTE("SO_RCVTIMEO %ld.%06ld", (long)got.tv_sec, (long)got.tv_usec);
    T(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    T(setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
    gl = sizeof(got);
    T(getsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &got, &gl));
    NOTE("SO_SNDTIMEO %ld.%06ld", (long)got.tv_sec, (long)got.tv_usec);
    geti(s, SOL_SOCKET, SO_OOBINLINE, "SO_OOBINLINE");
    seti(s, SOL_SOCKET, SO_OOBINLINE, 1);
    geti(s, SOL_SOCKET, SO_OOBINLINE, "SO_OOBINLINE");
    geti(s, IPPROTO_IP, IP_TTL, "IP_TTL");
    seti(s, IPPROTO_IP, IP_TTL, 5);
    geti(s, IPPROTO_IP, IP_TTL, "IP_TTL");
    seti(s, IPPROTO_IP, IP_TTL, 256);
    geti(s, IPPROTO_IP, IP_TOS, "IP_TOS");
    seti(s, IPPROTO_IP, IP_TOS, 0x10);
    geti(s, IPPROTO_IP, IP_TOS, "IP_TOS");
    T(close(s));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    geti(u, SOL_SOCKET, SO_BROADCAST, "SO_BROADCAST");
    seti(u, SOL_SOCKET, SO_BROADCAST, 1);
    geti(u, SOL_SOCKET, SO_BROADCAST, "SO_BROADCAST");
    T(close(u));
    return 0;
}
