/*
 * threads: multi-threaded socket use, run once on the kernel and once
 * under accel-run by tests/integration/threads.sh, which checks that both
 * runs print the same result lines.
 *
 *   threads MYIP PEERIP PEERPORT CASE...     (CASE "all": every case)
 *
 * The peer (threads/peer.py, on the kernel in the peer namespace) echoes,
 * holds connections by name and writes to them on request. Each case
 * prints "CASE: what happened" (compared between the two runs) and the
 * program checks it against Linux's behaviour, printing "ok: CASE" or
 * "FAIL: CASE: why" (exit 1).
 *
 *   parallel      8 connections, each with a writer and a reader thread,
 *                 2 MB through each, compared byte for byte
 *   recv_send     one thread blocked in recv, another sends on the same
 *                 socket (200 round trips)
 *   epoll_send    one thread blocked in epoll_wait, another sends
 *   close_recv    fd closed while another thread is blocked in recv on
 *                 it: the recv keeps waiting, gets data sent later, and
 *                 the connection closes when the recv returns; the fd
 *                 number, reused meanwhile by a pipe, works as a pipe
 *   shutdown_recv shutdown(SHUT_RDWR) wakes the blocked recv with 0
 *   close_accept  listener closed while accept blocks: accept keeps
 *                 waiting and returns the connection made afterwards
 *   close_accept_any, close_udp_any  the same for a listener and a UDP
 *                 socket on INADDR_ANY (served by the kernel too): the
 *                 number, reused by a kernel socket on loopback holding a
 *                 connection or a datagram, is not touched by the blocked
 *                 call
 *   connect_udp_any a UDP socket on INADDR_ANY is connected to loopback
 *                 (it moves to the kernel) while another thread is blocked
 *                 in recv on it: the recv gets the peer's datagram
 *   shutdown_accept shutdown(SHUT_RDWR) on the listener wakes accept
 *   close_epoll   an fd closed while epoll_wait blocks on its set is no
 *                 longer reported; with a dup of it open, it still is
 *   churn         8 threads creating and closing sockets (connected,
 *                 unconnected, UDP) and pipes, fd numbers reused across
 *                 kinds; every round trip checked, no fd leaked
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NPAR 8
#define PAR_BYTES (2u << 20)
#define ROUNDS 200
#define CHURN_THREADS 8
#define CHURN_ITERS 150
#define SETTLE_MS 300

static const char *my_ip, *peer_ip;
static int peer_port;
static int failed;

static void
die(const char *c, const char *fmt, ...)
{
    va_list ap;

    printf("FAIL: %s: ", c);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(1);
}

static void
result(const char *c, const char *fmt, ...)
{
    va_list ap;

    printf("%s: ", c);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

static void
expect(const char *c, int cond, const char *what)
{
    if (!cond) {
        printf("FAIL: %s: %s\n", c, what);
        failed = 1;
    }
    fflush(stdout);
}

static void
msleep(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static struct sockaddr_in
addr(const char *ip, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};

    if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
        die("args", "bad address %s", ip);
    return a;
}

static int
write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static ssize_t
read_exact(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = recv(fd, (char *)buf + got, len - got, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* A connection to the peer whose first line is `hello` ("echo", "hold
 * NAME", or a control command). */
