/*
 * fallback_probe: the program behind the kernel_fallback integration test.
 * Run under accel-run in the accelerated netns, it opens an accelerated TCP
 * connection to an echo server on the kernel peer and, while that connection
 * stays open and in use, exercises what must stay on the kernel: a TCP
 * connection to an echo server on 127.0.0.1, a Unix stream socket (listen,
 * connect, accept) and a Unix datagram socketpair, a pipe and a regular file.
 * It then waits on the accelerated and kernel fds together with poll, epoll
 * and select (mixed sets), and pushes 1 MB through the accelerated
 * connection in non-blocking mode driven by poll. Each step prints
 * "ok: <step>" on stdout; the first failure prints "FAIL: <step>: <why>" and
 * exits 1.
 *
 * usage: fallback_probe PEER_IP PEER_PORT LOCAL_IP LOOPBACK_PORT WORKDIR
 * (LOCAL_IP: the address getsockname must report for the accelerated side)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define BIG_LEN (1024 * 1024)

static void
die(const char *step, const char *fmt, ...)
{
    va_list ap;

    printf("FAIL: %s: ", step);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(1);
}

static void
ok(const char *step)
{
    printf("ok: %s\n", step);
    fflush(stdout);
}

static int
tcp_connect(const char *step, const char *ip, int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    int fd;

    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
        die(step, "bad address %s", ip);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        die(step, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        die(step, "connect %s:%d: %s", ip, port, strerror(errno));
    return fd;
}

static void
write_all(const char *step, int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die(step, "write: %s", n < 0 ? strerror(errno) : "returned 0");
        p += n;
        len -= (size_t)n;
    }
}

static void
read_exact(const char *step, int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die(step, "read: %s", strerror(errno));
        if (n == 0)
            die(step, "unexpected EOF with %zu bytes missing", len);
        p += n;
        len -= (size_t)n;
    }
}

/* Write msg to fd and expect the same bytes back (echo server). */
static void
echo_roundtrip(const char *step, int fd, const char *msg)
{
    char buf[256];
    size_t len = strlen(msg);

    write_all(step, fd, msg, len);
    read_exact(step, fd, buf, len);
    if (memcmp(buf, msg, len) != 0)
        die(step, "echo differs");
}

static void
check_local_addr(const char *step, int fd, const char *want_ip)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    char got[INET_ADDRSTRLEN];

    if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        die(step, "getsockname: %s", strerror(errno));
    inet_ntop(AF_INET, &sa.sin_addr, got, sizeof(got));
    if (strcmp(got, want_ip) != 0)
        die(step, "local address %s, want %s", got, want_ip);
}

static void
unix_stream(const char *dir, int *cli_out, int *srv_out)
{
    const char *step = "unix stream socket";
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int lfd, cfd, afd;
    char buf[16];

    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/probe.sock", dir);
    unlink(sa.sun_path);
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(lfd, 4) < 0)
        die(step, "listen: %s", strerror(errno));
    cfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (cfd < 0 || connect(cfd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        die(step, "connect: %s", strerror(errno));
    afd = accept(lfd, NULL, NULL);
    if (afd < 0)
        die(step, "accept: %s", strerror(errno));
    write_all(step, cfd, "unix-c2s", 8);
    read_exact(step, afd, buf, 8);
    if (memcmp(buf, "unix-c2s", 8) != 0)
        die(step, "client->server data differs");
    write_all(step, afd, "unix-s2c", 8);
    read_exact(step, cfd, buf, 8);
    if (memcmp(buf, "unix-s2c", 8) != 0)
        die(step, "server->client data differs");
    close(lfd);
    *cli_out = cfd;
    *srv_out = afd;
    ok(step);
}

static void
unix_dgram_pair(void)
{
    const char *step = "unix datagram socketpair";
    int sv[2];
    char buf[16];

    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0)
        die(step, "socketpair: %s", strerror(errno));
    if (send(sv[0], "dgram", 5, 0) != 5 ||
        recv(sv[1], buf, sizeof(buf), 0) != 5 || memcmp(buf, "dgram", 5) != 0)
        die(step, "send/recv: %s", strerror(errno));
    close(sv[0]);
    close(sv[1]);
    ok(step);
}

