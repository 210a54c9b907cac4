/*
 * conn1m: many idle HTTP/1.1 keep-alive connections to one server, for
 * bench/conn1m/run.sh (issue 24: a million idle connections on one
 * accelerated nginx worker).
 *
 * Phases, each in one epoll loop with at most INFLIGHT connections in
 * progress at a time:
 *   1. setup: N non-blocking connects, each socket bound first to one of
 *      NSRC source addresses (FIRST, FIRST+1, ..., round robin) with
 *      IP_BIND_ADDRESS_NO_PORT, so the kernel picks the port per source at
 *      connect time; on each new connection one keep-alive GET, whose
 *      whole response is read (the connection is served), then it is left
 *      idle (out of the epoll set).
 *   2. hold: HOLD seconds, then until GOFILE exists when -g names one
 *      (run.sh measures memory meanwhile). "conn1m: holding" on stderr
 *      says the hold has begun.
 *   3. second request: one more GET on every connection still open; the
 *      answers that arrive complete and correct are counted.
 *   4. close: every connection closed (FIN), then the server's
 *      "Active connections" (nginx stub_status, fetched on a connection of
 *      its own) polled every 20 ms until only that connection is left: the
 *      time until the server side is gone.
 * A correct answer: status 200, a Content-Length body received whole, and
 * no "Connection: close" (the connection would not stay). A connection
 * that has no answer TIMEOUT seconds after it started its step fails with
 * ETIMEDOUT.
 *
 * usage: conn1m DST_IP:PORT FIRST_SRC NSRC -n N [-f INFLIGHT] [-H HOLD]
 *               [-g GOFILE] [-u PATH] [-s STATUS_PATH] [-t TIMEOUT]
 *               [-C CLOSE_TIMEOUT]
 *   -n  connections (required)          -f  in flight at most (2000)
 *   -H  hold seconds (10)               -g  after the hold, wait for GOFILE
 *   -u  request path (/ok)              -s  stub_status path (/status)
 *   -t  per-step timeout s (30)         -C  close wait limit s (300)
 * Raises RLIMIT_NOFILE's soft limit to the hard limit. Prints one JSON
 * object on stdout (see print_report); progress on stderr. Bad arguments:
 * one line on stderr, exit 2; exit 1 when a phase could not run at all.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    RESP_MAX = 2048,    /* a response larger than this is a bad one */
    NERR = 160,         /* errno values counted one by one */
    ERR_EOF = NERR,     /* the peer closed before the whole answer */
    ERR_BAD = NERR + 1, /* status not 200, no length, Connection: close */
    ERR_BIG = NERR + 2, /* the answer did not fit RESP_MAX */
    NCODE = NERR + 3,
};

enum step { FREE, CONNECTING, READING };

struct slot {
    int conn; /* index into fds */
    enum step step;
    double deadline; /* monotonic seconds */
    size_t len;
    char buf[RESP_MAX];
};

struct opts {
    struct sockaddr_in dst;
    uint32_t first_src; /* host order */
    unsigned nsrc;
    long n, inflight;
    double hold, timeout, close_timeout;
    const char *gofile, *path, *status_path;
};

struct phase {
    long ok;
    long fail[NCODE];
    double seconds;
};

static struct opts o = {
    .inflight = 2000,
    .hold = 10,
    .timeout = 30,
    .close_timeout = 300,
    .path = "/ok",
    .status_path = "/status",
};
static int *fds; /* per connection: its socket, or -1 */
static struct slot *slots;
static long *free_slots, nfree;
static int epfd;
static char request[256];
static size_t request_len;

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
count_fail(struct phase *ph, int code)
{
    ph->fail[code >= 0 && code < NCODE ? code : ERR_BAD]++;
}

static const char *
code_name(int code)
{
    static char other[32];
    const char *s;

    if (code == ERR_EOF)
        return "closed_by_peer";
    if (code == ERR_BAD)
        return "bad_response";
    if (code == ERR_BIG)
        return "response_too_long";
    s = strerrorname_np(code);
    if (s != NULL)
        return s;
    snprintf(other, sizeof(other), "errno_%d", code);
    return other;
}