static int
peer_conn(const char *c, const char *hello)
{
    struct sockaddr_in a = addr(peer_ip, peer_port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    char line[128];

    if (fd < 0)
        die(c, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        die(c, "connect to the peer: %s", strerror(errno));
    snprintf(line, sizeof(line), "%s\n", hello);
    if (write_all(fd, line, strlen(line)) != 0)
        die(c, "send to the peer: %s", strerror(errno));
    return fd;
}

/* A control command; returns the peer's one-line answer (a static buffer
 * per thread, overwritten by the next command). */
static const char *
peer_cmd(const char *c, const char *cmd)
{
    static __thread char ans[64];
    int fd = peer_conn(c, cmd);
    size_t n = 0;

    while (n + 1 < sizeof(ans)) {
        ssize_t r = recv(fd, ans + n, 1, 0);

        if (r <= 0 || ans[n] == '\n')
            break;
        n++;
    }
    ans[n] = '\0';
    close(fd);
    return ans;
}

static unsigned char
pattern(uint64_t off, unsigned int seed)
{
    return (unsigned char)(((off + seed) * 2654435761u) >> 13 ^ off ^ seed);
}

/* Wait until thread tid sleeps in the kernel (its state is S) after it
 * set *flag, just before its blocking call. */
static void
wait_blocked(const char *c, atomic_int *flag, pid_t tid)
{
    char path[64], buf[256];

    for (int i = 0; i < 5000; i++) {
        if (atomic_load(flag)) {
            FILE *f;
            char *p;

            snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
            f = fopen(path, "r");
            if (f != NULL) {
                size_t n = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
                buf[n] = '\0';
                p = strrchr(buf, ')');
                if (p != NULL && p[1] == ' ' && p[2] == 'S') {
                    msleep(50);
                    return;
                }
            }
        }
        msleep(1);
    }
    die(c, "the thread never blocked");
}

static int
count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own fd */
}

/* ---- parallel -------------------------------------------------------- */

struct par {
    int fd;
    unsigned int seed;
    const char *err;
};

static void *
par_writer(void *arg)
{
    struct par *p = arg;
    unsigned char buf[16384];

    for (size_t off = 0; off < PAR_BYTES; off += sizeof(buf)) {
        for (size_t i = 0; i < sizeof(buf); i++)
            buf[i] = pattern(off + i, p->seed);
        if (write_all(p->fd, buf, sizeof(buf)) != 0) {
            p->err = "send failed";
            return NULL;
        }
    }
    return NULL;
}

static void *
par_reader(void *arg)
{
    struct par *p = arg;
    unsigned char buf[10000];
    size_t off = 0;

    while (off < PAR_BYTES) {
        size_t want =
            PAR_BYTES - off < sizeof(buf) ? PAR_BYTES - off : sizeof(buf);
        ssize_t n = recv(p->fd, buf, want, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            p->err = n == 0 ? "early EOF" : "recv failed";
            return NULL;
        }
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] != pattern(off + (size_t)i, p->seed)) {
                p->err = "data differs";
                return NULL;
            }
        off += (size_t)n;
    }
    return NULL;
}

static void
case_parallel(void)
{
    const char *c = "parallel";
    struct par w[NPAR], r[NPAR];
    pthread_t tw[NPAR], tr[NPAR];
    int good = 0;

    for (int i = 0; i < NPAR; i++) {
        int fd = peer_conn(c, "echo");

        w[i] = (struct par){.fd = fd, .seed = (unsigned int)i * 7919};
        r[i] = w[i];
        pthread_create(&tr[i], NULL, par_reader, &r[i]);
        pthread_create(&tw[i], NULL, par_writer, &w[i]);
    }
    for (int i = 0; i < NPAR; i++) {
        pthread_join(tw[i], NULL);
        pthread_join(tr[i], NULL);
        if (w[i].err == NULL && r[i].err == NULL)
            good++;
        else
            printf("connection %d: %s\n", i, w[i].err ? w[i].err : r[i].err);
        close(w[i].fd);
    }
    result(c, "%d of %d connections echoed %u bytes intact", good, NPAR,
           PAR_BYTES);
    expect(c, good == NPAR, "a connection lost or corrupted data");
}

/* ---- recv_send / epoll_send ------------------------------------------- */

struct pingpong {
    int fd, ep;
    atomic_int turn; /* round the receiver waits for */
    int got;
    const char *err;
};

static void *
pp_receiver(void *arg)
{
    struct pingpong *p = arg;
    uint32_t v;

    for (int i = 0; i < ROUNDS; i++) {
        /* Round i may be sent from now on: this thread is about to block
         * in epoll_wait or recv when it arrives. */
        atomic_store(&p->turn, i + 1);
        if (p->ep >= 0) {
            struct epoll_event ev;
            int n = epoll_wait(p->ep, &ev, 1, -1);

            if (n != 1 || !(ev.events & EPOLLIN)) {
                p->err = "epoll_wait did not report the data";
                break;
            }
        }
        if (read_exact(p->fd, &v, sizeof(v)) != sizeof(v) || v != (uint32_t)i) {
            p->err = "wrong or missing echo";
            break;
        }
        p->got++;
    }
    atomic_store(&p->turn, ROUNDS + 1); /* done: the sender stops */
    return NULL;
}

