/*
 * Helpers shared by the fork test programs; see fk.h.
 */
#define _GNU_SOURCE
#include "fk.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int is_child;

void
fk_set_child(void)
{
    is_child = 1;
}

void
fk_die(const char *step, const char *fmt, ...)
{
    va_list ap;

    if (is_child)
        printf("FAIL: child %d: %s: ", (int)getpid(), step);
    else
        printf("FAIL: %s: ", step);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (is_child)
        _exit(1);
    exit(1);
}

void
fk_ok(const char *fmt, ...)
{
    va_list ap;

    printf("ok: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

struct sockaddr_in
fk_addr(const char *ip, int port)
{
    struct sockaddr_in a;

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
        fk_die("address", "bad IPv4 address '%s'", ip);
    return a;
}

int
fk_listen(const char *ip, int port)
{
    struct sockaddr_in a = fk_addr(ip, port);
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        fk_die("listen", "socket: %s", strerror(errno));
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
        fk_die("listen", "SO_REUSEADDR: %s", strerror(errno));
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        fk_die("listen", "bind %s:%d: %s", ip, port, strerror(errno));
    if (listen(fd, 128) < 0)
        fk_die("listen", "listen: %s", strerror(errno));
    return fd;
}

int
fk_connect(const char *ip, int port)
{
    struct sockaddr_in a = fk_addr(ip, port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        fk_die("connect", "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        fk_die("connect", "connect %s:%d: %s", ip, port, strerror(errno));
    return fd;
}

int
fk_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK) /* a pipe or a file */
            n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

ssize_t
fk_read_exact(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

const char *
fk_echo_bulk(int fd, size_t len)
{
    static char msg[160];
    static unsigned char buf[65536];
    size_t sent = 0, got = 0;

    while (got < len) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;
        size_t i;

        int r;

        if (sent < len)
            p.events |= POLLOUT;
        r = poll(&p, 1, 30000);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(msg, sizeof(msg), "poll: %s (sent %zu, got %zu of %zu)",
                     r < 0 ? strerror(errno) : "30 s without progress", sent,
                     got, len);
            return msg;
        }
        if (p.revents & POLLNVAL)
            return "poll: POLLNVAL";
        if ((p.revents & POLLOUT) && sent < len) {
            size_t chunk = len - sent < sizeof(buf) ? len - sent : sizeof(buf);
            for (i = 0; i < chunk; i++)
                buf[i] = fk_pattern(sent + i);
            n = send(fd, buf, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                snprintf(msg, sizeof(msg), "send: %s (sent %zu of %zu)",
                         strerror(errno), sent, len);
                return msg;
            }
            if (n > 0)
                sent += (size_t)n;
        }
        if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
            n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                snprintf(msg, sizeof(msg), "recv: %s (got %zu of %zu)",
                         strerror(errno), got, len);
                return msg;
            }
            if (n == 0) {
                snprintf(msg, sizeof(msg), "EOF after %zu of %zu bytes", got,
                         len);
                return msg;
            }
            for (i = 0; n > 0 && i < (size_t)n; i++)
                if (buf[i] != fk_pattern(got + i)) {
                    snprintf(msg, sizeof(msg), "byte %zu differs", got + i);
                    return msg;
                }
            if (n > 0)
                got += (size_t)n;
        }
    }
    return NULL;
}

const char *
fk_sockname(int fd, int peer)
{
    static char text[INET_ADDRSTRLEN + 8];
    struct sockaddr_in a;
    socklen_t l = sizeof(a);
    int r = peer ? getpeername(fd, (struct sockaddr *)&a, &l)
                 : getsockname(fd, (struct sockaddr *)&a, &l);

    if (r < 0)
        snprintf(text, sizeof(text), "(%s)", strerror(errno));
    else
        inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text));
    return text;
}
