/*
 * Behaviour: sends with MSG_MORE and under TCP_CORK are held back and go
 * out together; all of it arrives at the echo and comes back in order:
 * three MSG_MORE pieces and a final plain send, then three pieces under
 * TCP_CORK released by clearing the option.
 */
#include "scen.h"

int
main(void)
{
    char buf[32];
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    T(send(fd, "ab", 2, MSG_MORE));
    T(send(fd, "cd", 2, MSG_MORE));
    T(send(fd, "ef", 2, MSG_MORE));
    T(send(fd, "g", 1, 0));
    T(d_read_full(fd, buf, 7));
    NOTE("got %s", tr_data(buf, 7));
    d_seti(fd, IPPROTO_TCP, TCP_CORK, 1);
    T(send(fd, "hi", 2, 0));
    T(send(fd, "jk", 2, 0));
    T(send(fd, "lm", 2, 0));
    d_seti(fd, IPPROTO_TCP, TCP_CORK, 0);
    T(d_read_full(fd, buf, 6));
    NOTE("got %s", tr_data(buf, 6));
    T(close(fd));
    return 0;
}
