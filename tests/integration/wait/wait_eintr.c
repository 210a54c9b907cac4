/*
 * wait_eintr: blocking calls interrupted by a signal handler, the way
 * Linux does it (signal(7)). Run under accel-run with a long spin
 * (ACCEL_POLL_USEC=10000000) it proves that a thread spinning in the
 * library still ends its wait on a signal: every wait below has a 3 s
 * timeout, far shorter than the 10 s spin, so a spin that missed the
 * signal would end with the timeout (0 / EAGAIN) instead of EINTR.
 *
 * The peer (wait_peer.py serve) echoes each line, except "connect PORT",
 * which makes it connect back to this program's address:PORT, and "sink",
 * after which it stops reading that connection.
 *
 * Each case arms a 200 ms one-shot SIGALRM, makes one blocking call, and
 * prints one line, the same on the kernel and under accel-run:
 *   CASE rc=VALUE errno=NAME handlers=N
 * VALUE is -1, 0, "fd" (a new descriptor), "data" (bytes received),
 * "partial" (a send cut short: more than 0, less than asked).
 *
 * usage: wait_eintr PEER_IP PEER_PORT LISTEN_IP LISTEN_PORT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define WAIT_S 3 /* every timed wait; the spin is longer */
#define BIG (64u << 20)

static _Atomic int handlers;
static struct sockaddr_in peer_addr, listen_addr;

static void
on_alarm(int sig)
{
    (void)sig;
    atomic_fetch_add(&handlers, 1);
}

static void
die(const char *what)
{
    printf("FAIL: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Install the SIGALRM handler (with or without SA_RESTART), reset the
 * count, and fire the signal once in 200 ms. */
static void
arm(bool restart)
{
    struct sigaction sa;
    struct itimerval it = {.it_value = {.tv_usec = 200000}};

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0)
        die("sigaction");
    atomic_store(&handlers, 0);
    if (setitimer(ITIMER_REAL, &it, NULL) != 0)
        die("setitimer");
}

static void
report(const char *name, long rc, int err, const char *value)
{
    char buf[32];

    if (value == NULL) {
        snprintf(buf, sizeof(buf), "%ld", rc);
        value = buf;
    }
    printf("%s rc=%s errno=%s handlers=%d\n", name, value,
           rc < 0 ? strerrorname_np(err) : "0", atomic_load(&handlers));
    fflush(stdout);
}

static int
connect_peer(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        die("socket");
    if (connect(fd, (struct sockaddr *)&peer_addr, sizeof(peer_addr)) != 0)
        die("connect to the peer");
    return fd;
}

static void
set_timeo(int fd, int opt, int sec)
{
    struct timeval tv = {.tv_sec = sec};

    if (setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv)) != 0)
        die("setsockopt timeo");
}

/* A helper thread: once the handler ran, send line on fd (with SIGALRM
 * blocked, so the signal goes to the main thread). */
struct after_arg {
    int fd;
    const char *line;
};

static void *
after_handler(void *p)
{
    struct after_arg *a = p;

    while (atomic_load(&handlers) == 0)
        usleep(10000);
    usleep(100000); /* let the interrupted call go back to waiting */
    if (send(a->fd, a->line, strlen(a->line), 0) < 0)
        die("helper send");
    return NULL;
}

static pthread_t
start_after(struct after_arg *a)
{
    sigset_t set, old;
    pthread_t t;

    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    if (pthread_create(&t, NULL, after_handler, a) != 0)
        die("pthread_create");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return t;
}

static void
recv_cases(int fd)
{
    char buf[64];
    struct after_arg a = {.fd = fd, .line = "ping\n"};
    pthread_t t;
    long rc;

    arm(false);
    rc = recv(fd, buf, sizeof(buf), 0);
    report("recv_norestart", rc, errno, NULL);

    set_timeo(fd, SO_RCVTIMEO, WAIT_S);
    arm(false);
    rc = recv(fd, buf, sizeof(buf), 0);
    report("recv_norestart_rcvtimeo", rc, errno, NULL);

    /* SO_RCVTIMEO set: never restarted, even with SA_RESTART. */
    arm(true);
    rc = read(fd, buf, sizeof(buf));
    report("read_restart_rcvtimeo", rc, errno, NULL);
    set_timeo(fd, SO_RCVTIMEO, 0);

    /* SA_RESTART, no timeout: the call goes on after the handler and
     * returns the echo of what the helper sends then. */
    arm(true);
    t = start_after(&a);
    rc = recv(fd, buf, sizeof(buf), 0);
    report("recv_restart", rc, errno, rc > 0 ? "data" : NULL);
    pthread_join(t, NULL);
}

