/*
 * Behaviour: every accepted socket has kernel state of its own, whatever
 * the library uses to hold its number: a socket option, a receive timeout,
 * file status flags and the fd flags set on one accepted connection are not
 * seen on another; a dup shares them (one open file) and keeps working;
 * fstat reports a socket. Options the stack keeps (TCP_NODELAY, SO_RCVBUF,
 * SO_KEEPALIVE) round-trip per connection too.
 */
#include "scen.h"

#include <sys/stat.h>

static void
timeo(int fd, const char *name)
{
    struct timeval tv;
    socklen_t l = sizeof(tv);

    T(getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &l));
    NOTE("%s SO_RCVTIMEO %ld.%06ld", name, (long)tv.tv_sec, (long)tv.tv_usec);
}

int
main(void)
{
    int port = D_LPORT_BASE + 82;
    struct timeval tv = {1, 250000};
    struct stat st;
    char buf[8];
    int l, a, b, d, fl;

    tr_init();
    l = d_listen(port);
    d_connect_back(port, "send:first");
    d_connect_back(port, "send:other");
    a = TF(accept4(l, NULL, NULL, SOCK_CLOEXEC));
    b = TF(accept(l, NULL, NULL));

    /* Options the kernel keeps. */
    d_seti(a, SOL_SOCKET, SO_PRIORITY, 5);
    d_geti(a, SOL_SOCKET, SO_PRIORITY, "a SO_PRIORITY");
    d_geti(b, SOL_SOCKET, SO_PRIORITY, "b SO_PRIORITY");
    d_seti(b, IPPROTO_IP, IP_TOS, 0x10);
    d_geti(a, IPPROTO_IP, IP_TOS, "a IP_TOS");
    d_geti(b, IPPROTO_IP, IP_TOS, "b IP_TOS");
    T(setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    timeo(a, "a");
    timeo(b, "b");

    /* Options the stack keeps. */
    d_seti(a, IPPROTO_TCP, TCP_NODELAY, 1);
    d_geti(a, IPPROTO_TCP, TCP_NODELAY, "a TCP_NODELAY");
    d_geti(b, IPPROTO_TCP, TCP_NODELAY, "b TCP_NODELAY");
    d_seti(b, SOL_SOCKET, SO_KEEPALIVE, 1);
    d_geti(a, SOL_SOCKET, SO_KEEPALIVE, "a SO_KEEPALIVE");
    d_geti(b, SOL_SOCKET, SO_KEEPALIVE, "b SO_KEEPALIVE");

    /* File status flags and fd flags. */
    T(fcntl(a, F_SETFL, O_NONBLOCK | O_APPEND));
    fl = TF(fcntl(a, F_GETFL));
    NOTE("a flags nonblock=%d append=%d", !!(fl & O_NONBLOCK),
         !!(fl & O_APPEND));
    fl = TF(fcntl(b, F_GETFL));
    NOTE("b flags nonblock=%d append=%d", !!(fl & O_NONBLOCK),
         !!(fl & O_APPEND));
    NOTE("a cloexec=%d", (int)(TF(fcntl(a, F_GETFD)) & FD_CLOEXEC));
    NOTE("b cloexec=%d", (int)(TF(fcntl(b, F_GETFD)) & FD_CLOEXEC));

    /* A dup shares the open file, and the connection still works. */
    d = TF(dup(b));
    d_seti(d, SOL_SOCKET, SO_PRIORITY, 3);
    d_geti(b, SOL_SOCKET, SO_PRIORITY, "b SO_PRIORITY after dup");
    d_geti(a, SOL_SOCKET, SO_PRIORITY, "a SO_PRIORITY after dup");
    T(d_read_full(d, buf, 5));
    NOTE("b got %s", tr_data(buf, 5));
    T(close(d));
    T(d_read_full(a, buf, 5));
    NOTE("a got %s", tr_data(buf, 5));
    T(write(b, "ok", 2));

    T(fstat(a, &st));
    NOTE("a is a socket: %d", S_ISSOCK(st.st_mode));
    T(fstat(b, &st));
    NOTE("b is a socket: %d", S_ISSOCK(st.st_mode));
    T(close(a));
    T(close(b));
    T(close(l));
    return 0;
}
