/*
 * fork_exec: fds and acceleration across exec.
 *
 * The parent first connects to an echo peer at PEER_IP:PORT (with
 * SOCK_CLOEXEC) and exchanges a line, so its own data path is running.
 * Then it opens
 *   - a pipe without O_CLOEXEC (the exec'd program reports through it),
 *   - a file without O_CLOEXEC holding "parent-wrote\n",
 *   - a pipe with O_CLOEXEC, a file with O_CLOEXEC and a file marked
 *     FD_CLOEXEC with fcntl,
 * and runs this same program as "--child ..." with those fd numbers,
 * either by fork + execv (MODE fork) or through system() (MODE system:
 * /bin/sh, then exec).
 *
 * The exec'd program checks that every close-on-exec fd (the three above
 * and the parent's connection) is closed (fcntl F_GETFD -> EBADF), that the
 * inherited file reads "parent-wrote\n" and takes "child-wrote\n", then
 * opens its own TCP connection to the peer: its local address must be
 * SUBJ_IP, the peer must report "from SUBJ_IP" for a "whoami" line, and
 * 256 KB must echo intact. It writes "exec-child ok\n" (or "exec-child
 * FAIL: ...") into the inherited pipe and exits 0 (or 1).
 *
 * The parent reads the pipe to EOF, reaps the child (exit 0 required),
 * reads the file back, and then echoes 1 MB over its own connection,
 * which must still work after the exec'd program has come and gone.
 * Steps print "ok: ..."; the first failure prints "FAIL: ..." and exits 1.
 *
 * usage: fork_exec PEER_IP PORT SUBJ_IP WORKDIR fork|system
 *        fork_exec --child PEER_IP PORT SUBJ_IP PIPE_W FILE CLOEXEC_FD...
 */
#define _GNU_SOURCE
#include "fk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CLOEXEC 8

static int report_fd = -1;

/* The exec'd program: report a failure through the pipe, then exit 1. */
static void
child_fail(const char *step, const char *why)
{
    char line[512];
    int n =
        snprintf(line, sizeof(line), "exec-child FAIL: %s: %s\n", step, why);

    if (report_fd >= 0)
        fk_write_all(report_fd, line, (size_t)n);
    fk_die(step, "%s", why);
}

static int
exec_child(int argc, char **argv)
{
    const char *peer_ip = argv[2], *subj_ip = argv[4], *err;
    int port = atoi(argv[3]), file = atoi(argv[6]), fd, i, r;
    char buf[64], want[64];
    ssize_t n;

    report_fd = atoi(argv[5]);
    if (fcntl(report_fd, F_GETFD) < 0)
        fk_die("inherited pipe", "fcntl F_GETFD: %s", strerror(errno));
    for (i = 7; i < argc; i++) {
        int cfd = atoi(argv[i]);
        errno = 0;
        r = fcntl(cfd, F_GETFD);
        if (r >= 0 || errno != EBADF) {
            snprintf(buf, sizeof(buf), "fd %d is open after exec (%d %s)", cfd,
                     r, strerror(errno));
            child_fail("close-on-exec fd", buf);
        }
    }
    fk_ok("exec'd: %d close-on-exec fds are closed (EBADF)", argc - 7);

    n = pread(file, buf, sizeof(buf), 0);
    if (n != 13 || memcmp(buf, "parent-wrote\n", 13) != 0)
        child_fail("inherited file", "does not read parent-wrote");
    if (write(file, "child-wrote\n", 12) != 12)
        child_fail("inherited file", strerror(errno));
    fk_ok("exec'd: inherited file read and written");

    /* On the interface its parent's stack drives, the exec'd program cannot
     * be accelerated (one process tree per interface, docs/DESIGN.md §8):
     * it runs on the kernel, which has no address in the accelerated netns,
     * so its connect must fail at once (no hang), and its parent's stack
     * must be left intact. FORK_EXEC_EXPECT=0 (not the kernel run) selects that
     * check. */
    if (getenv("FORK_EXEC_EXPECT") != NULL &&
        strcmp(getenv("FORK_EXEC_EXPECT"), "0") == 0) {
        struct sockaddr_in a = fk_addr(peer_ip, port);
        int s = socket(AF_INET, SOCK_STREAM, 0);

        if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
            child_fail("exec'd connection", "connected on the kernel");
        if (errno != ENETUNREACH && errno != EHOSTUNREACH)
            child_fail("exec'd connection", strerror(errno));
        close(s);
        fk_ok("exec'd: on the kernel, connect failed at once (%s)",
              strerror(errno));
        if (fk_write_all(report_fd, "exec-child ok\n", 14) < 0)
            fk_die("report", "%s", strerror(errno));
        _exit(0);
    }
    fd = fk_connect(peer_ip, port);
    if (strcmp(fk_sockname(fd, 0), subj_ip) != 0) {
        snprintf(buf, sizeof(buf), "local address %s, want %s",
                 fk_sockname(fd, 0), subj_ip);
        child_fail("exec'd connection", buf);
    }
    r = fk_write_all(fd, "whoami\n", 7);
    if (r < 0)
        child_fail("whoami", strerror(-r));
    snprintf(want, sizeof(want), "from %s\n", subj_ip);
    n = fk_read_exact(fd, buf, strlen(want));
    if (n != (ssize_t)strlen(want) || memcmp(buf, want, (size_t)n) != 0)
        child_fail("whoami", "the peer saw another source address");
    err = fk_echo_bulk(fd, 256 * 1024);
    if (err)
        child_fail("exec'd connection echo", err);
    close(fd);
    fk_ok("exec'd: connected from %s and echoed 256 KB", subj_ip);

    if (fk_write_all(report_fd, "exec-child ok\n", 14) < 0)
        fk_die("report", "%s", strerror(errno));
    return 0;
}

