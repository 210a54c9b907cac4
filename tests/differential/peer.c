/*
 * The kernel-side peer of the differential suite. It always runs on the
 * kernel stack (never under accel-run), in the peer namespace, and serves
 * every scenario through fixed ports (dnet.h):
 *
 *   7001 echo     echo bytes back; after the client's EOF, close
 *   7002 close    accept, then close at once (the client sees FIN)
 *   7003 rst      accept, read one byte (the client's go-ahead, so the
 *                 client's connect() has surely returned), then close
 *                 with SO_LINGER 0 (the client sees RST)
 *   7004 sink     read to EOF, reply "bytes=N fnv=HHHHHHHH\n", close
 *   7005 source   read a line "N\n", send N bytes of d_pattern(), close
 *   7006 hold     accept and never read; close on the client's EOF or
 *                 after 10 s
 *   7007 udp echo echo each datagram (zero-length ones too) to its sender
 *   7008 control  read "PORT MODE\n" or "[IP] PORT MODE\n", connect to the
 *                 subject's PORT (at SUBJECT_IP, or at IP, IPv4 or IPv6),
 *                 reply "ok\n" (or "err ENAME\n"), then run MODE on that
 *                 connection: hold | send:TEXT | echo | close | rst
 *   7010 deaf     (IPv4 only) a listener whose accept queue the peer filled
 *                 itself at start (backlog 0, one connection over its own
 *                 address, never accepted): Linux drops every further SYN,
 *                 so a client's connect stays in SYN-SENT
 *
 * Every service listens twice: on D_PEER_IP (AF_INET sockets, as before
 * IPv6) and on D_PEER_IP6 (AF_INET6 sockets with IPV6_V6ONLY), so the
 * IPv4 scenarios meet exactly the sockets they always did.
 *
 * Usage: peer SUBJECT_IP. Prints "ready" on stdout once every socket
 * listens. One child process per connection (the main loop only accepts),
 * so a scenario can never wedge the peer for the next one.
 */
#define _GNU_SOURCE
#include "dnet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *subject_ip;

static void
die(const char *what)
{
    fprintf(stderr, "peer: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* A socket of @p type on the peer's address of @p family, port @p port
 * (listening for TCP). */
static int
listen_on(int family, int type, int port)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, port);
    struct sockaddr_in6 a6 = d_sin6(D_PEER_IP6, port);
    int one = 1;
    int fd = socket(family, type, 0);
    int r;

    if (fd < 0)
        die("socket");
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (family == AF_INET6) {
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        r = bind(fd, (struct sockaddr *)&a6, sizeof(a6));
    } else {
        r = bind(fd, (struct sockaddr *)&a, sizeof(a));
    }
    if (r < 0)
        die(family == AF_INET6 ? "bind " D_PEER_IP6 : "bind " D_PEER_IP);
    if (type == SOCK_STREAM && listen(fd, 64) < 0)
        die("listen");
    return fd;
}

/* Read until EOF or error, discarding. */
static void
drain(int fd)
{
    char buf[65536];

    while (read(fd, buf, sizeof(buf)) > 0)
        ;
}

static void
do_echo(int fd)
{
    char buf[65536];
    ssize_t r;

    while ((r = read(fd, buf, sizeof(buf))) > 0)
        if (d_write_full(fd, buf, (size_t)r) < 0)
            return;
}

static void
do_sink(int fd)
{
    char buf[65536], line[64];
    unsigned long long total = 0;
    uint32_t h = D_FNV_INIT;
    ssize_t r;

    while ((r = read(fd, buf, sizeof(buf))) > 0) {
        total += (unsigned long long)r;
        h = d_fnv(h, buf, (size_t)r);
    }
    snprintf(line, sizeof(line), "bytes=%llu fnv=%08x\n", total, h);
    d_write_full(fd, line, strlen(line));
}

static void
do_source(int fd)
{
    char line[32], buf[65536];
    size_t n = 0;
    unsigned long long want, off = 0;

    while (n < sizeof(line) - 1 && read(fd, line + n, 1) == 1)
        if (line[n++] == '\n')
            break;
    line[n] = '\0';
    want = strtoull(line, NULL, 10);
    while (off < want) {
        size_t i, chunk = want - off < sizeof(buf) ? want - off : sizeof(buf);
        for (i = 0; i < chunk; i++)
            buf[i] = (char)d_pattern(off + i);
        if (d_write_full(fd, buf, chunk) < 0)
            return;
        off += chunk;
    }
}

static void
do_hold(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};

    poll(&p, 1, 10000);
}

static void
do_rst(int fd)
{
    struct linger l = {.l_onoff = 1, .l_linger = 0};

    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    close(fd);
}