static void
file_and_pipe(const char *dir)
{
    const char *step = "regular file write/read";
    static char out[BIG_LEN], in[BIG_LEN];
    char path[512];
    int fd, p[2];
    size_t i;

    for (i = 0; i < sizeof(out); i++)
        out[i] = (char)(i * 7 + 3);
    snprintf(path, sizeof(path), "%s/probe.dat", dir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(step, "open: %s", strerror(errno));
    write_all(step, fd, out, sizeof(out));
    if (lseek(fd, 0, SEEK_SET) != 0)
        die(step, "lseek: %s", strerror(errno));
    read_exact(step, fd, in, sizeof(in));
    if (memcmp(in, out, sizeof(in)) != 0)
        die(step, "file content differs");
    close(fd);
    ok(step);

    step = "pipe write/read";
    if (pipe(p) < 0)
        die(step, "pipe: %s", strerror(errno));
    write_all(step, p[1], "pipe-data", 9);
    read_exact(step, p[0], in, 9);
    if (memcmp(in, "pipe-data", 9) != 0)
        die(step, "pipe data differs");
    close(p[0]);
    close(p[1]);
    ok(step);
}

/*
 * Send a tag on each of the n fds (to: the fd to write, from: the fd that
 * will become readable), then wait for all of them with the given method.
 */
enum waiter { W_POLL, W_EPOLL, W_SELECT };

static void
mixed_wait(const char *step, enum waiter how, const int *to, const int *from,
           int n)
{
    int pending = (1 << n) - 1, i, ep = -1, rounds = 0;
    char buf[8];

    for (i = 0; i < n; i++)
        write_all(step, to[i], "tag", 3);
    if (how == W_EPOLL) {
        ep = epoll_create1(EPOLL_CLOEXEC);
        if (ep < 0)
            die(step, "epoll_create1: %s", strerror(errno));
        for (i = 0; i < n; i++) {
            struct epoll_event ev = {.events = EPOLLIN,
                                     .data.u32 = (uint32_t)i};
            if (epoll_ctl(ep, EPOLL_CTL_ADD, from[i], &ev) < 0)
                die(step, "epoll_ctl ADD fd %d: %s", from[i], strerror(errno));
        }
    }
    while (pending != 0) {
        int ready = 0;

        if (++rounds > 100)
            die(step, "not every fd became readable (pending mask %#x)",
                pending);
        if (how == W_POLL) {
            struct pollfd pfd[8];
            for (i = 0; i < n; i++)
                pfd[i] = (struct pollfd){.fd = from[i], .events = POLLIN};
            if (poll(pfd, (nfds_t)n, 5000) < 0)
                die(step, "poll: %s", strerror(errno));
            for (i = 0; i < n; i++)
                if (pfd[i].revents & POLLIN)
                    ready |= 1 << i;
        } else if (how == W_EPOLL) {
            struct epoll_event evs[8];
            int k, got = epoll_wait(ep, evs, 8, 5000);
            if (got < 0)
                die(step, "epoll_wait: %s", strerror(errno));
            for (k = 0; k < got; k++)
                ready |= 1 << evs[k].data.u32;
        } else {
            fd_set rd;
            int maxfd = -1;
            struct timeval tv = {.tv_sec = 5};
            FD_ZERO(&rd);
            for (i = 0; i < n; i++) {
                FD_SET(from[i], &rd);
                if (from[i] > maxfd)
                    maxfd = from[i];
            }
            if (select(maxfd + 1, &rd, NULL, NULL, &tv) < 0)
                die(step, "select: %s", strerror(errno));
            for (i = 0; i < n; i++)
                if (FD_ISSET(from[i], &rd))
                    ready |= 1 << i;
        }
        if (ready == 0)
            die(step, "timed out with pending mask %#x", pending);
        for (i = 0; i < n; i++) {
            if (!(ready & pending & (1 << i)))
                continue;
            read_exact(step, from[i], buf, 3);
            if (memcmp(buf, "tag", 3) != 0)
                die(step, "fd %d returned other data", from[i]);
            pending &= ~(1 << i);
        }
    }
    if (ep >= 0)
        close(ep);
    ok(step);
}

/* 1 MB through the echo server, non-blocking, driven by poll. */
static void
bulk_nonblocking(int fd)
{
    const char *step =
        "1 MB echo on the accelerated connection (non-blocking + poll)";
    static char out[BIG_LEN], in[BIG_LEN];
    size_t sent = 0, got = 0, i;

    for (i = 0; i < sizeof(out); i++)
        out[i] = (char)(i * 13 + 1);
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
        die(step, "fcntl O_NONBLOCK: %s", strerror(errno));
    while (got < sizeof(in)) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        ssize_t n;

        if (sent < sizeof(out))
            pfd.events |= POLLOUT;
        n = poll(&pfd, 1, 10000);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die(step, "poll: %s (sent %zu, got %zu)",
                n < 0 ? strerror(errno) : "timeout", sent, got);
        if (pfd.revents & (POLLERR | POLLNVAL))
            die(step, "revents %#x", pfd.revents);
        if ((pfd.revents & POLLOUT) && sent < sizeof(out)) {
            n = write(fd, out + sent, sizeof(out) - sent);
            if (n < 0 && errno != EAGAIN)
                die(step, "write: %s", strerror(errno));
            if (n > 0)
                sent += (size_t)n;
        }
        if (pfd.revents & (POLLIN | POLLHUP)) {
            n = read(fd, in + got, sizeof(in) - got);
            if (n < 0 && errno != EAGAIN)
                die(step, "read: %s", strerror(errno));
            if (n == 0)
                die(step, "EOF after %zu bytes", got);
            if (n > 0)
                got += (size_t)n;
        }
    }
    if (memcmp(in, out, sizeof(in)) != 0)
        die(step, "echoed data differs");
    ok(step);
}