static int
open_file(const char *dir, const char *name, int flags)
{
    char path[PATH_MAX];
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | flags, 0644);
    if (fd < 0)
        fk_die("open", "%s: %s", path, strerror(errno));
    return fd;
}

int
main(int argc, char **argv)
{
    char self[PATH_MAX], nums[MAX_CLOEXEC + 3][16], cmd[PATH_MAX + 256];
    char *args[MAX_CLOEXEC + 10], buf[256];
    const char *dir, *mode, *err;
    int conn, p[2], pc[2], file, fc, fs, st, nargs = 0, i, r;
    size_t got = 0;
    ssize_t n;
    pid_t pid = -1;

    if (argc >= 7 && strcmp(argv[1], "--child") == 0)
        return exec_child(argc, argv);
    if (argc != 6) {
        fprintf(stderr, "usage: fork_exec PEER_IP PORT SUBJ_IP WORKDIR "
                        "fork|system\n");
        return 2;
    }
    dir = argv[4];
    mode = argv[5];
    signal(SIGPIPE, SIG_IGN);
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        fk_die("readlink /proc/self/exe", "%s", strerror(errno));
    self[n] = '\0';

    conn = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (conn < 0)
        fk_die("socket", "%s", strerror(errno));
    {
        struct sockaddr_in a = fk_addr(argv[1], atoi(argv[2]));
        if (connect(conn, (struct sockaddr *)&a, sizeof(a)) < 0)
            fk_die("connect", "%s", strerror(errno));
    }
    if (fk_write_all(conn, "hello\n", 6) < 0 ||
        fk_read_exact(conn, buf, 6) != 6 || memcmp(buf, "hello\n", 6) != 0)
        fk_die("parent hello", "no echo");
    fk_ok("parent connected from %s", fk_sockname(conn, 0));

    if (pipe2(p, 0) < 0 || pipe2(pc, O_CLOEXEC) < 0)
        fk_die("pipe2", "%s", strerror(errno));
    file = open_file(dir, "inherit.txt", 0);
    if (write(file, "parent-wrote\n", 13) != 13)
        fk_die("write file", "%s", strerror(errno));
    fc = open_file(dir, "cloexec.txt", O_CLOEXEC);
    fs = open_file(dir, "setfd.txt", 0);
    if (fcntl(fs, F_SETFD, FD_CLOEXEC) < 0)
        fk_die("F_SETFD", "%s", strerror(errno));

    /* argv of the exec'd program */
    args[nargs++] = self;
    args[nargs++] = "--child";
    args[nargs++] = argv[1];
    args[nargs++] = argv[2];
    args[nargs++] = argv[3];
    {
        int fds[] = {p[1], file, pc[0], pc[1], fc, fs, conn};
        for (i = 0; i < (int)(sizeof(fds) / sizeof(fds[0])); i++) {
            snprintf(nums[i], sizeof(nums[i]), "%d", fds[i]);
            args[nargs++] = nums[i];
        }
    }
    args[nargs] = NULL;

    fflush(stdout);
    if (strcmp(mode, "fork") == 0) {
        pid = fork();
        if (pid < 0)
            fk_die("fork", "%s", strerror(errno));
        if (pid == 0) {
            close(p[0]);
            execv(self, args);
            fk_set_child();
            fk_die("execv", "%s", strerror(errno));
        }
        fk_ok("forked; child execs %s --child", self);
    } else if (strcmp(mode, "system") == 0) {
        size_t off = 0;
        for (i = 0; i < nargs; i++)
            off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, "%s'%s'",
                                    i ? " " : "", args[i]);
        st = system(cmd);
        if (st != 0)
            fk_die("system", "status 0x%x for %s", st, cmd);
        fk_ok("system() ran %s --child", self);
    } else {
        fk_die("args", "unknown mode '%s'", mode);
    }

    close(p[1]);
    while (got < sizeof(buf) - 1 &&
           (n = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    if (pid > 0) {
        while (waitpid(pid, &st, 0) < 0)
            if (errno != EINTR)
                fk_die("waitpid", "%s", strerror(errno));
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fk_die("exec'd child status", "0x%x; it reported: %s", st, buf);
    }
    if (strcmp(buf, "exec-child ok\n") != 0)
        fk_die("exec'd child report", "'%s'", buf);
    fk_ok("exec'd child reported ok and exited 0");

    n = pread(file, buf, sizeof(buf) - 1, 0);
    if (n != 25 || memcmp(buf, "parent-wrote\nchild-wrote\n", 25) != 0)
        fk_die("file written by the exec'd child", "got %zd bytes", n);
    fk_ok("file holds what the exec'd child wrote");

    err = fk_echo_bulk(conn, 1024 * 1024);
    if (err)
        fk_die("parent echo after the exec'd child", "%s", err);
    r = close(conn);
    if (r < 0)
        fk_die("close", "%s", strerror(errno));
    fk_ok("parent connection echoed 1 MB after the exec'd child exited");
    printf("ALL OK\n");
    return 0;
}
