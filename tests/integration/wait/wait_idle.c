/*
 * wait_idle: a TCP server that spends its time outside the library, for
 * the progress test (wait_progress.sh). Between commands it blocks in
 * read() on a FIFO (a kernel fd: no thread of it is in the stack), so
 * whatever TCP does meanwhile is the progress thread's work.
 *
 * At start it listens on IP:PORT (never accepted until "accept") and on
 * IP:PORT+1, where it accepts two connections: D (data) and K, on which
 * it turns on keep-alive probes (1 s idle, 1 s apart, 2 unanswered ones
 * fatal). Then it prints "ready" and reads commands from FIFO, one a line:
 *   send N          send N bytes on D
 *   check           recv(K, MSG_DONTWAIT): "check rc=R errno=NAME"
 *   accept N BYTES  accept N connections on PORT and read BYTES on each:
 *                   "accepted N bytes TOTAL"
 *   twclose PEER_PORT LPORT
 *                   connect from IP:LPORT to the peer (PEER_IP in the
 *                   environment) at PEER_PORT, exchange one line, close
 *                   first (this side goes to TIME-WAIT once the peer's FIN
 *                   comes): "twclose ok"
 *   rebind LPORT    bind a new TCP socket to IP:LPORT without SO_REUSEADDR
 *                   and close it: "rebind rc=R errno=NAME" (EADDRINUSE
 *                   while the TIME-WAIT connection lives)
 *   exit
 * Each command ends with "done WORD". Errors print "FAIL: ..." and exit 1.
 *
 * usage: wait_idle IP PORT FIFO
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void
die(const char *what)
{
    printf("FAIL: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int
listen_on(const char *ip, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0 || inet_pton(AF_INET, ip, &a.sin_addr) != 1)
        die("socket");
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        die("bind");
    if (listen(fd, 64) != 0)
        die("listen");
    return fd;
}

static int
accept_one(int lfd)
{
    int fd = accept(lfd, NULL, NULL);

    if (fd < 0)
        die("accept");
    return fd;
}

static void
keepalive_on(int fd)
{
    int one = 1, idle = 1, intvl = 1, cnt = 2;

    if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) !=
            0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) != 0)
        die("keep-alive options");
}

/* The next command line from the FIFO (reopened at each writer's EOF). */
static char *
next_line(const char *fifo)
{
    static char buf[256];
    static size_t len;
    static int fd = -1;
    static char line[256];

    for (;;) {
        char *nl = memchr(buf, '\n', len);
        ssize_t n;

        if (nl != NULL) {
            size_t l = (size_t)(nl - buf);
            memcpy(line, buf, l);
            line[l] = '\0';
            memmove(buf, nl + 1, len - l - 1);
            len -= l + 1;
            return line;
        }
        if (fd < 0 && (fd = open(fifo, O_RDONLY)) < 0)
            die("open fifo");
        n = read(fd, buf + len, sizeof(buf) - len - 1);
        if (n < 0)
            die("read fifo");
        if (n == 0) {
            close(fd);
            fd = -1;
            continue;
        }
        len += (size_t)n;
    }
}

static struct sockaddr_in
sin_of(const char *ip, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};

    if (ip == NULL || inet_pton(AF_INET, ip, &a.sin_addr) != 1)
        die("address");
    return a;
}

static void
do_twclose(const char *ip, int peer_port, int lport)
{
    struct sockaddr_in me = sin_of(ip, lport);
    struct sockaddr_in peer = sin_of(getenv("PEER_IP"), peer_port);
    char buf[8];
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me)) != 0)
        die("twclose bind");
    if (connect(fd, (struct sockaddr *)&peer, sizeof(peer)) != 0)
        die("twclose connect");
    if (send(fd, "tw\n", 3, 0) != 3 || recv(fd, buf, 3, MSG_WAITALL) != 3)
        die("twclose exchange");
    close(fd);
    printf("twclose ok\n");
}

static void
do_rebind(const char *ip, int lport)
{
    struct sockaddr_in me = sin_of(ip, lport);
    int fd = socket(AF_INET, SOCK_STREAM, 0), rc;

    if (fd < 0)
        die("rebind socket");
    rc = bind(fd, (struct sockaddr *)&me, sizeof(me));
    printf("rebind rc=%d errno=%s\n", rc,
           rc < 0 ? strerrorname_np(errno) : "0");
    close(fd);
}

static void
do_accept(int lfd, int n, long bytes)
{
    char buf[65536];
    long total = 0;

    for (int i = 0; i < n; i++) {
        int fd = accept_one(lfd);
        long got = 0;

        while (got < bytes) {
            ssize_t r = recv(fd, buf, sizeof(buf), 0);
            if (r <= 0)
                die("recv on an accepted connection");
            got += r;
        }
        total += got;
        close(fd);
    }
    printf("accepted %d bytes %ld\n", n, total);
}

int
main(int argc, char **argv)
{
    int lfd, lfd2, d, k, port;
    char *cmd;

    if (argc != 4) {
        fprintf(stderr, "usage: wait_idle IP PORT FIFO\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    port = atoi(argv[2]);
    lfd = listen_on(argv[1], port);
    lfd2 = listen_on(argv[1], port + 1);
    printf("listening\n");
    d = accept_one(lfd2);
    k = accept_one(lfd2);
    keepalive_on(k);
    printf("ready\n");
    while ((cmd = next_line(argv[3])) != NULL) {
        long a = 0, b = 0;
        char word[16] = "";
        char c;

        sscanf(cmd, "%15s %ld %ld", word, &a, &b);
        if (strcmp(word, "send") == 0) {
            char *p = calloc(1, (size_t)a);
            if (p == NULL || send(d, p, (size_t)a, 0) != a)
                die("send");
            free(p);
        } else if (strcmp(word, "check") == 0) {
            ssize_t r = recv(k, &c, 1, MSG_DONTWAIT);
            printf("check rc=%zd errno=%s\n", r,
                   r < 0 ? strerrorname_np(errno) : "0");
        } else if (strcmp(word, "accept") == 0) {
            do_accept(lfd, (int)a, b);
        } else if (strcmp(word, "twclose") == 0) {
            do_twclose(argv[1], (int)a, (int)b);
        } else if (strcmp(word, "rebind") == 0) {
            do_rebind(argv[1], (int)a);
        } else if (strcmp(word, "exit") == 0) {
            printf("done exit\n");
            return 0;
        } else {
            printf("FAIL: unknown command '%s'\n", cmd);
            return 1;
        }
        printf("done %s\n", word);
    }
    return 0;
}
