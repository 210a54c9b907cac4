/*
 * Behaviour: with SIGPIPE at its default disposition, a send (without
 * MSG_NOSIGNAL) on a connection shut down for writing kills the process
 * with SIGPIPE: a child doing so ends killed by signal 13 before its next
 * line; with MSG_NOSIGNAL it gets EPIPE and lives. (In a child: the
 * runner wants the scenario itself to exit 0.)
 */
#include "scen.h"

#include <sys/wait.h>

int
main(void)
{
    pid_t pid;
    int fd, st;

    tr_init();
    signal(SIGPIPE, SIG_DFL);
    fd = d_connect(D_ECHO);
    T(shutdown(fd, SHUT_WR));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    pid = fork();
    if (pid == 0) {
        send(fd, "x", 1, 0);
        printf("child still alive (wrong)\n");
        _exit(0);
    }
    T(waitpid(pid, &st, 0) == pid);
    NOTE("child signaled %d sig %d", WIFSIGNALED(st) ? 1 : 0,
         WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    T(close(fd));
    return 0;
}