/* A complete, correct answer in buf: 1; incomplete: 0; wrong: -1. */
static int
response_done(const char *buf, size_t len)
{
    const char *end = memmem(buf, len, "\r\n\r\n", 4);
    const char *cl;
    char head[RESP_MAX + 1];
    size_t hlen;
    long body;

    if (end == NULL)
        return 0;
    hlen = (size_t)(end - buf);
    memcpy(head, buf, hlen);
    head[hlen] = '\0';
    if (strncmp(head, "HTTP/1.1 200 ", 13) != 0 ||
        strcasestr(head, "\r\nconnection: close") != NULL)
        return -1;
    cl = strcasestr(head, "\r\ncontent-length:");
    if (cl == NULL)
        return -1;
    body = strtol(cl + 17, NULL, 10);
    if (body < 0 || hlen + 4 + (size_t)body > RESP_MAX)
        return -1;
    if (len < hlen + 4 + (size_t)body)
        return 0;
    return len == hlen + 4 + (size_t)body ? 1 : -1;
}

static long
slot_take(long conn, enum step step)
{
    long s = free_slots[--nfree];

    slots[s].conn = (int)conn;
    slots[s].step = step;
    slots[s].deadline = now() + o.timeout;
    slots[s].len = 0;
    return s;
}

static void
slot_release(long s)
{
    slots[s].step = FREE;
    free_slots[nfree++] = s;
}

/* The connection of slot s failed with code: closed, counted, released. */
static void
slot_fail(struct phase *ph, long s, int code)
{
    int *fd = &fds[slots[s].conn];

    close(*fd); /* also leaves the epoll set */
    *fd = -1;
    count_fail(ph, code);
    slot_release(s);
}

/* Send the GET on slot s's connection and wait for its answer. */
static void
slot_request(struct phase *ph, long s)
{
    int fd = fds[slots[s].conn];
    ssize_t w = send(fd, request, request_len, MSG_NOSIGNAL);

    if (w != (ssize_t)request_len) {
        slot_fail(ph, s, w < 0 ? errno : EMSGSIZE);
        return;
    }
    slots[s].step = READING;
    slots[s].deadline = now() + o.timeout;
}

static void
slot_readable(struct phase *ph, long s)
{
    struct slot *sl = &slots[s];
    int fd = fds[sl->conn], r;
    ssize_t got;

    got = recv(fd, sl->buf + sl->len, sizeof(sl->buf) - sl->len, 0);
    if (got < 0) {
        if (errno != EAGAIN && errno != EINTR)
            slot_fail(ph, s, errno);
        return;
    }
    if (got == 0) {
        slot_fail(ph, s, ERR_EOF);
        return;
    }
    sl->len += (size_t)got;
    r = response_done(sl->buf, sl->len);
    if (r == 0 && sl->len == sizeof(sl->buf))
        r = -2;
    if (r < 0) {
        slot_fail(ph, s, r == -2 ? ERR_BIG : ERR_BAD);
        return;
    }
    if (r == 1) {
        epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); /* idle from now on */
        ph->ok++;
        slot_release(s);
    }
}

static void
slot_event(struct phase *ph, long s, uint32_t ev)
{
    struct slot *sl = &slots[s];
    int fd = fds[sl->conn], err = 0;
    socklen_t elen = sizeof(err);
    struct epoll_event e = {.events = EPOLLIN, .data.u64 = (uint64_t)s};

    if (sl->step == FREE) /* ended earlier in the same batch of events */
        return;
    if (sl->step == CONNECTING) {
        if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
            err = errno;
        if (err == 0 && (ev & EPOLLHUP))
            err = ECONNRESET;
        if (err != 0) {
            slot_fail(ph, s, err);
            return;
        }
        if (epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &e) < 0) {
            slot_fail(ph, s, errno);
            return;
        }
        slot_request(ph, s);
        return;
    }
    if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP))
        slot_readable(ph, s);
}

/* Start connection i: socket, source address, connect. */
static void
start_connect(struct phase *ph, long i)
{
    struct sockaddr_in src = {.sin_family = AF_INET};
    struct epoll_event e = {.events = EPOLLOUT};
    int one = 1, fd;
    long s;

    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        count_fail(ph, errno);
        return;
    }
    src.sin_addr.s_addr = htonl(o.first_src + (uint32_t)(i % o.nsrc));
    if (setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one)) <
            0 ||
        bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0 ||
        (connect(fd, (struct sockaddr *)&o.dst, sizeof(o.dst)) < 0 &&
         errno != EINPROGRESS)) {
        count_fail(ph, errno);
        close(fd);
        return;
    }
    fds[i] = fd;
    s = slot_take(i, CONNECTING);
    e.data.u64 = (uint64_t)s;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) < 0)
        slot_fail(ph, s, errno);
}

