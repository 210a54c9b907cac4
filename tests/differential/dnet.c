/*
 * Network helpers shared by the differential scenarios: connect to a peer
 * service, open a listener, ask the peer to connect back (to either of the
 * subject's addresses), exact-length I/O, poll waits, the FNV-1a hash of
 * bulk data, IPv6 forms (at the end). Setup failures end the scenario with
 * a trace line and exit status 3, so a broken environment shows clearly.
 */
#define _GNU_SOURCE
#include "dnet.h"
#include "trace.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

struct sockaddr_in
d_sin(const char *ip, int port)
{
    struct sockaddr_in a;

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, ip, &a.sin_addr);
    return a;
}

void
d_fatal(int line, const char *what)
{
    printf("%d: FATAL %s errno=%s\n", line, what, tr_errname(errno));
    fflush(stdout);
    exit(3);
}

int
d_connect(int port)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        d_fatal(__LINE__, "socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        d_fatal(__LINE__, "connect to peer");
    NOTE("connected to peer port %d", port);
    return fd;
}

int
d_connect_rst(void)
{
    int fd = d_connect(D_RST);

    if (send(fd, "r", 1, MSG_NOSIGNAL) != 1)
        d_fatal(__LINE__, "send go-ahead to the RST peer");
    NOTE("asked the peer to reset");
    return fd;
}

int
d_listen(int port)
{
    struct sockaddr_in a = d_sin(D_SUBJ_IP, port);
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        d_fatal(__LINE__, "socket");
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
        d_fatal(__LINE__, "SO_REUSEADDR");
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        d_fatal(__LINE__, "bind listener");
    if (listen(fd, 16) < 0)
        d_fatal(__LINE__, "listen");
    NOTE("listening on subject port %d", port);
    return fd;
}

int
d_connect_back(int port, const char *mode)
{
    return d_connect_back_to(D_SUBJ_IP, port, mode);
}

/*
 * One control request: the peer connects to ip:port and runs mode. The
 * request line is "PORT MODE" for D_SUBJ_IP (the only form before IPv6:
 * the peer connects to the address it was started with) or "[IP] PORT
 * MODE". Returns 1 when the peer's connect succeeded, 0 when it failed
 * (its reply "err ENAME\n" left in @p reply); exits on anything else. The
 * line numbers of d_connect_back_to()'s notes are those the notes of
 * d_connect_back() had before IPv6: old traces stay the same.
 */
static int ctrl_request(const char *ip, int port, const char *mode, char *reply,
                        size_t len);

int
d_connect_back_to(const char *ip, int port, const char *mode)
{
    char reply[64];

    if (!ctrl_request(ip, port, mode, reply, sizeof(reply))) {
        printf("%d: FATAL connect-back %s %d %s: %s\n", __LINE__, ip, port,
               mode, tr_data(reply, strlen(reply)));
        exit(3);
    }
    if (strcmp(ip, D_SUBJ_IP) == 0)
        NOTE("peer connected back to port %d (%s)", port, mode);
    else
        NOTE("peer connected back to [%s]:%d (%s)", ip, port, mode);
    return 0;
}

ssize_t
d_read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return got ? (ssize_t)got : -errno;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