static void
case_pingpong(const char *c, bool use_epoll)
{
    struct pingpong p = {.fd = peer_conn(c, "echo"), .ep = -1};
    pthread_t t;
    int one = 1;

    setsockopt(p.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (use_epoll) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = p.fd};

        p.ep = epoll_create1(0);
        if (p.ep < 0 || epoll_ctl(p.ep, EPOLL_CTL_ADD, p.fd, &ev) != 0)
            die(c, "epoll: %s", strerror(errno));
    }
    pthread_create(&t, NULL, pp_receiver, &p);
    for (uint32_t i = 0; i < ROUNDS; i++) {
        while (atomic_load(&p.turn) < (int)i + 1)
            sched_yield();
        if (atomic_load(&p.turn) > ROUNDS)
            break;
        if (write_all(p.fd, &i, sizeof(i)) != 0)
            die(c, "send: %s", strerror(errno));
    }
    pthread_join(t, NULL);
    result(c, "%d of %d round trips seen by the other thread", p.got, ROUNDS);
    expect(c, p.got == ROUNDS, p.err ? p.err : "missing round trips");
    close(p.fd);
    if (p.ep >= 0)
        close(p.ep);
}

/* ---- close / shutdown while blocked ------------------------------------ */

struct blocked {
    int fd;
    bool accept;
    atomic_int entered, returned;
    pid_t tid;
    ssize_t rc;
    int err;
    char buf[64];
};

static void *
blocked_call(void *arg)
{
    struct blocked *b = arg;

    b->tid = (pid_t)syscall(SYS_gettid);
    atomic_store(&b->entered, 1);
    if (b->accept)
        b->rc = accept(b->fd, NULL, NULL);
    else
        b->rc = recv(b->fd, b->buf, sizeof(b->buf) - 1, 0);
    b->err = b->rc < 0 ? errno : 0;
    atomic_store(&b->returned, 1);
    return NULL;
}

static void
start_blocked(const char *c, struct blocked *b, pthread_t *t)
{
    pthread_create(t, NULL, blocked_call, b);
    while (!atomic_load(&b->entered))
        sched_yield();
    wait_blocked(c, &b->entered, b->tid);
}

static const char *
rc_text(const struct blocked *b)
{
    static char t[64];

    if (b->rc < 0)
        snprintf(t, sizeof(t), "-1 %s", strerrorname_np(b->err));
    else if (b->accept)
        snprintf(t, sizeof(t), "a new fd");
    else
        snprintf(t, sizeof(t), "%zd", b->rc);
    return t;
}

static void
case_close_recv(void)
{
    const char *c = "close_recv";
    struct blocked b = {.fd = peer_conn(c, "hold cr")};
    char ans[64], end[64];
    bool still;
    int pfd[2], reused;
    char x = 0;
    pthread_t t;

    start_blocked(c, &b, &t);
    close(b.fd);
    /* The number is free again: a pipe may take it while the recv on the
     * old socket is still blocked. */
    if (pipe(pfd) != 0)
        die(c, "pipe: %s", strerror(errno));
    reused = pfd[0] == b.fd || pfd[1] == b.fd;
    if (write(pfd[1], "p", 1) != 1 || read(pfd[0], &x, 1) != 1 || x != 'p')
        die(c, "a pipe on the reused number does not work");
    msleep(SETTLE_MS);
    still = !atomic_load(&b.returned);
    snprintf(ans, sizeof(ans), "%s", peer_cmd(c, "send cr late"));
    pthread_join(t, NULL);
    b.buf[b.rc > 0 ? b.rc : 0] = '\0';
    snprintf(end, sizeof(end), "%s", peer_cmd(c, "end cr"));
    result(c,
           "still blocked after close: %s; peer send: %s; recv returned %s "
           "'%s'; then the peer saw %s",
           still ? "yes" : "no", ans, rc_text(&b), b.buf, end);
    expect(c, reused, "the closed number was not reused by the pipe");
    expect(c, still, "close woke the blocked recv (Linux does not)");
    expect(c, b.rc == 4 && strcmp(b.buf, "late") == 0,
           "the recv did not return the data sent after the close");
    expect(c, strcmp(end, "eof") == 0,
           "the connection did not close when the recv returned");
    close(pfd[0]);
    close(pfd[1]);
}