/* Start the second request on connection i (it is open and idle). */
static void
start_request(struct phase *ph, long i)
{
    struct epoll_event e = {.events = EPOLLIN};
    long s = slot_take(i, READING);

    e.data.u64 = (uint64_t)s;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fds[i], &e) < 0) {
        slot_fail(ph, s, errno);
        return;
    }
    slot_request(ph, s);
}

static void
expire(struct phase *ph, double t)
{
    long s;

    for (s = 0; s < o.inflight; s++)
        if (slots[s].step != FREE && slots[s].deadline < t)
            slot_fail(ph, s, ETIMEDOUT);
}

/* One phase: start(ph, i) for every i that wants it, at most INFLIGHT at
 * a time, and run the loop until every one ended. */
static void
run_phase(struct phase *ph, const char *name,
          void (*start)(struct phase *, long), bool only_open)
{
    struct epoll_event evs[512];
    double t0 = now(), last_scan = t0, last_log = t0;
    long next = 0, k;
    int n;

    memset(ph, 0, sizeof(*ph));
    for (;;) {
        while (nfree > 0 && next < o.n) {
            if (!only_open || fds[next] >= 0)
                start(ph, next);
            next++;
        }
        if (next >= o.n && nfree == o.inflight)
            break;
        n = epoll_wait(epfd, evs, 512, 100);
        for (k = 0; k < n; k++)
            slot_event(ph, (long)evs[k].data.u64, evs[k].events);
        double t = now();
        if (t - last_scan >= 0.5) {
            expire(ph, t);
            last_scan = t;
        }
        if (t - last_log >= 5) {
            fprintf(stderr, "conn1m: %s: %ld of %ld started, %ld ok\n", name,
                    next, o.n, ph->ok);
            last_log = t;
        }
    }
    ph->seconds = now() - t0;
    fprintf(stderr, "conn1m: %s: %ld ok in %.2f s\n", name, ph->ok,
            ph->seconds);
}

/* The server's "Active connections" (nginx stub_status), or -1. */
static long
server_active(void)
{
    struct timeval tv = {.tv_sec = 2};
    char req[256], buf[1024];
    size_t len = 0;
    ssize_t got;
    long active = -1;
    const char *p;
    int fd, rl;

    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    rl = snprintf(req, sizeof(req),
                  "GET %s HTTP/1.1\r\nHost: conn1m\r\n"
                  "Connection: close\r\n\r\n",
                  o.status_path);
    if (connect(fd, (struct sockaddr *)&o.dst, sizeof(o.dst)) == 0 &&
        send(fd, req, (size_t)rl, MSG_NOSIGNAL) == rl) {
        while (len < sizeof(buf) - 1 &&
               (got = recv(fd, buf + len, sizeof(buf) - 1 - len, 0)) > 0)
            len += (size_t)got;
        buf[len] = '\0';
        p = strstr(buf, "Active connections:");
        if (p != NULL)
            active = strtol(p + 19, NULL, 10);
    }
    close(fd);
    return active;
}

static void
wait_go(void)
{
    struct stat st;
    double until = now() + o.hold;
    struct timespec ms100 = {.tv_nsec = 100 * 1000 * 1000};

    while (now() < until)
        nanosleep(&ms100, NULL);
    while (o.gofile != NULL && stat(o.gofile, &st) < 0)
        nanosleep(&ms100, NULL);
}

static void
print_fails(const char *key, const struct phase *ph)
{
    bool comma = false;
    int c;

    printf("  \"%s\": {", key);
    for (c = 0; c < NCODE; c++) {
        if (ph->fail[c] == 0)
            continue;
        printf("%s\"%s\": %ld", comma ? ", " : "", code_name(c), ph->fail[c]);
        comma = true;
    }
    printf("},\n");
}

static long
open_count(void)
{
    long i, k = 0;

    for (i = 0; i < o.n; i++)
        k += fds[i] >= 0;
    return k;
}

