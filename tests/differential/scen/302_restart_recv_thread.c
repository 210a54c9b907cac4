/*
 * Behaviour: a blocking recv interrupted by a handler installed with
 * SA_RESTART is restarted, not failed: it returns the echo of what a
 * second thread sends 300 ms later (the alarm fired at 100 ms, once);
 * likewise a blocking accept is restarted and returns the connection the
 * thread asks the peer for.
 */
#include "scen.h"

#include <pthread.h>

static int sfd;

static void *
later_send(void *arg)
{
    (void)arg;
    usleep(300000);
    send(sfd, "late", 4, 0);
    return NULL;
}

/* The connect-back request without a trace line (its timing against
 * the accept's line would vary). */
static void *
later_connect(void *arg)
{
    struct sockaddr_in a = d_sin(D_PEER_IP, D_CTRL);
    char line[64], c;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    (void)arg;
    usleep(300000);
    if (fd < 0 || connect(fd, SA(&a), sizeof(a)) < 0)
        return NULL;
    snprintf(line, sizeof(line), "%d send:hi\n", D_LPORT_BASE + 302);
    d_write_full(fd, line, strlen(line));
    while (read(fd, &c, 1) == 1 && c != '\n')
        ;
    close(fd);
    return NULL;
}

int
main(void)
{
    char buf[16];
    pthread_t th;
    long r;
    int l, c;

    tr_init();
    sfd = d_connect(D_ECHO);
    pthread_create(&th, NULL, later_send, NULL);
    d_alarm_arm(1);
    r = T(recv(sfd, buf, sizeof(buf), 0));
    NOTE("got %s alarms %d", tr_data(buf, r > 0 ? (size_t)r : 0),
         (int)d_alarms);
    pthread_join(th, NULL);
    l = d_listen(D_LPORT_BASE + 302);
    pthread_create(&th, NULL, later_connect, NULL);
    d_alarm_arm(1);
    c = TF(accept(l, NULL, NULL));
    NOTE("alarms %d", (int)d_alarms);
    pthread_join(th, NULL);
    r = T(d_read_full(c, buf, 2));
    NOTE("got %s", tr_data(buf, r > 0 ? (size_t)r : 0));
    T(close(c));
    T(close(l));
    T(close(sfd));
    return 0;
}
