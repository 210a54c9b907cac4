/*
 * fork_keep: the parent keeps using a connection after forking a child
 * that never touches it.
 *
 *   connect: the parent connects to an echo peer at IP:PORT
 *   accept:  the parent listens on IP:PORT, accepts one connection from
 *            an echo peer, and closes the listener
 *
 * Before the fork the parent exchanges one line with the peer, so the
 * connection is established and in use. Then it forks a child that does
 * CHILD and never touches the connection:
 *
 *   _exit      sleeps 100 ms, _exit(0)
 *   exit       exit(0): atexit handlers and library destructors run
 *   system     system("true"), then exit(0)
 *   exec       execlp("true")
 *   recvblock  sleeps 300 ms, exit(0), while the parent is blocked in
 *              read(): the parent sent "delay\n" instead of "hello\n" and
 *              the peer echoes that line only after 1.5 s
 *
 * After the child has exited (reaped: exit status 0 required), the parent
 * sends BYTES pattern bytes and reads them back (poll, MSG_DONTWAIT),
 * compares them, and closes the connection with nothing unread (the peer
 * must see EOF, not RST). Each step prints "ok: ..."; the first failure
 * prints "FAIL: ..." and exits 1.
 *
 * usage: fork_keep connect|accept IP PORT _exit|exit|system|exec|recvblock
 *        BYTES
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

static void
run_child(const char *mode)
{
    fk_set_child();
    if (strcmp(mode, "_exit") == 0) {
        usleep(100000);
        _exit(0);
    } else if (strcmp(mode, "exit") == 0) {
        exit(0);
    } else if (strcmp(mode, "system") == 0) {
        int st = system("true");
        if (st != 0)
            fk_die("child system(\"true\")", "status 0x%x", st);
        exit(0);
    } else if (strcmp(mode, "exec") == 0) {
        execlp("true", "true", (char *)NULL);
        fk_die("child exec true", "%s", strerror(errno));
    } else if (strcmp(mode, "recvblock") == 0) {
        usleep(300000);
        exit(0);
    }
    fk_die("child", "unknown mode '%s'", mode);
}

static void
expect_line(int fd, const char *line)
{
    char buf[16];
    size_t len = strlen(line);
    ssize_t n = fk_read_exact(fd, buf, len);

    if (n < 0)
        fk_die("read the echoed line", "%s", strerror((int)-n));
    if ((size_t)n != len || memcmp(buf, line, len) != 0)
        fk_die("read the echoed line", "got %zd bytes, not the line sent", n);
}

static void
wait_child(pid_t pid)
{
    int st;

    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            fk_die("waitpid", "%s", strerror(errno));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fk_die("child status", "0x%x (want exit 0)", st);
    fk_ok("child exited 0");
}

int
main(int argc, char **argv)
{
    const char *role, *ip, *mode, *err;
    int fd, port, blockrecv, r;
    size_t bytes;
    pid_t pid;

    if (argc != 6) {
        fprintf(stderr, "usage: fork_keep connect|accept IP PORT "
                        "_exit|exit|system|exec|recvblock BYTES\n");
        return 2;
    }
    role = argv[1];
    ip = argv[2];
    port = atoi(argv[3]);
    mode = argv[4];
    bytes = strtoull(argv[5], NULL, 10);
    blockrecv = strcmp(mode, "recvblock") == 0;
    signal(SIGPIPE, SIG_IGN);

    if (strcmp(role, "connect") == 0) {
        fd = fk_connect(ip, port);
    } else if (strcmp(role, "accept") == 0) {
        int l = fk_listen(ip, port);
        fk_ok("listening on %s:%d", ip, port);
        fd = accept(l, NULL, NULL);
        if (fd < 0)
            fk_die("accept", "%s", strerror(errno));
        close(l);
    } else {
        fk_die("args", "unknown role '%s'", role);
    }
    fk_ok("%s: local %s", role, fk_sockname(fd, 0));

    r = fk_write_all(fd, blockrecv ? "delay\n" : "hello\n", 6);
    if (r < 0)
        fk_die("send the first line", "%s", strerror(-r));
    if (!blockrecv) {
        expect_line(fd, "hello\n");
        fk_ok("line echoed before fork");
    }

    fflush(stdout);
    pid = fork();
    if (pid < 0)
        fk_die("fork", "%s", strerror(errno));
    if (pid == 0)
        run_child(mode);

    if (blockrecv) {
        expect_line(fd, "delay\n"); /* the child exits meanwhile */
        fk_ok("blocking read returned the line after the child's exit");
    }
    wait_child(pid);

    err = fk_echo_bulk(fd, bytes);
    if (err)
        fk_die("echo after fork", "%s", err);
    fk_ok("echoed %zu bytes after the fork", bytes);
    if (close(fd) < 0)
        fk_die("close", "%s", strerror(errno));
    fk_ok("closed");
    printf("ALL OK\n");
    return 0;
}