static void
case_shutdown_recv(void)
{
    const char *c = "shutdown_recv";
    struct blocked b = {.fd = peer_conn(c, "hold sr")};
    const char *end;
    pthread_t t;

    start_blocked(c, &b, &t);
    if (shutdown(b.fd, SHUT_RDWR) != 0)
        die(c, "shutdown: %s", strerror(errno));
    pthread_join(t, NULL);
    end = peer_cmd(c, "end sr");
    result(c, "recv returned %s; the peer saw %s", rc_text(&b), end);
    expect(c, b.rc == 0, "shutdown did not end the recv with 0");
    expect(c, strcmp(end, "eof") == 0, "the peer did not see EOF");
    close(b.fd);
}

static int
listener_on(const char *c, const char *ip, int port)
{
    struct sockaddr_in a = addr(ip, port);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(fd, 16) != 0)
        die(c, "listener on %s:%d: %s", ip, port, strerror(errno));
    return fd;
}

static int
listener(const char *c, int port)
{
    return listener_on(c, my_ip, port);
}

static int
udp_on(const char *c, const char *ip, int port)
{
    struct sockaddr_in a = addr(ip, port);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        die(c, "udp socket on %s:%d: %s", ip, port, strerror(errno));
    return fd;
}

/* The listener on INADDR_ANY (served by the stack and, for loopback
 * clients, by the kernel too) is closed while accept blocks, and its
 * number goes to a kernel listener on loopback with a connection
 * waiting: the blocked accept must not take that connection, and must
 * still return the one made to the old listener afterwards. */
static void
case_close_accept_any(void)
{
    const char *c = "close_accept_any";
    struct blocked b = {.fd = listener_on(c, "0.0.0.0", 7313), .accept = true};
    struct sockaddr_in lo = addr("127.0.0.1", 7314);
    int l2, cl, a2, reused;
    char ans[64], cmd[96];
    bool still;
    pthread_t t;

    start_blocked(c, &b, &t);
    close(b.fd);
    l2 = listener_on(c, "127.0.0.1", 7314);
    reused = l2 == b.fd;
    cl = socket(AF_INET, SOCK_STREAM, 0);
    if (cl < 0 || connect(cl, (struct sockaddr *)&lo, sizeof(lo)) != 0)
        die(c, "loopback connect: %s", strerror(errno));
    msleep(SETTLE_MS);
    still = !atomic_load(&b.returned);
    fcntl(l2, F_SETFL, O_NONBLOCK);
    a2 = accept(l2, NULL, NULL);
    snprintf(cmd, sizeof(cmd), "connect cany %s 7313", my_ip);
    snprintf(ans, sizeof(ans), "%s", peer_cmd(c, cmd));
    pthread_join(t, NULL);
    result(c,
           "still blocked after close: %s; the new listener kept its "
           "connection: %s; peer connect: %s; accept returned %s",
           still ? "yes" : "no", a2 >= 0 ? "yes" : "no", ans, rc_text(&b));
    expect(c, reused, "the closed number was not reused by the new listener");
    expect(c, still, "the blocked accept returned after the close");
    expect(c, a2 >= 0,
           "the blocked accept took the new listener's "
           "connection");
    expect(c, b.rc >= 0, "accept did not return the peer's connection");
    if (b.rc >= 0)
        close((int)b.rc);
    if (a2 >= 0)
        close(a2);
    close(cl);
    close(l2);
}

/* The same for a UDP socket on INADDR_ANY blocked in recv: its number
 * goes to a kernel UDP socket on loopback holding a datagram, which the
 * blocked recv must not take. */
