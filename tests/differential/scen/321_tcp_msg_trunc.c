/*
 * Behaviour: on TCP, recv with MSG_TRUNC discards the bytes instead of
 * copying them (Linux: the buffer may even be NULL) and returns how many
 * were discarded; MSG_TRUNC|MSG_PEEK returns the count without consuming;
 * what follows is read normally.
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
    d_echoed(fd, "0123456789", 10);
    T(recv(fd, NULL, 4, MSG_TRUNC | MSG_PEEK));
    T(recv(fd, NULL, 4, MSG_TRUNC));
    r = T(recv(fd, buf, sizeof(buf), 0));
    NOTE("rest %s", tr_data(buf, r > 0 ? (size_t)r : 0));
    T(close(fd));
    return 0;
}