ssize_t
d_write_full(int fd, const void *buf, size_t n)
{
    size_t put = 0;

    while (put < n) {
        ssize_t r = send(fd, (const char *)buf + put, n - put, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        put += (size_t)r;
    }
    return (ssize_t)n;
}

int
d_wait(int fd, int events)
{
    struct pollfd p = {.fd = fd, .events = (short)events};

    for (;;) {
        int r = poll(&p, 1, -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            d_fatal(__LINE__, "poll");
        if (r > 0)
            return p.revents;
    }
}

uint32_t
d_fnv(uint32_t h, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    size_t i;

    for (i = 0; i < len; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

volatile sig_atomic_t d_alarms;

static void
on_alarm(int sig)
{
    (void)sig;
    d_alarms++;
}

void
d_alarm_arm(int restart)
{
    struct sigaction sa;
    struct itimerval it = {{0, 0}, {0, 100000}};

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &it, NULL);
}

struct sockaddr_in6
d_sin6(const char *ip, int port)
{
    struct sockaddr_in6 a;

    memset(&a, 0, sizeof(a));
    a.sin6_family = AF_INET6;
    a.sin6_port = htons((uint16_t)port);
    if (inet_pton(AF_INET6, ip, &a.sin6_addr) != 1) {
        printf("%d: FATAL bad IPv6 address %s\n", __LINE__, ip);
        exit(3);
    }
    return a;
}

struct sockaddr_in6
d_sin6_mapped(const char *ip4, int port)
{
    struct sockaddr_in6 a = d_sin6("::", port);
    struct in_addr v4;

    if (inet_pton(AF_INET, ip4, &v4) != 1) {
        printf("%d: FATAL bad IPv4 address %s\n", __LINE__, ip4);
        exit(3);
    }
    a.sin6_addr.s6_addr[10] = 0xff;
    a.sin6_addr.s6_addr[11] = 0xff;
    memcpy(&a.sin6_addr.s6_addr[12], &v4, 4);
    return a;
}

int
d_is_mapped(const struct sockaddr_in6 *a)
{
    return IN6_IS_ADDR_V4MAPPED(&a->sin6_addr);
}

int
d_connect6(const char *ip, int port)
{
    struct sockaddr_in6 a = d_sin6(ip, port);
    int fd = socket(AF_INET6, SOCK_STREAM, 0);

    if (fd < 0)
        d_fatal(__LINE__, "socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        d_fatal(__LINE__, "connect to peer");
    NOTE("connected to peer [%s]:%d", ip, port);
    return fd;
}

int
d_listen6(const char *ip, int port, int v6only)
{
    struct sockaddr_in6 a = d_sin6(ip, port);
    int one = 1;
    int fd = socket(AF_INET6, SOCK_STREAM, 0);

    if (fd < 0)
        d_fatal(__LINE__, "socket");
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
        d_fatal(__LINE__, "SO_REUSEADDR");
    if (v6only >= 0 &&
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) < 0)
        d_fatal(__LINE__, "IPV6_V6ONLY");
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        d_fatal(__LINE__, "bind listener");
    if (listen(fd, 16) < 0)
        d_fatal(__LINE__, "listen");
    NOTE("listening on subject [%s]:%d%s", ip, port,
         v6only < 0 ? "" : (v6only ? " v6only" : " dual"));
    return fd;
}

int
d_connect_back_try(const char *ip, int port, const char *mode)
{
    char reply[64];

    if (!ctrl_request(ip, port, mode, reply, sizeof(reply))) {
        reply[strcspn(reply, "\n")] = '\0';
        NOTE("peer could not connect back to [%s]:%d: %s", ip, port, reply + 4);
        return -1;
    }
    NOTE("peer connected back to [%s]:%d (%s)", ip, port, mode);
    return 0;
}

/* See its declaration above d_connect_back_to(). */
static int
ctrl_request(const char *ip, int port, const char *mode, char *reply,
             size_t len)
{
    char line[256];
    size_t n = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = d_sin(D_PEER_IP, D_CTRL);

    if (fd < 0)
        d_fatal(__LINE__, "socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        d_fatal(__LINE__, "connect to peer control");
    if (strcmp(ip, D_SUBJ_IP) == 0)
        snprintf(line, sizeof(line), "%d %s\n", port, mode);
    else
        snprintf(line, sizeof(line), "[%s] %d %s\n", ip, port, mode);
    if (d_write_full(fd, line, strlen(line)) < 0)
        d_fatal(__LINE__, "write control");
    while (n < len - 1) {
        ssize_t r = read(fd, reply + n, 1);
        if (r <= 0)
            break;
        if (reply[n++] == '\n')
            break;
    }
    reply[n] = '\0';
    close(fd);
    if (strcmp(reply, "ok\n") == 0)
        return 1;
    if (strncmp(reply, "err ", 4) == 0)
        return 0;
    printf("%d: FATAL connect-back %s %d %s: %s\n", __LINE__, ip, port, mode,
           tr_data(reply, n));
    exit(3);
}
