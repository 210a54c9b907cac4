/*
 * Behaviour: recv with MSG_WAITALL asking for 10 bytes when only 3 have
 * arrived is interrupted by a signal (no SA_RESTART): it returns the 3
 * bytes it has (a partial count, not EINTR); with nothing received at all
 * it fails with EINTR; with SA_RESTART and the data partial it returns
 * the partial count as well.
 */
#include "scen.h"

int
main(void)
{
    char buf[16];
    long r;
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    d_echoed(fd, "abc", 3);
    d_alarm_arm(0);
    r = T(recv(fd, buf, 10, MSG_WAITALL));
    NOTE("got %s alarms %d", tr_data(buf, r > 0 ? (size_t)r : 0),
         (int)d_alarms);
    d_alarm_arm(0);
    T(recv(fd, buf, 10, MSG_WAITALL));
    NOTE("alarms %d", (int)d_alarms);
    d_echoed(fd, "de", 2);
    d_alarm_arm(1);
    r = T(recv(fd, buf, 10, MSG_WAITALL));
    NOTE("got %s alarms %d", tr_data(buf, r > 0 ? (size_t)r : 0),
         (int)d_alarms);
    T(close(fd));
    return 0;
}
