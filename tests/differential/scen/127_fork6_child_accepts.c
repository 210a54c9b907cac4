/*
 * Behaviour: a child forked after a dual-stack listener on [::]:P was made
 * accepts both an IPv4 and an IPv6 connection on it and names them
 * ([::ffff:10.200.0.1]:eph, [fd00:200::1]:eph) and reads their data; the
 * parent, which waits for the child, then accepts one more (IPv6) itself.
 */
#include "scen.h"
#include <sys/wait.h>

static void
take(int l, const char *who)
{
    struct sockaddr_in6 from;
    socklen_t fl = sizeof(from);
    char buf[8];
    int s = TF(accept(l, SA(&from), &fl));

    NOTE("%s accepted from %s", who, tr_addr(&from, 1));
    T(read(s, buf, sizeof(buf)));
    T(close(s));
}

int
main(void)
{
    int port = D_LPORT_BASE + 127, st = -1;
    int l;
    pid_t pid;

    tr_init();
    l = d_listen6("::", port, -1);
    d_connect_back_to(D_SUBJ_IP, port, "send:v4");
    d_connect_back_to(D_SUBJ_IP6, port, "send:v6");
    pid = fork();
    if (pid == 0) {
        take(l, "child");
        take(l, "child");
        _exit(0);
    }
    T(waitpid(pid, &st, 0) == pid);
    NOTE("child exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    d_connect_back_to(D_SUBJ_IP6, port, "send:again");
    take(l, "parent");
    T(close(l));
    return 0;
}
