/*
 * fork_server: a pre-forking TCP echo server (the nginx/apache model). The
 * parent creates the listening socket, forks NCHILD children and never
 * accepts: it only waits for them. Every child accepts on the inherited
 * listener, sends a greeting line with its pid ("PID\n") on each accepted
 * connection and then echoes what it reads until the client's EOF.
 *
 * MODE selects how a child waits:
 *   block  blocking accept(), then blocking read/write on the connection;
 *          one connection at a time
 *   epoll  an epoll set made in the child after fork, holding the
 *          (non-blocking) listener; after accept4 the listener leaves the
 *          set and the connection joins it until EOF (one connection at a
 *          time; a child that loses the accept race gets EAGAIN and waits
 *          again)
 *   multi  an epoll set holding the listener and every accepted
 *          connection: each child serves many connections at once
 *
 * In block and epoll modes a child holds one connection until its EOF, so
 * a client that keeps NCHILD connections open at once proves that NCHILD
 * different children accepted them.
 *
 * stdout: "parent PID", one "child PID" per child, then on SIGTERM (or when
 * a child dies on its own) one "exit PID status=exit:N|signal:N" per child
 * reaped, and "parent done". A child prints "FAIL: child PID: ..." and
 * exits 1 when a socket call on the inherited listener fails.
 *
 * usage: fork_server IP PORT NCHILD block|epoll|multi
 */
#define _GNU_SOURCE
#include "fk.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CHILDREN 16

enum mode { M_BLOCK, M_EPOLL, M_MULTI };

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
    (void)sig;
    stop = 1;
}

/* Send the greeting line: this child's pid. */
static void
greet(int c)
{
    char line[32];
    int n = snprintf(line, sizeof(line), "%d\n", (int)getpid());
    int r = fk_write_all(c, line, (size_t)n);

    if (r < 0)
        fk_die("greeting", "send: %s", strerror(-r));
}

/*
 * Echo one read's worth of data; returns 1 while the connection is open,
 * 0 at EOF. A reset by the peer ends the connection too (the client test
 * of a killed sibling may reset its own connections); other errors fail.
 */
static int
echo_once(int c)
{
    char buf[65536];
    ssize_t n = read(c, buf, sizeof(buf));
    int r;

    if (n < 0 && errno == EINTR)
        return 1;
    if (n < 0 && errno == ECONNRESET)
        return 0;
    if (n < 0)
        fk_die("echo", "read: %s", strerror(errno));
    if (n == 0)
        return 0;
    r = fk_write_all(c, buf, (size_t)n);
    if (r == -ECONNRESET || r == -EPIPE)
        return 0;
    if (r < 0)
        fk_die("echo", "write: %s", strerror(-r));
    return 1;
}

static void
child_block(int l)
{
    for (;;) {
        int c = accept(l, NULL, NULL);

        if (c < 0 && errno == EINTR)
            continue;
        if (c < 0)
            fk_die("accept on the inherited listener", "%s", strerror(errno));
        greet(c);
        while (echo_once(c))
            ;
        if (close(c) < 0)
            fk_die("close", "%s", strerror(errno));
    }
}

static void
ep_ctl(int ep, int op, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

    if (epoll_ctl(ep, op, fd, &ev) < 0)
        fk_die("epoll_ctl", "op %d fd %d: %s", op, fd, strerror(errno));
}

static int
ep_wait_one(int ep, struct epoll_event *ev)
{
    for (;;) {
        int n = epoll_wait(ep, ev, 1, -1);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            fk_die("epoll_wait", "%s", strerror(errno));
        if (n == 1)
            return ev->data.fd;
    }
}