/* Control connection: connect back to the subject, then run the mode. */
static void
do_ctrl(int cfd)
{
    char line[256], *mode, *req, reply[64];
    const char *ip = subject_ip;
    size_t n = 0;
    int port, fd = -1;
    struct sockaddr_in a;
    struct sockaddr_in6 a6;

    while (n < sizeof(line) - 1 && read(cfd, line + n, 1) == 1)
        if (line[n++] == '\n')
            break;
    line[n] = '\0';
    line[strcspn(line, "\n")] = '\0';
    req = line;
    if (req[0] == '[' && strchr(req, ']') != NULL) {
        ip = req + 1;
        req = strchr(req, ']');
        *req++ = '\0';
        req += strspn(req, " ");
    }
    port = atoi(req);
    mode = strchr(req, ' ');
    mode = mode ? mode + 1 : "hold";
    memset(&a6, 0, sizeof(a6));
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons((uint16_t)port);
    if (inet_pton(AF_INET6, ip, &a6.sin6_addr) == 1) {
        fd = socket(AF_INET6, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a6, sizeof(a6)) < 0)
            fd = -1; /* (the process exits soon: no close) */
    } else {
        a = d_sin(ip, port);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
            fd = -1;
    }
    if (fd < 0) {
        snprintf(reply, sizeof(reply), "err %s\n", strerrorname_np(errno));
        d_write_full(cfd, reply, strlen(reply));
        return;
    }
    if (strncmp(mode, "send:", 5) == 0)
        d_write_full(fd, mode + 5, strlen(mode + 5));
    if (strcmp(mode, "rst") == 0)
        do_rst(fd);
    else if (strcmp(mode, "close") == 0)
        close(fd);
    d_write_full(cfd, "ok\n", 3);
    close(cfd);
    if (strcmp(mode, "echo") == 0)
        do_echo(fd);
    else if (strcmp(mode, "rst") != 0 && strcmp(mode, "close") != 0)
        drain(fd);
}

static void
serve(int port, int fd)
{
    switch (port) {
    case D_ECHO:
        do_echo(fd);
        break;
    case D_SINK:
        do_sink(fd);
        break;
    case D_SOURCE:
        do_source(fd);
        break;
    case D_HOLD:
        do_hold(fd);
        break;
    case D_RST: {
        char c;
        if (read(fd, &c, 1) == 1)
            do_rst(fd);
        return;
    }
    case D_CTRL:
        do_ctrl(fd);
        return;
    }
    close(fd);
}

static void
udp_echo(int fd)
{
    char buf[65536];
    struct sockaddr_in6 from;
    socklen_t fl = sizeof(from);
    ssize_t r =
        recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

    if (r >= 0)
        sendto(fd, buf, (size_t)r, 0, (struct sockaddr *)&from, fl);
}

/* 7010: a full accept queue. The listener and the connection that fills
 * it stay open (and unaccepted) for the peer's lifetime. */
static void
deaf(void)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, D_DEAF);
    int one = 1, l = socket(AF_INET, SOCK_STREAM, 0), c;

    if (l < 0)
        die("socket");
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 0) < 0)
        die("bind/listen " D_PEER_IP ":7010");
    c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
        die("connect to the deaf listener");
}

int
main(int argc, char **argv)
{
    static const int ports[] = {D_ECHO,   D_CLOSE, D_RST, D_SINK,
                                D_SOURCE, D_HOLD,  D_CTRL};
    enum { NP = sizeof(ports) / sizeof(ports[0]), NS = 2 + 2 * NP };
    /* p[0], p[1]: UDP echo on IPv4, IPv6; p[2 + 2 * k + v6]: TCP ports[k]
     * (datagrams are served first in a round, as before IPv6). */
    struct pollfd p[NS];
    int i;

    if (argc != 2) {
        fprintf(stderr, "usage: peer SUBJECT_IP\n");
        return 2;
    }
    subject_ip = argv[1];
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_IGN);
    for (i = 0; i < NS; i++) {
        int fam = i % 2 ? AF_INET6 : AF_INET;
        int fd = i < 2 ? listen_on(fam, SOCK_DGRAM, D_UDP_ECHO)
                       : listen_on(fam, SOCK_STREAM, ports[(i - 2) / 2]);
        p[i] = (struct pollfd){fd, POLLIN, 0};
    }
    deaf();
    printf("ready\n");
    fflush(stdout);

    for (;;) {
        if (poll(p, NS, -1) < 0) {
            if (errno == EINTR)
                continue;
            die("poll");
        }
        for (i = 0; i < NS; i++) {
            int c, k = (i - 2) / 2;
            if (!p[i].revents)
                continue;
            if (i < 2) {
                udp_echo(p[i].fd);
                continue;
            }
            c = accept(p[i].fd, NULL, NULL);
            if (c < 0)
                continue;
            if (ports[k] == D_CLOSE) {
                close(c);
                continue;
            }
            if (fork() == 0) {
                prctl(PR_SET_PDEATHSIG, SIGTERM);
                for (int j = 0; j < NS; j++)
                    close(p[j].fd);
                serve(ports[k], c);
                _exit(0);
            }
            close(c);
        }
    }
}