static void
case_close_udp_any(void)
{
    const char *c = "close_udp_any";
    struct blocked b = {.fd = udp_on(c, "0.0.0.0", 7315)};
    struct sockaddr_in lo = addr("127.0.0.1", 7316);
    char ans[64], cmd[96], own[8] = "";
    int u2, reused;
    ssize_t n2;
    bool still;
    pthread_t t;

    start_blocked(c, &b, &t);
    close(b.fd);
    u2 = udp_on(c, "127.0.0.1", 7316);
    reused = u2 == b.fd;
    if (sendto(u2, "own", 3, 0, (struct sockaddr *)&lo, sizeof(lo)) != 3)
        die(c, "loopback sendto: %s", strerror(errno));
    msleep(SETTLE_MS);
    still = !atomic_load(&b.returned);
    n2 = recv(u2, own, sizeof(own) - 1, MSG_DONTWAIT);
    own[n2 > 0 ? n2 : 0] = '\0';
    snprintf(cmd, sizeof(cmd), "udp %s 7315 late", my_ip);
    snprintf(ans, sizeof(ans), "%s", peer_cmd(c, cmd));
    pthread_join(t, NULL);
    b.buf[b.rc > 0 ? b.rc : 0] = '\0';
    result(c,
           "still blocked after close: %s; the new socket kept its "
           "datagram: '%s'; peer datagram: %s; recv returned %s '%s'",
           still ? "yes" : "no", own, ans, rc_text(&b), b.buf);
    expect(c, reused, "the closed number was not reused by the new socket");
    expect(c, still, "the blocked recv returned after the close");
    expect(c, strcmp(own, "own") == 0,
           "the blocked recv took the new socket's datagram");
    expect(c, b.rc == 4 && strcmp(b.buf, "late") == 0,
           "the recv did not return the datagram sent after the close");
    close(u2);
}

static void
case_close_accept(void)
{
    const char *c = "close_accept";
    struct blocked b = {.fd = listener(c, 7311), .accept = true};
    char cmd[96];
    const char *ans;
    bool still;
    pthread_t t;

    start_blocked(c, &b, &t);
    close(b.fd);
    msleep(SETTLE_MS);
    still = !atomic_load(&b.returned);
    snprintf(cmd, sizeof(cmd), "connect ca %s 7311", my_ip);
    ans = peer_cmd(c, cmd);
    pthread_join(t, NULL);
    result(c,
           "still blocked after close: %s; peer connect: %s; accept "
           "returned %s",
           still ? "yes" : "no", ans, rc_text(&b));
    expect(c, still, "close woke the blocked accept (Linux does not)");
    expect(c, b.rc >= 0, "accept did not return the connection");
    if (b.rc >= 0) {
        close((int)b.rc);
        ans = peer_cmd(c, "end ca");
        expect(c, strcmp(ans, "eof") == 0,
               "the accepted connection did not "
               "end with EOF");
    }
}

/* A UDP socket on INADDR_ANY, a thread blocked in recv on it, and another
 * thread connects it to a loopback address (the accelerated socket moves
 * to the kernel then): the blocked recv gets the datagram the connected
 * peer sends. */
static void
case_connect_udp_any(void)
{
    const char *c = "connect_udp_any";
    struct blocked b = {.fd = udp_on(c, "0.0.0.0", 7317)};
    struct sockaddr_in to = addr("127.0.0.1", 7317);
    struct sockaddr_in peer = addr("127.0.0.1", 7318);
    int p = udp_on(c, "127.0.0.1", 7318);
    pthread_t t;
    int rc;

    start_blocked(c, &b, &t);
    rc = connect(b.fd, (struct sockaddr *)&peer, sizeof(peer));
    if (sendto(p, "conn", 4, 0, (struct sockaddr *)&to, sizeof(to)) != 4)
        die(c, "loopback sendto: %s", strerror(errno));
    pthread_join(t, NULL);
    b.buf[b.rc > 0 ? b.rc : 0] = '\0';
    result(c, "connect returned %d; recv returned %s '%s'", rc, rc_text(&b),
           b.buf);
    expect(c, rc == 0, "connect failed");
    expect(c, b.rc == 4 && strcmp(b.buf, "conn") == 0,
           "the blocked recv did not get the datagram");
    close(p);
    close(b.fd);
}

static void
case_shutdown_accept(void)
{
    const char *c = "shutdown_accept";
    struct blocked b = {.fd = listener(c, 7312), .accept = true};
    pthread_t t;
    int rc;

    start_blocked(c, &b, &t);
    rc = shutdown(b.fd, SHUT_RDWR);
    pthread_join(t, NULL);
    result(c, "shutdown returned %d; accept returned %s", rc, rc_text(&b));
    expect(c, rc == 0, "shutdown of the listener failed");
    expect(c, b.rc < 0 && b.err == EINVAL,
           "accept did not end with EINVAL (Linux's answer)");
    close(b.fd);
}