int
main(int argc, char **argv)
{
    int acc, lo, ucli, usrv;

    if (argc != 6) {
        fprintf(stderr,
                "usage: %s PEER_IP PEER_PORT LOCAL_IP LOOPBACK_PORT WORKDIR\n",
                argv[0]);
        return 2;
    }
    acc = tcp_connect("accelerated TCP connect", argv[1], atoi(argv[2]));
    check_local_addr("accelerated TCP local address", acc, argv[3]);
    echo_roundtrip("accelerated TCP echo", acc, "hello-accel");
    ok("accelerated TCP connection to the kernel peer");

    lo = tcp_connect("loopback TCP connect", "127.0.0.1", atoi(argv[4]));
    check_local_addr("loopback TCP local address", lo, "127.0.0.1");
    echo_roundtrip("loopback TCP echo", lo, "hello-loopback");
    ok("TCP to 127.0.0.1 while the accelerated connection is open");

    unix_stream(argv[5], &ucli, &usrv);
    unix_dgram_pair();
    file_and_pipe(argv[5]);

    echo_roundtrip("accelerated TCP echo after kernel work", acc, "still-here");
    ok("accelerated connection still works");

    {
        int to[3] = {acc, lo, ucli}, from[3] = {acc, lo, usrv};
        mixed_wait("poll on accelerated + loopback + unix fds", W_POLL, to,
                   from, 3);
        mixed_wait("epoll on accelerated + loopback + unix fds", W_EPOLL, to,
                   from, 3);
        mixed_wait("select on accelerated + loopback + unix fds", W_SELECT, to,
                   from, 3);
    }
    bulk_nonblocking(acc);
    echo_roundtrip("loopback TCP echo at the end", lo, "bye");
    close(lo);
    close(ucli);
    close(usrv);
    if (close(acc) < 0)
        die("close accelerated socket", "%s", strerror(errno));
    printf("ALL OK\n");
    return 0;
}
