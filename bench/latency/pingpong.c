/*
 * pingpong: a TCP or UDP ping-pong over IPv4 or IPv6 that measures what
 * `sockperf ping-pong` measures (one message in flight, half the round
 * trip), for the cases sockperf 3.7 cannot run: it has no IPv6.
 * bench/latency/run.sh compiles it (cc -O2) and runs both ends with the
 * same options over either family, so an IPv4 case and its IPv6 twin are
 * measured by the same code.
 *
 * usage: pingpong server [-u] -b ADDR -p PORT
 *            Echoes what it receives (TCP: one connection after another)
 *            and prints one "ready" line on stdout once it listens.
 *            SIGINT or SIGTERM ends it with status 0 and a summary line
 *            (the handler has no SA_RESTART: a blocking call returns
 *            EINTR and the loop ends, so exit handlers run).
 *        pingpong client [-u] -c ADDR -p PORT -m SIZE -t SECONDS
 *                        [-w WARMUP_S]
 *            Connects (TCP_NODELAY), then sends SIZE bytes and reads SIZE
 *            bytes back, again and again: WARMUP_S seconds not recorded
 *            (default 0), then SECONDS recorded. Prints one JSON object
 *            on stdout: half the round trip in us (avg, min, max, p50,
 *            p90, p99, p99.9, p99.99) and the observations. A UDP reply
 *            missing after 100 ms counts as dropped and the next message
 *            goes out; a TCP reply missing after 5 s is an error.
 * ADDR is a numeric IPv4 or IPv6 address. Errors: one line on stderr and
 * exit status 1 (2: bad arguments).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
    MAX_SIZE = 65000,           /* fits a UDP datagram of either family */
    ECHO_BUF = 65536,           /* the server's read size */
    TCP_REPLY_TIMEOUT_S = 5,    /* a TCP reply later than this is an error */
    UDP_REPLY_TIMEOUT_MS = 100, /* a UDP reply later than this: dropped */
    SEQ_BYTES = 8,              /* UDP messages this long carry a sequence */
};

struct opts {
    bool server;
    bool udp;
    const char *addr;
    const char *port;
    long size;
    double secs;
    double warmup;
};

/* Half round trips, kept as whole round trips in ns (saturated). */
struct samples {
    uint32_t *ns;
    size_t n;
    size_t cap;
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int
fail(const char *what)
{
    fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
    return 1;
}

static int
usage(const char *why)
{
    fprintf(stderr,
            "pingpong: %s (usage: pingpong server [-u] -b ADDR -p PORT | "
            "pingpong client [-u] -c ADDR -p PORT -m SIZE -t SECONDS "
            "[-w WARMUP_S])\n",
            why);
    return 2;
}

static uint64_t
now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The socket of o's address (bound for a server, connected for a client),
 * or -1 with the error on stderr. */
static int
open_socket(const struct opts *o)
{
    struct addrinfo hints = {0}, *ai;
    int fd, rc, one = 1;

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = o->udp ? SOCK_DGRAM : SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    rc = getaddrinfo(o->addr, o->port, &hints, &ai);
    if (rc != 0) {
        fprintf(stderr, "pingpong: address %s port %s: %s\n", o->addr, o->port,
                gai_strerror(rc));
        return -1;
    }
    fd = socket(ai->ai_family, ai->ai_socktype, 0);
    if (fd < 0) {
        fail("socket");
        freeaddrinfo(ai);
        return -1;
    }
    if (!o->udp)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (o->server) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        rc = bind(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc == 0 && !o->udp)
            rc = listen(fd, 16);
    } else {
        rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    }
    freeaddrinfo(ai);
    if (rc != 0) {
        fail(o->server ? "bind/listen" : "connect");
        close(fd);
        return -1;
    }
    return fd;
}

