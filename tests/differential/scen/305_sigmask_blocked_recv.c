/*
 * Behaviour: a blocking recv with SIGALRM blocked (sigprocmask) is not
 * interrupted by the alarm: it returns the data a second thread has the
 * echo send back 300 ms later; the handler then runs once the signal is
 * unblocked. A blocking recv with SIGALRM ignored (SIG_IGN) is not
 * interrupted either.
 */
#include "scen.h"

#include <pthread.h>

static int sfd;

static void *
later_send(void *arg)
{
    sigset_t all;

    (void)arg;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    usleep(300000);
    send(sfd, "late", 4, 0);
    return NULL;
}

int
main(void)
{
    struct itimerval it = {{0, 0}, {0, 100000}};
    char buf[16];
    sigset_t block;
    pthread_t th;
    long r;

    tr_init();
    sfd = d_connect(D_ECHO);
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    d_alarm_arm(0);
    sigprocmask(SIG_BLOCK, &block, NULL);
    pthread_create(&th, NULL, later_send, NULL);
    r = T(recv(sfd, buf, sizeof(buf), 0));
    NOTE("got %s alarms %d", tr_data(buf, r > 0 ? (size_t)r : 0),
         (int)d_alarms);
    pthread_join(th, NULL);
    sigprocmask(SIG_UNBLOCK, &block, NULL);
    NOTE("alarms after unblock %d", (int)d_alarms);
    signal(SIGALRM, SIG_IGN);
    setitimer(ITIMER_REAL, &it, NULL);
    pthread_create(&th, NULL, later_send, NULL);
    r = T(recv(sfd, buf, sizeof(buf), 0));
    NOTE("got %s", tr_data(buf, r > 0 ? (size_t)r : 0));
    pthread_join(th, NULL);
    T(close(sfd));
    return 0;
}