static void
child_epoll(int l)
{
    struct epoll_event ev;
    int ep = epoll_create1(EPOLL_CLOEXEC);

    if (ep < 0)
        fk_die("epoll_create1", "%s", strerror(errno));
    ep_ctl(ep, EPOLL_CTL_ADD, l);
    for (;;) {
        int c;

        ep_wait_one(ep, &ev);
        if (ev.events & (EPOLLERR | EPOLLHUP))
            fk_die("epoll on the inherited listener", "events 0x%x", ev.events);
        c = accept4(l, NULL, NULL, 0);
        if (c < 0 && (errno == EAGAIN || errno == EINTR))
            continue; /* a sibling took it */
        if (c < 0)
            fk_die("accept4 on the inherited listener", "%s", strerror(errno));
        ep_ctl(ep, EPOLL_CTL_DEL, l);
        ep_ctl(ep, EPOLL_CTL_ADD, c);
        greet(c);
        do
            ep_wait_one(ep, &ev);
        while (echo_once(c));
        ep_ctl(ep, EPOLL_CTL_DEL, c);
        if (close(c) < 0)
            fk_die("close", "%s", strerror(errno));
        ep_ctl(ep, EPOLL_CTL_ADD, l);
    }
}

static void
child_multi(int l)
{
    struct epoll_event ev;
    int ep = epoll_create1(EPOLL_CLOEXEC);

    if (ep < 0)
        fk_die("epoll_create1", "%s", strerror(errno));
    ep_ctl(ep, EPOLL_CTL_ADD, l);
    for (;;) {
        int fd = ep_wait_one(ep, &ev);

        if (fd == l) {
            int c = accept4(l, NULL, NULL, 0);
            if (c < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (c < 0)
                fk_die("accept4 on the inherited listener", "%s",
                       strerror(errno));
            ep_ctl(ep, EPOLL_CTL_ADD, c);
            greet(c);
        } else if (!echo_once(fd)) {
            if (close(fd) < 0) /* also leaves the epoll set */
                fk_die("close", "%s", strerror(errno));
        }
    }
}

static void
print_status(pid_t pid, int st)
{
    if (WIFEXITED(st))
        printf("exit %d status=exit:%d\n", (int)pid, WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        printf("exit %d status=signal:%d\n", (int)pid, WTERMSIG(st));
    else
        printf("exit %d status=0x%x\n", (int)pid, st);
    fflush(stdout);
}

int
main(int argc, char **argv)
{
    pid_t kids[MAX_CHILDREN];
    struct sigaction sa;
    int l, n, i, alive;
    enum mode mode;

    if (argc != 5) {
        fprintf(stderr,
                "usage: fork_server IP PORT NCHILD block|epoll|multi\n");
        return 2;
    }
    n = atoi(argv[3]);
    if (n < 1 || n > MAX_CHILDREN)
        fk_die("args", "NCHILD must be 1..%d", MAX_CHILDREN);
    if (strcmp(argv[4], "block") == 0)
        mode = M_BLOCK;
    else if (strcmp(argv[4], "epoll") == 0)
        mode = M_EPOLL;
    else if (strcmp(argv[4], "multi") == 0)
        mode = M_MULTI;
    else
        fk_die("args", "unknown mode '%s'", argv[4]);

    signal(SIGPIPE, SIG_IGN);
    l = fk_listen(argv[1], atoi(argv[2]));
    if (mode != M_BLOCK && fcntl(l, F_SETFL, O_NONBLOCK) < 0)
        fk_die("listener O_NONBLOCK", "%s", strerror(errno));
    printf("parent %d\n", (int)getpid());
    fflush(stdout);

    for (i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            fk_die("fork", "%s", strerror(errno));
        if (pid == 0) {
            fk_set_child();
            signal(SIGTERM, SIG_DFL);
            if (mode == M_BLOCK)
                child_block(l);
            else if (mode == M_EPOLL)
                child_epoll(l);
            else
                child_multi(l);
            _exit(1);
        }
        kids[i] = pid;
        printf("child %d\n", (int)pid);
        fflush(stdout);
    }

    /* The parent keeps the listener open and never accepts. */
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    for (alive = n; alive > 0;) {
        int st;
        pid_t pid;

        if (stop) {
            for (i = 0; i < n; i++)
                if (kids[i] > 0)
                    kill(kids[i], SIGTERM);
        }
        pid = waitpid(-1, &st, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            fk_die("waitpid", "%s", strerror(errno));
        for (i = 0; i < n; i++)
            if (kids[i] == pid)
                kids[i] = -1;
        print_status(pid, st);
        alive--;
    }
    printf("parent done\n");
    fflush(stdout);
    return 0;
}