/* ---- close while epoll_wait blocks ------------------------------------- */

struct epw {
    int ep;
    atomic_int entered;
    pid_t tid;
    int n;
    uint64_t tags[4];
};

static void *
epw_thread(void *arg)
{
    struct epw *w = arg;
    struct epoll_event ev[4];

    w->tid = (pid_t)syscall(SYS_gettid);
    atomic_store(&w->entered, 1);
    w->n = epoll_wait(w->ep, ev, 4, -1);
    for (int i = 0; i < w->n; i++)
        w->tags[i] = ev[i].data.u64;
    return NULL;
}

/* with_dup: a dup of the closed fd stays open (Linux then keeps the
 * registration: the file is still alive). */
static void
epoll_close_case(const char *c, bool with_dup)
{
    const char *n1 = with_dup ? "hold ed1" : "hold ec1";
    const char *n2 = with_dup ? "hold ed2" : "hold ec2";
    int a = peer_conn(c, n1), b = peer_conn(c, n2), d = -1;
    struct epw w = {.ep = epoll_create1(0)};
    struct epoll_event ev = {.events = EPOLLIN};
    bool seen1 = false, seen2 = false;
    pthread_t t;

    ev.data.u64 = 1;
    epoll_ctl(w.ep, EPOLL_CTL_ADD, a, &ev);
    ev.data.u64 = 2;
    epoll_ctl(w.ep, EPOLL_CTL_ADD, b, &ev);
    pthread_create(&t, NULL, epw_thread, &w);
    while (!atomic_load(&w.entered))
        sched_yield();
    wait_blocked(c, &w.entered, w.tid);
    if (with_dup)
        d = dup(a);
    close(a);
    /* Data for the closed fd first, then for the other one. */
    peer_cmd(c, with_dup ? "send ed1 x" : "send ec1 x");
    if (!with_dup) {
        msleep(SETTLE_MS);
        peer_cmd(c, "send ec2 y");
    }
    pthread_join(t, NULL);
    for (int i = 0; i < w.n; i++) {
        seen1 |= w.tags[i] == 1;
        seen2 |= w.tags[i] == 2;
    }
    result(c,
           "epoll_wait returned %d; closed fd reported: %s; other fd "
           "reported: %s",
           w.n, seen1 ? "yes" : "no", seen2 ? "yes" : "no");
    if (with_dup)
        expect(c, w.n == 1 && seen1,
               "the closed fd's dup keeps it registered: not reported");
    else
        expect(c, w.n == 1 && !seen1 && seen2,
               "the closed fd was still reported, or the other was not");
    if (d >= 0)
        close(d);
    close(b);
    close(w.ep);
}

/* ---- churn ------------------------------------------------------------- */

struct churn {
    unsigned int id;
    int bad;
    char why[96];
};

static void *
churn_thread(void *arg)
{
    struct churn *ch = arg;
    struct sockaddr_in pa = addr(peer_ip, peer_port);

    for (unsigned int i = 0; i < CHURN_ITERS && !ch->bad; i++) {
        int fd, pfd[2], u;
        char tok[32], back[32];
        size_t len;

        switch (i % 4) {
        case 0: /* a connection with one round trip */
            fd = socket(AF_INET, SOCK_STREAM, 0);
            len =
                (size_t)snprintf(tok, sizeof(tok), "echo\nt%u.%u.", ch->id, i);
            if (fd < 0 || connect(fd, (struct sockaddr *)&pa, sizeof(pa)) ||
                write_all(fd, tok, len) != 0 ||
                read_exact(fd, back, len - 5) != (ssize_t)(len - 5) ||
                memcmp(back, tok + 5, len - 5) != 0) {
                snprintf(ch->why, sizeof(ch->why), "round trip %u: %s", i,
                         strerror(errno));
                ch->bad = 1;
            }
            close(fd);
            break;
        case 1: /* a socket closed undecided */
            fd = socket(AF_INET, SOCK_STREAM, 0);
            close(fd);
            break;
        case 2: /* a pipe on a number a socket may just have had */
            if (pipe(pfd) != 0) {
                snprintf(ch->why, sizeof(ch->why), "pipe");
                ch->bad = 1;
                break;
            }
            len = (size_t)snprintf(tok, sizeof(tok), "%u.%u", ch->id, i);
            if (write(pfd[1], tok, len) != (ssize_t)len ||
                read(pfd[0], back, len) != (ssize_t)len ||
                memcmp(back, tok, len) != 0) {
                snprintf(ch->why, sizeof(ch->why), "pipe %u: %s", i,
                         strerror(errno));
                ch->bad = 1;
            }
            close(pfd[0]);
            close(pfd[1]);
            break;
        case 3: /* a UDP socket bound to our address, and a dup of it */
            u = socket(AF_INET, SOCK_DGRAM, 0);
            {
                struct sockaddr_in ua = addr(my_ip, 0);
                int d;

                if (u < 0 || bind(u, (struct sockaddr *)&ua, sizeof(ua))) {
                    snprintf(ch->why, sizeof(ch->why), "udp bind %u: %s", i,
                             strerror(errno));
                    ch->bad = 1;
                }
                d = dup(u);
                close(u);
                close(d);
            }
            break;
        }
    }
    return NULL;
}