static int
parse_args(int argc, char **argv)
{
    char *colon, *end;
    struct in_addr a;
    int c;

    while ((c = getopt(argc, argv, "n:f:H:g:u:s:t:C:")) != -1) {
        switch (c) {
        case 'n':
            o.n = strtol(optarg, &end, 10);
            break;
        case 'f':
            o.inflight = strtol(optarg, &end, 10);
            break;
        case 'H':
            o.hold = strtod(optarg, &end);
            break;
        case 't':
            o.timeout = strtod(optarg, &end);
            break;
        case 'C':
            o.close_timeout = strtod(optarg, &end);
            break;
        case 'g':
            o.gofile = optarg;
            continue;
        case 'u':
            o.path = optarg;
            continue;
        case 's':
            o.status_path = optarg;
            continue;
        default:
            return -1;
        }
        if (*end != '\0')
            return -1;
    }
    if (argc - optind != 3 || o.n < 1 || o.inflight < 1 || o.hold < 0 ||
        o.timeout <= 0 || o.close_timeout <= 0)
        return -1;
    colon = strchr(argv[optind], ':');
    if (colon == NULL)
        return -1;
    *colon = '\0';
    o.dst.sin_family = AF_INET;
    o.dst.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, argv[optind], &o.dst.sin_addr) != 1 ||
        o.dst.sin_port == 0 || inet_pton(AF_INET, argv[optind + 1], &a) != 1)
        return -1;
    o.first_src = ntohl(a.s_addr);
    o.nsrc = (unsigned)strtoul(argv[optind + 2], &end, 10);
    if (*end != '\0' || o.nsrc < 1 || o.nsrc > 65536)
        return -1;
    if (o.inflight > o.n)
        o.inflight = o.n;
    return 0;
}

int
main(int argc, char **argv)
{
    struct phase setup, second;
    struct rlimit rl;
    long i, held, active_held, active = -1;
    double t0, closing_s, close_s = -1;

    if (parse_args(argc, argv) < 0) {
        fprintf(stderr, "usage: conn1m DST_IP:PORT FIRST_SRC NSRC -n N "
                        "[-f INFLIGHT] [-H HOLD] [-g GOFILE] [-u PATH] "
                        "[-s STATUS_PATH] [-t TIMEOUT] [-C CLOSE_TIMEOUT]\n");
        return 2;
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    request_len =
        (size_t)snprintf(request, sizeof(request),
                         "GET %s HTTP/1.1\r\nHost: conn1m\r\n\r\n", o.path);
    fds = malloc(sizeof(*fds) * (size_t)o.n);
    slots = calloc((size_t)o.inflight, sizeof(*slots));
    free_slots = malloc(sizeof(*free_slots) * (size_t)o.inflight);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (fds == NULL || slots == NULL || free_slots == NULL || epfd < 0) {
        perror("conn1m: setup");
        return 1;
    }
    for (i = 0; i < o.n; i++)
        fds[i] = -1;
    for (i = 0; i < o.inflight; i++)
        free_slots[nfree++] = o.inflight - 1 - i;

    run_phase(&setup, "setup", start_connect, false);
    held = open_count();
    active_held = server_active();
    fprintf(stderr, "conn1m: holding %ld connections (server: %ld active)\n",
            held, active_held);
    wait_go();
    run_phase(&second, "second", start_request, true);

    t0 = now();
    for (i = 0; i < o.n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    closing_s = now() - t0;
    while (now() - t0 < o.close_timeout) {
        active = server_active();
        if (active >= 0 && active <= 1) {
            close_s = now() - t0;
            break;
        }
        struct timespec ms20 = {.tv_nsec = 20 * 1000 * 1000};
        nanosleep(&ms20, NULL);
    }
    fprintf(stderr, "conn1m: closed in %.2f s, server done after %.2f s\n",
            closing_s, close_s);

    printf("{\n  \"conns\": %ld,\n  \"sources\": %u,\n  \"inflight\": %ld,\n",
           o.n, o.nsrc, o.inflight);
    printf("  \"established\": %ld,\n  \"setup_s\": %.3f,\n"
           "  \"setup_rate\": %.1f,\n",
           setup.ok, setup.seconds,
           setup.seconds > 0 ? (double)setup.ok / setup.seconds : 0.0);
    print_fails("setup_failures", &setup);
    printf("  \"server_active_held\": %ld,\n  \"hold_s\": %.1f,\n", active_held,
           o.hold);
    printf("  \"second_attempted\": %ld,\n  \"second_ok\": %ld,\n"
           "  \"second_s\": %.3f,\n",
           held, second.ok, second.seconds);
    print_fails("second_failures", &second);
    printf("  \"closing_s\": %.3f,\n", closing_s);
    if (close_s < 0)
        printf("  \"close_s\": null,\n");
    else
        printf("  \"close_s\": %.3f,\n", close_s);
    printf("  \"server_active_after\": %ld\n}\n", active);
    return 0;
}
