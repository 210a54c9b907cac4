/*
 * Behaviour: a listener created before fork is usable in the child. A
 * connection queued on it before the fork is reported readable by poll in
 * the child, accepted there, carries what the peer sent, and takes the
 * child's reply. After the child has exited the parent, which never
 * accepted, finds the queue empty (non-blocking accept: EAGAIN) and
 * accepts a later connection itself. The parent waits for the child
 * before tracing again, so one process traces at a time.
 */
#include "scen.h"

#include <sys/wait.h>

int
main(void)
{
    int port = D_LPORT_BASE + 78;
    char buf[8] = {0};
    int l, c, st;
    pid_t pid;

    tr_init();
    l = d_listen(port);
    d_connect_back(port, "send:hello");
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        d_fatal(__LINE__, "fork");
    if (pid == 0) {
        NOTE("child: listener %s", tr_pollev(d_wait(l, POLLIN)));
        c = TF(accept(l, NULL, NULL));
        T(d_read_full(c, buf, 5));
        NOTE("child got %s", tr_data(buf, 5));
        T(send(c, "bye", 3, MSG_NOSIGNAL));
        T(close(c));
        T(close(l));
        fflush(stdout);
        _exit(0);
    }
    if (waitpid(pid, &st, 0) != pid)
        d_fatal(__LINE__, "waitpid");
    NOTE("child exited %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);

    T(fcntl(l, F_SETFL, O_NONBLOCK));
    TF(accept(l, NULL, NULL));
    T(fcntl(l, F_SETFL, 0));
    d_connect_back(port, "send:again");
    c = TF(accept(l, NULL, NULL));
    T(d_read_full(c, buf, 5));
    NOTE("parent got %s", tr_data(buf, 5));
    T(close(c));
    T(close(l));
    return 0;
}