static void
case_churn(void)
{
    const char *c = "churn";
    struct churn ch[CHURN_THREADS];
    pthread_t t[CHURN_THREADS];
    int before = count_fds(), after, bad = 0;

    for (unsigned int i = 0; i < CHURN_THREADS; i++) {
        ch[i] = (struct churn){.id = i};
        pthread_create(&t[i], NULL, churn_thread, &ch[i]);
    }
    for (int i = 0; i < CHURN_THREADS; i++) {
        pthread_join(t[i], NULL);
        if (ch[i].bad) {
            printf("thread %d: %s\n", i, ch[i].why);
            bad++;
        }
    }
    after = count_fds();
    result(c, "%d of %d threads without error; fds leaked: %d",
           CHURN_THREADS - bad, CHURN_THREADS, after - before);
    expect(c, bad == 0, "a thread saw an error");
    expect(c, after == before, "fds leaked");
}

/* ---- main ---------------------------------------------------------------- */

static void
run(const char *name)
{
    int was = failed;

    failed = 0;
    if (strcmp(name, "parallel") == 0)
        case_parallel();
    else if (strcmp(name, "recv_send") == 0)
        case_pingpong(name, false);
    else if (strcmp(name, "epoll_send") == 0)
        case_pingpong(name, true);
    else if (strcmp(name, "close_recv") == 0)
        case_close_recv();
    else if (strcmp(name, "shutdown_recv") == 0)
        case_shutdown_recv();
    else if (strcmp(name, "close_accept") == 0)
        case_close_accept();
    else if (strcmp(name, "close_accept_any") == 0)
        case_close_accept_any();
    else if (strcmp(name, "close_udp_any") == 0)
        case_close_udp_any();
    else if (strcmp(name, "connect_udp_any") == 0)
        case_connect_udp_any();
    else if (strcmp(name, "shutdown_accept") == 0)
        case_shutdown_accept();
    else if (strcmp(name, "close_epoll") == 0)
        epoll_close_case(name, false);
    else if (strcmp(name, "close_epoll_dup") == 0)
        epoll_close_case(name, true);
    else if (strcmp(name, "churn") == 0)
        case_churn();
    else
        die("args", "unknown case %s", name);
    if (!failed)
        printf("ok: %s\n", name);
    fflush(stdout);
    failed |= was;
}

int
main(int argc, char **argv)
{
    static const char *all[] = {"parallel",
                                "recv_send",
                                "epoll_send",
                                "close_recv",
                                "shutdown_recv",
                                "close_accept",
                                "close_accept_any",
                                "close_udp_any",
                                "connect_udp_any",
                                "shutdown_accept",
                                "close_epoll",
                                "close_epoll_dup",
                                "churn"};

    if (argc < 5) {
        fprintf(stderr, "usage: threads MYIP PEERIP PEERPORT CASE...\n");
        return 2;
    }
    my_ip = argv[1];
    peer_ip = argv[2];
    peer_port = atoi(argv[3]);
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "all") == 0)
            for (size_t j = 0; j < sizeof(all) / sizeof(all[0]); j++)
                run(all[j]);
        else
            run(argv[i]);
    }
    printf(failed ? "SOME FAILED\n" : "ALL OK\n");
    return failed;
}
