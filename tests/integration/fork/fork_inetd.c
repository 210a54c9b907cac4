/*
 * fork_inetd: accept-then-fork (the inetd model). The parent accepts a
 * connection, forks, and closes its copy of the connection right after
 * the fork; the child closes the listener and echoes the connection until
 * the client's EOF, then closes it and exits 0. The connection must live
 * on in the child after the parent's close (no FIN, no RST from it), and
 * the child's close must end it cleanly.
 *
 * The parent reaps finished children as it goes. On SIGTERM it stops
 * accepting, waits for the remaining children and prints
 * "accepted=N ok=N bad=N"; each child that did not exit 0 is reported as
 * "bad child PID status=..." and makes the exit status 1. A child prints
 * "FAIL: child PID: ..." on a failed socket call.
 *
 * usage: fork_inetd IP PORT
 */
#define _GNU_SOURCE
#include "fk.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static long n_ok, n_bad;

static void
on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static void
serve(int c)
{
    char buf[65536];

    for (;;) {
        ssize_t n = read(c, buf, sizeof(buf));
        int r;

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            fk_die("read on the connection accepted by the parent", "%s",
                   strerror(errno));
        if (n == 0)
            break;
        r = fk_write_all(c, buf, (size_t)n);
        if (r < 0)
            fk_die("write on the connection accepted by the parent", "%s",
                   strerror(-r));
    }
    if (close(c) < 0)
        fk_die("close", "%s", strerror(errno));
}

static void
reap(int options)
{
    int st;
    pid_t pid;

    while ((pid = waitpid(-1, &st, options)) > 0) {
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            n_ok++;
            continue;
        }
        n_bad++;
        if (WIFSIGNALED(st))
            printf("bad child %d status=signal:%d\n", (int)pid, WTERMSIG(st));
        else
            printf("bad child %d status=exit:%d\n", (int)pid, WEXITSTATUS(st));
        fflush(stdout);
    }
}

int
main(int argc, char **argv)
{
    struct sigaction sa;
    long accepted = 0;
    int l;

    if (argc != 3) {
        fprintf(stderr, "usage: fork_inetd IP PORT\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term; /* no SA_RESTART: accept returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    l = fk_listen(argv[1], atoi(argv[2]));
    printf("listening %s:%s\n", argv[1], argv[2]);
    fflush(stdout);

    while (!stop) {
        int c = accept(l, NULL, NULL);
        pid_t pid;

        if (c < 0 && errno == EINTR)
            continue;
        if (c < 0)
            fk_die("accept", "%s", strerror(errno));
        accepted++;
        pid = fork();
        if (pid < 0)
            fk_die("fork", "%s", strerror(errno));
        if (pid == 0) {
            fk_set_child();
            signal(SIGTERM, SIG_DFL);
            if (close(l) < 0)
                fk_die("close the inherited listener", "%s", strerror(errno));
            serve(c);
            _exit(0);
        }
        if (close(c) < 0)
            fk_die("parent close after fork", "%s", strerror(errno));
        reap(WNOHANG);
    }
    reap(0);
    printf("accepted=%ld ok=%ld bad=%ld\n", accepted, n_ok, n_bad);
    fflush(stdout);
    return n_bad ? 1 : 0;
}
