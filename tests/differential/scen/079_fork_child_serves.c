/*
 * Behaviour: accept then fork (the inetd model). The parent accepts a
 * connection and closes its copy right after the fork (close returns 0);
 * the connection lives on in the child: round trips of 1 MiB in 32 KiB
 * slices through the peer's echo come back intact, and the child's
 * half-close is answered by the peer's EOF. The parent traces its close
 * only after the child has exited, so one process traces at a time.
 */
#include "scen.h"

#include <sys/wait.h>

static char out[1 << 20], in[1 << 20];

int
main(void)
{
    int port = D_LPORT_BASE + 79;
    int l, c, st, rc, err;
    char buf[8] = {0};
    pid_t pid;

    tr_init();
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (char)d_pattern(i);
    l = d_listen(port);
    d_connect_back(port, "echo");
    c = TF(accept(l, NULL, NULL));
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        d_fatal(__LINE__, "fork");
    if (pid == 0) {
        size_t off = 0;
        T(close(l));
        T(send(c, "ping", 4, MSG_NOSIGNAL));
        T(d_read_full(c, buf, 4));
        NOTE("child got %s", tr_data(buf, 4));
        while (off < sizeof(out)) {
            if (d_write_full(c, out + off, 32768) != 32768 ||
                d_read_full(c, in + off, 32768) != 32768)
                break;
            off += 32768;
        }
        NOTE("child echoed %zu bytes %s", off,
             memcmp(out, in, sizeof(out)) == 0 ? "intact" : "CORRUPT");
        T(shutdown(c, SHUT_WR));
        T(read(c, buf, sizeof(buf)));
        T(close(c));
        fflush(stdout);
        _exit(0);
    }
    errno = 0;
    rc = close(c);
    err = errno;
    if (waitpid(pid, &st, 0) != pid)
        d_fatal(__LINE__, "waitpid");
    NOTE("parent close right after fork -> %d%s%s", rc, rc ? " " : "",
         rc ? tr_errname(err) : "");
    NOTE("child exited %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    T(close(l));
    return 0;
}
