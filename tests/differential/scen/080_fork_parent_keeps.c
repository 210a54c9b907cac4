/*
 * Behaviour: connections stay fully usable in the parent across children
 * that never touch them: one child _exit()s, one exit()s (atexit handlers
 * and destructors run), one execs true. After each child has exited an
 * echo round trip works; then 1 MiB sent to the sink arrives intact (its
 * bytes/hash reply), 1 MiB from the source arrives intact, and the
 * half-close of the echo connection is answered by EOF.
 */
#include "scen.h"

#include <sys/wait.h>

static char big[1 << 20];

static void
child(int mode)
{
    if (mode == 0)
        _exit(0);
    if (mode == 1)
        exit(0);
    execlp("true", "true", (char *)NULL);
    _exit(127);
}

int
main(void)
{
    static const char *const what[] = {"_exit", "exit", "exec true"};
    char buf[64], msg[16];
    int e, s, src, mode, st;
    uint32_t h = D_FNV_INIT;
    ssize_t n;

    tr_init();
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)d_pattern(i);
    e = d_connect(D_ECHO);
    s = d_connect(D_SINK);
    src = d_connect(D_SOURCE);
    T(send(e, "before", 6, MSG_NOSIGNAL));
    T(d_read_full(e, buf, 6));
    for (mode = 0; mode < 3; mode++) {
        pid_t pid;

        fflush(stdout);
        pid = fork();
        if (pid < 0)
            d_fatal(__LINE__, "fork");
        if (pid == 0)
            child(mode);
        if (waitpid(pid, &st, 0) != pid)
            d_fatal(__LINE__, "waitpid");
        NOTE("child (%s) exited %d", what[mode],
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        snprintf(msg, sizeof(msg), "after-%d", mode);
        T(send(e, msg, strlen(msg), MSG_NOSIGNAL));
        n = T(d_read_full(e, buf, strlen(msg)));
        NOTE("echo %s", tr_data(buf, (size_t)n));
    }

    T(d_write_full(s, big, sizeof(big)));
    T(shutdown(s, SHUT_WR));
    n = T(d_read_full(s, buf, sizeof(buf) - 1));
    NOTE("sink replied %s", tr_data(buf, n > 0 ? (size_t)n : 0));
    T(close(s));

    T(d_write_full(src, "1048576\n", 8));
    n = T(d_read_full(src, big, sizeof(big)));
    if (n > 0)
        h = d_fnv(h, big, (size_t)n);
    NOTE("source: %zd bytes fnv=%08x", n, h);
    T(read(src, buf, sizeof(buf)));
    T(close(src));

    T(shutdown(e, SHUT_WR));
    T(read(e, buf, sizeof(buf)));
    T(close(e));
    return 0;
}
