/*
 * Network helpers shared by the differential scenarios: connect to a peer
 * service, open a listener, ask the peer to connect back, exact-length
 * reads and writes, waiting for poll events, and the FNV-1a hash used to
 * check bulk data. Setup failures end the scenario with a trace line and
 * exit status 3, so a broken environment shows up as a clear difference.
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
    char line[256], reply[64];
    size_t n = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = d_sin(D_PEER_IP, D_CTRL);

    if (fd < 0)
        d_fatal(__LINE__, "socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        d_fatal(__LINE__, "connect to peer control");
    snprintf(line, sizeof(line), "%d %s\n", port, mode);
    if (d_write_full(fd, line, strlen(line)) < 0)
        d_fatal(__LINE__, "write control");
    while (n < sizeof(reply) - 1) {
        ssize_t r = read(fd, reply + n, 1);
        if (r <= 0)
            break;
        if (reply[n++] == '\n')
            break;
    }
    reply[n] = '\0';
    close(fd);
    if (strcmp(reply, "ok\n") != 0) {
        printf("%d: FATAL connect-back %d %s: %s\n", __LINE__, port, mode,
               tr_data(reply, n));
        exit(3);
    }
    NOTE("peer connected back to port %d (%s)", port, mode);
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