/* Send all n bytes of buf: 0, or -1 (errno set; EINTR once stop is set). */
static int
send_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);

        if (w < 0) {
            if (errno == EINTR && !stop)
                continue;
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Echo one TCP connection until its peer closes it (or stop). */
static void
echo_conn(int c, char *buf, unsigned long long *bytes)
{
    for (;;) {
        ssize_t n = recv(c, buf, ECHO_BUF, 0);

        if (n < 0 && errno == EINTR && !stop)
            continue;
        if (n <= 0)
            return; /* closed, reset or stopped: the next connection */
        if (send_all(c, buf, (size_t)n) < 0)
            return;
        *bytes += (unsigned long long)n;
    }
}

static int
serve(const struct opts *o)
{
    struct sigaction sa = {0};
    unsigned long long conns = 0, msgs = 0, bytes = 0;
    char *buf = malloc(ECHO_BUF);
    int fd;

    sa.sa_handler = on_signal; /* no SA_RESTART: blocking calls see EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (!buf)
        return fail("malloc");
    fd = open_socket(o);
    if (fd < 0)
        return 1;
    printf("pingpong: %s server ready on %s port %s\n", o->udp ? "udp" : "tcp",
           o->addr, o->port);
    fflush(stdout);
    while (!stop) {
        if (o->udp) {
            struct sockaddr_storage from;
            socklen_t len = sizeof(from);
            ssize_t n =
                recvfrom(fd, buf, ECHO_BUF, 0, (struct sockaddr *)&from, &len);

            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return fail("recvfrom");
            }
            if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, len) <
                    0 &&
                errno != EINTR)
                return fail("sendto");
            msgs++;
            bytes += (unsigned long long)n;
        } else {
            int c = accept(fd, NULL, NULL), one = 1;

            if (c < 0) {
                if (errno == EINTR || errno == ECONNABORTED)
                    continue;
                return fail("accept");
            }
            setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            conns++;
            echo_conn(c, buf, &bytes);
            close(c);
        }
    }
    close(fd);
    free(buf);
    printf("pingpong: server stopped: %llu connections, %llu datagrams, "
           "%llu bytes echoed\n",
           conns, msgs, bytes);
    return 0;
}

static int
record(struct samples *s, uint64_t rtt_ns)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1u << 20;
        uint32_t *ns = realloc(s->ns, cap * sizeof(*ns));

        if (!ns)
            return -1;
        s->ns = ns;
        s->cap = cap;
    }
    s->ns[s->n++] = rtt_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt_ns;
    return 0;
}

/* Read one reply of size bytes: 1, 0 when a UDP reply did not come in
 * time (dropped), -1 on an error (reported). */
static int
read_reply(const struct opts *o, int fd, char *buf, uint64_t seq)
{
    size_t got = 0, size = (size_t)o->size;

    while (got < size) {
        ssize_t n = recv(fd, buf + got, size - got, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (o->udp)
                return 0;
            fprintf(stderr, "pingpong: no reply within %d s\n",
                    TCP_REPLY_TIMEOUT_S);
            return -1;
        }
        if (n < 0) {
            fail("recv");
            return -1;
        }
        if (n == 0) {
            fprintf(stderr, "pingpong: the server closed the connection\n");
            return -1;
        }
        if (o->udp) {
            uint64_t got_seq = seq;

            /* A late reply to a message counted as dropped: skip it. */
            if (size >= SEQ_BYTES)
                memcpy(&got_seq, buf, SEQ_BYTES);
            if (got_seq != seq || (size_t)n != size)
                continue;
        }
        got += (size_t)n;
    }
    return 1;
}

static int
cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

/* Half the round trip at permyriad q (nearest rank), in us. */
static double
half_us_at(const struct samples *s, unsigned q)
{
    size_t i = (size_t)(((uint64_t)s->n * q + 9999) / 10000);

    return s->ns[i ? i - 1 : 0] / 2000.0;
}

static int
report(const struct opts *o, int family, struct samples *s,
       unsigned long long dropped, double secs)
{
    uint64_t sum = 0;

    if (s->n == 0) {
        fprintf(stderr, "pingpong: no round trip completed in %.1f s\n",
                o->secs);
        return 1;
    }
    qsort(s->ns, s->n, sizeof(*s->ns), cmp_u32);
    for (size_t i = 0; i < s->n; i++)
        sum += s->ns[i];
    printf("{\"tool\": \"pingpong\", \"proto\": \"%s\", \"family\": \"%s\", "
           "\"size\": %ld, \"warmup_s\": %.3f, \"duration_s\": %.3f, "
           "\"observations\": %zu, \"dropped\": %llu, \"avg_us\": %.3f, "
           "\"min_us\": %.3f, \"max_us\": %.3f, \"p50_us\": %.3f, "
           "\"p90_us\": %.3f, \"p99_us\": %.3f, \"p999_us\": %.3f, "
           "\"p9999_us\": %.3f}\n",
           o->udp ? "udp" : "tcp", family == AF_INET6 ? "ipv6" : "ipv4",
           o->size, o->warmup, secs, s->n, dropped,
           (double)sum / (double)s->n / 2000.0, s->ns[0] / 2000.0,
           s->ns[s->n - 1] / 2000.0, half_us_at(s, 5000), half_us_at(s, 9000),
           half_us_at(s, 9900), half_us_at(s, 9990), half_us_at(s, 9999));
    return 0;
}

static int
ping(const struct opts *o)
{
    struct timeval tv = {TCP_REPLY_TIMEOUT_S, 0};
    struct samples s = {0};
    struct sockaddr_storage peer;
    socklen_t len = sizeof(peer);
    unsigned long long dropped = 0;
    uint64_t seq = 0, t0, t1 = 0, start, warm_end, end;
    char *buf = calloc(1, (size_t)o->size);
    int fd, rc;

    if (!buf)
        return fail("malloc");
    fd = open_socket(o);
    if (fd < 0)
        return 1;
    if (o->udp) {
        tv.tv_sec = 0;
        tv.tv_usec = UDP_REPLY_TIMEOUT_MS * 1000;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
        return fail("setsockopt SO_RCVTIMEO");
    if (getpeername(fd, (struct sockaddr *)&peer, &len) < 0)
        return fail("getpeername");
    start = now_ns();
    warm_end = start + (uint64_t)(o->warmup * 1e9);
    end = warm_end + (uint64_t)(o->secs * 1e9);
    for (;;) {
        t0 = now_ns();
        if (t0 >= end)
            break;
        seq++;
        if (o->udp && o->size >= SEQ_BYTES)
            memcpy(buf, &seq, SEQ_BYTES);
        if (send_all(fd, buf, (size_t)o->size) < 0)
            return fail("send");
        rc = read_reply(o, fd, buf, seq);
        if (rc < 0)
            return 1;
        t1 = now_ns();
        if (rc == 0) {
            dropped += t0 >= warm_end;
            continue;
        }
        if (t0 >= warm_end && record(&s, t1 - t0) < 0)
            return fail("realloc");
    }
    close(fd);
    rc = report(o, peer.ss_family, &s, dropped,
                t1 > warm_end ? (double)(t1 - warm_end) / 1e9 : 0.0);
    free(s.ns);
    free(buf);
    return rc;
}

/* A number from text within [lo, hi], or -1 (text is not one). */
static double
number(const char *text, double lo, double hi)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (errno || end == text || *end || v < lo || v > hi)
        return -1;
    return v;
}

int
main(int argc, char **argv)
{
    struct opts o = {0};
    int c;

    if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")))
        return usage("the first argument is server or client");
    o.server = !strcmp(argv[1], "server");
    o.size = -1;
    o.secs = -1;
    optind = 2;
    while ((c = getopt(argc, argv, "ub:c:p:m:t:w:")) != -1) {
        switch (c) {
        case 'u':
            o.udp = true;
            break;
        case 'b':
        case 'c':
            if ((c == 'b') != o.server)
                return usage("-b is the server's address, -c the client's");
            o.addr = optarg;
            break;
        case 'p':
            if (number(optarg, 1, 65535) < 0)
                return usage("-p takes a port from 1 to 65535");
            o.port = optarg;
            break;
        case 'm':
            o.size = (long)number(optarg, 1, MAX_SIZE);
            if (o.size < 1 || number(optarg, 1, MAX_SIZE) != o.size)
                return usage("-m takes a whole size from 1 to 65000 bytes");
            break;
        case 't':
            o.secs = number(optarg, 0.001, 3600);
            if (o.secs < 0)
                return usage("-t takes seconds, up to 3600");
            break;
        case 'w':
            o.warmup = number(optarg, 0, 600);
            if (o.warmup < 0)
                return usage("-w takes seconds, up to 600");
            break;
        default:
            return usage("unknown option");
        }
    }
    if (optind != argc)
        return usage("unexpected argument");
    if (!o.addr || !o.port)
        return usage("the address and -p are required");
    if (o.server)
        return serve(&o);
    if (o.size < 0 || o.secs < 0)
        return usage("the client needs -m and -t");
    return ping(&o);
}
