/*
 * Behaviour: other common options read back Linux's defaults and what was
 * set: SO_RCVLOWAT (set/get), SO_SNDLOWAT (read-only: set ENOPROTOOPT),
 * SO_RCVTIMEO/SO_SNDTIMEO (round trip), SO_BROADCAST on UDP,
 * SO_OOBINLINE, IP_TTL (default 64, set 5), IP_TOS.
 */
#include "scen.h"

int
main(void)
{
    struct timeval tv = {2, 500000}, got;
    socklen_t gl = sizeof(got);
    int s, u;

    tr_init();
    s = TF(socket(AF_INET, SOCK_STREAM, 0));
    d_geti(s, SOL_SOCKET, SO_RCVLOWAT, "SO_RCVLOWAT");
    d_seti(s, SOL_SOCKET, SO_RCVLOWAT, 10);
    d_geti(s, SOL_SOCKET, SO_RCVLOWAT, "SO_RCVLOWAT");
    d_geti(s, SOL_SOCKET, SO_SNDLOWAT, "SO_SNDLOWAT");
    d_seti(s, SOL_SOCKET, SO_SNDLOWAT, 10);
    T(getsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &got, &gl));
    NOTE("SO_RCVTIMEO %ld.%06ld", (long)got.tv_sec, (long)got.tv_usec);
    T(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    T(setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
    gl = sizeof(got);
    T(getsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &got, &gl));
    NOTE("SO_SNDTIMEO %ld.%06ld", (long)got.tv_sec, (long)got.tv_usec);
    d_geti(s, SOL_SOCKET, SO_OOBINLINE, "SO_OOBINLINE");
    d_seti(s, SOL_SOCKET, SO_OOBINLINE, 1);
    d_geti(s, SOL_SOCKET, SO_OOBINLINE, "SO_OOBINLINE");
    d_geti(s, IPPROTO_IP, IP_TTL, "IP_TTL");
    d_seti(s, IPPROTO_IP, IP_TTL, 5);
    d_geti(s, IPPROTO_IP, IP_TTL, "IP_TTL");
    d_seti(s, IPPROTO_IP, IP_TTL, 256);
    d_geti(s, IPPROTO_IP, IP_TOS, "IP_TOS");
    d_seti(s, IPPROTO_IP, IP_TOS, 0x10);
    d_geti(s, IPPROTO_IP, IP_TOS, "IP_TOS");
    T(close(s));

    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    d_geti(u, SOL_SOCKET, SO_BROADCAST, "SO_BROADCAST");
    d_seti(u, SOL_SOCKET, SO_BROADCAST, 1);
    d_geti(u, SOL_SOCKET, SO_BROADCAST, "SO_BROADCAST");
    T(close(u));
    return 0;
}