static void
accept_cases(int ctl)
{
    char line[64];
    struct after_arg a = {.fd = ctl, .line = line};
    int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);
    pthread_t t;
    long rc;

    if (lfd < 0)
        die("socket");
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(lfd, (struct sockaddr *)&listen_addr, sizeof(listen_addr)) != 0)
        die("bind");
    if (listen(lfd, 8) != 0)
        die("listen");

    set_timeo(lfd, SO_RCVTIMEO, WAIT_S);
    arm(false);
    rc = accept(lfd, NULL, NULL);
    report("accept_norestart_rcvtimeo", rc, errno, NULL);
    set_timeo(lfd, SO_RCVTIMEO, 0);

    arm(false);
    rc = accept(lfd, NULL, NULL);
    report("accept_norestart", rc, errno, NULL);

    /* SA_RESTART: accept goes on and takes the connection the peer makes
     * after the handler ran. */
    snprintf(line, sizeof(line), "connect %d\n", ntohs(listen_addr.sin_port));
    arm(true);
    t = start_after(&a);
    rc = accept(lfd, NULL, NULL);
    report("accept_restart", rc, errno, rc >= 0 ? "fd" : NULL);
    pthread_join(t, NULL);
    if (rc >= 0)
        close((int)rc);
    close(lfd);
}

/* epoll, poll and select are never restarted (signal(7)): EINTR even
 * with SA_RESTART. */
static void
mux_cases(int fd)
{
    struct epoll_event ev = {.events = EPOLLIN};
    struct pollfd p = {.fd = fd, .events = POLLIN};
    struct timespec ts = {.tv_sec = WAIT_S};
    struct timeval tv;
    fd_set r;
    int ep = epoll_create1(0);
    long rc;

    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        die("epoll");
    arm(true);
    rc = epoll_wait(ep, &ev, 1, WAIT_S * 1000);
    report("epoll_wait_restart", rc, errno, NULL);
    arm(true);
    rc = epoll_pwait(ep, &ev, 1, WAIT_S * 1000, NULL);
    report("epoll_pwait_restart", rc, errno, NULL);
    close(ep);

    arm(true);
    rc = poll(&p, 1, WAIT_S * 1000);
    report("poll_restart", rc, errno, NULL);
    arm(true);
    rc = ppoll(&p, 1, &ts, NULL);
    report("ppoll_restart", rc, errno, NULL);

    FD_ZERO(&r);
    FD_SET(fd, &r);
    tv = (struct timeval){.tv_sec = WAIT_S};
    arm(true);
    rc = select(fd + 1, &r, NULL, NULL, &tv);
    report("select_restart", rc, errno, NULL);
    FD_ZERO(&r);
    FD_SET(fd, &r);
    arm(true);
    rc = pselect(fd + 1, &r, NULL, NULL, &ts, NULL);
    report("pselect_restart", rc, errno, NULL);
}

/* A send blocked on a full window: cut short after some bytes went, it
 * returns the count; with none sent, EINTR. */
static void
send_cases(void)
{
    char *big = calloc(1, BIG);
    int fd = connect_peer();
    long rc;

    if (big == NULL)
        die("calloc");
    if (send(fd, "sink\n", 5, 0) != 5)
        die("send sink");
    usleep(200000); /* the peer stops reading */
    arm(false);
    rc = send(fd, big, BIG, 0);
    report("send_norestart", rc, errno,
           rc > 0 && rc < (long)BIG ? "partial" : NULL);
    /* A send buffer of fixed size, far below what is queued: Linux stops
     * growing it (autotuning could otherwise make room while the next
     * send waits, and that send would return a partial count). */
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){4096}, sizeof(int)) != 0)
        die("setsockopt SO_SNDBUF");
    arm(false);
    rc = send(fd, big, BIG, 0);
    report("send_full_norestart", rc, errno,
           rc > 0 && rc < (long)BIG ? "partial" : NULL);
    free(big);
    close(fd);
}

static void
addr(struct sockaddr_in *a, const char *ip, const char *port)
{
    memset(a, 0, sizeof(*a));
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)atoi(port));
    if (inet_pton(AF_INET, ip, &a->sin_addr) != 1) {
        fprintf(stderr, "bad address %s\n", ip);
        exit(2);
    }
}

int
main(int argc, char **argv)
{
    int fd;

    if (argc != 5) {
        fprintf(stderr,
                "usage: wait_eintr PEER_IP PEER_PORT LISTEN_IP LISTEN_PORT\n");
        return 2;
    }
    addr(&peer_addr, argv[1], argv[2]);
    addr(&listen_addr, argv[3], argv[4]);
    fd = connect_peer();
    recv_cases(fd);
    accept_cases(fd);
    mux_cases(fd);
    close(fd);
    send_cases();
    printf("END\n");
    return 0;
}
