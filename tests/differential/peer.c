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
 *   7008 control  read "PORT MODE\n", connect to the subject's PORT, reply
 *                 "ok\n" (or "err ENAME\n"), then run MODE on that
 *                 connection: hold | send:TEXT | echo | close | rst
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

static int
listen_on(int type, int port)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, port);
    int one = 1;
    int fd = socket(AF_INET, type, 0);

    if (fd < 0)
        die("socket");
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        die("bind");
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
    char line[256], *mode, reply[64];
    size_t n = 0;
    int port, fd;
    struct sockaddr_in a;

    while (n < sizeof(line) - 1 && read(cfd, line + n, 1) == 1)
        if (line[n++] == '\n')
            break;
    line[n] = '\0';
    line[strcspn(line, "\n")] = '\0';
    port = atoi(line);
    mode = strchr(line, ' ');
    mode = mode ? mode + 1 : "hold";
    a = d_sin(subject_ip, port);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
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
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    ssize_t r =
        recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

    if (r >= 0)
        sendto(fd, buf, (size_t)r, 0, (struct sockaddr *)&from, fl);
}

int
main(int argc, char **argv)
{
    static const int ports[] = {D_ECHO,   D_CLOSE, D_RST, D_SINK,
                                D_SOURCE, D_HOLD,  D_CTRL};
    enum { NP = sizeof(ports) / sizeof(ports[0]) };
    struct pollfd p[NP + 1];
    int i;

    if (argc != 2) {
        fprintf(stderr, "usage: peer SUBJECT_IP\n");
        return 2;
    }
    subject_ip = argv[1];
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_IGN);
    for (i = 0; i < NP; i++)
        p[i] = (struct pollfd){listen_on(SOCK_STREAM, ports[i]), POLLIN, 0};
    p[NP] = (struct pollfd){listen_on(SOCK_DGRAM, D_UDP_ECHO), POLLIN, 0};
    printf("ready\n");
    fflush(stdout);

    for (;;) {
        if (poll(p, NP + 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            die("poll");
        }
        if (p[NP].revents)
            udp_echo(p[NP].fd);
        for (i = 0; i < NP; i++) {
            int c;
            if (!p[i].revents)
                continue;
            c = accept(p[i].fd, NULL, NULL);
            if (c < 0)
                continue;
            if (ports[i] == D_CLOSE) {
                close(c);
                continue;
            }
            if (fork() == 0) {
                prctl(PR_SET_PDEATHSIG, SIGTERM);
                for (int j = 0; j <= NP; j++)
                    close(p[j].fd);
                serve(ports[i], c);
                _exit(0);
            }
            close(c);
        }
    }
}
