/*
 * Behaviour: socket() with SOCK_NONBLOCK|SOCK_CLOEXEC sets O_NONBLOCK and
 * FD_CLOEXEC; an unknown type flag or type fails with EINVAL, an unknown
 * family with EAFNOSUPPORT, a protocol not matching the type with
 * EPROTONOSUPPORT; IPPROTO_TCP/IPPROTO_UDP explicit work.
 */
#include "scen.h"

static void
flags(int fd)
{
    T(fcntl(fd, F_GETFL) & O_NONBLOCK);
    T(fcntl(fd, F_GETFD));
}

int
main(void)
{
    int s;

    tr_init();
    s = TF(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    flags(s);
    T(close(s));
    s = TF(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, IPPROTO_UDP));
    flags(s);
    T(close(s));
    s = TF(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP));
    flags(s);
    T(close(s));
    T(socket(AF_INET, SOCK_STREAM | 0x100000, 0));
    T(socket(AF_INET, 99, 0));
    T(socket(12345, SOCK_STREAM, 0));
    T(socket(AF_INET, SOCK_STREAM, IPPROTO_UDP));
    T(socket(AF_INET, SOCK_DGRAM, IPPROTO_TCP));
    T(socket(AF_INET, SOCK_STREAM, 200));
    return 0;
}
