/*
 * firstconn: how long a fresh process's first TCP connection takes, from its
 * first socket call to a byte echoed back: under accel-run that includes
 * bringing the data path up (EAL, port, stack), which happens at the first
 * socket the stack takes.
 *
 *   firstconn serve PORT          kernel echo server: accepts, echoes one
 *                                 read, closes; prints "ready" once it
 *                                 listens; runs until killed
 *   firstconn connect IP PORT     one connection: socket, connect, send one
 *                                 byte, read it back; prints one JSON line:
 *                                 socket_us (the socket call), connect_us
 *                                 (socket + connect: ready for traffic),
 *                                 reply_us (+ the echo), main_us (time from
 *                                 the process's start, as the kernel
 *                                 accounts it, to main: exec and library
 *                                 loading, 10 ms resolution)
 *
 * Exit status 0, or 1 with one line on stderr naming the call that failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double
now_us(clockid_t c)
{
    struct timespec t;

    clock_gettime(c, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int
die(const char *what)
{
    fprintf(stderr, "firstconn: %s: %s\n", what, strerror(errno));
    return 1;
}

/* Microseconds from the process's start (/proc/self/stat field 22, in clock
 * ticks since boot) to now; -1 if unknown. */
static double
since_start_us(void)
{
    char buf[1024], *p;
    unsigned long long start = 0;
    FILE *f = fopen("/proc/self/stat", "re");
    size_t n;

    if (f == NULL)
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* the name may hold spaces */
    if (p == NULL)
        return -1;
    for (int field = 2; field < 22 && p != NULL; field++)
        p = strchr(p + 1, ' ');
    if (p == NULL || sscanf(p + 1, "%llu", &start) != 1)
        return -1;
    return now_us(CLOCK_BOOTTIME) -
           (double)start * 1e6 / (double)sysconf(_SC_CLK_TCK);
}

static int
serve(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);

    if (ls < 0)
        return die("socket");
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0)
        return die("bind");
    if (listen(ls, 128) != 0)
        return die("listen");
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        char b[64];
        int c = accept(ls, NULL, NULL);
        ssize_t n;

        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return die("accept");
        }
        n = read(c, b, sizeof(b));
        if (n > 0 && write(c, b, (size_t)n) != n)
            (void)0; /* the client sees a short reply */
        close(c);
    }
}

static int
connect_once(const char *ip, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    double main_us = since_start_us(), t0, t1, t2, t3;
    int s, one = 1;
    char c = 'x';

    if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
        fprintf(stderr, "firstconn: %s: not an IPv4 address\n", ip);
        return 1;
    }
    t0 = now_us(CLOCK_MONOTONIC);
    s = socket(AF_INET, SOCK_STREAM, 0);
    t1 = now_us(CLOCK_MONOTONIC);
    if (s < 0)
        return die("socket");
    if (connect(s, (struct sockaddr *)&a, sizeof(a)) != 0)
        return die("connect");
    t2 = now_us(CLOCK_MONOTONIC);
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (write(s, &c, 1) != 1)
        return die("write");
    if (read(s, &c, 1) != 1)
        return die("read");
    t3 = now_us(CLOCK_MONOTONIC);
    close(s);
    printf("{\"socket_us\": %.1f, \"connect_us\": %.1f, \"reply_us\": %.1f, "
           "\"main_us\": %.0f}\n",
           t1 - t0, t2 - t0, t3 - t0, main_us);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "serve") == 0)
        return serve(atoi(argv[2]));
    if (argc == 4 && strcmp(argv[1], "connect") == 0)
        return connect_once(argv[2], atoi(argv[3]));
    fprintf(stderr,
            "usage: firstconn serve PORT | firstconn connect IP PORT\n");
    return 2;
}
