/*
 * Behaviour: close() with received data still unread resets the
 * connection (RFC 2525 2.17, Linux's tcp_close: tcp_send_active_reset,
 * RST with ACK set, sequence at snd_nxt); the peer's read sees
 * ECONNRESET. A close() with everything read sends FIN, and SO_LINGER 0
 * resets the same way as unread data. The wire mode compares the RST's
 * flags, sequence and ack.
 */
#include "scen.h"

int
main(void)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    char buf[16];
    int fd;

    tr_init();
    fd = d_connect(D_ECHO);
    T(send(fd, "abc", 3, 0));
    NOTE("revents %s", tr_pollev(d_wait(fd, POLLIN)));
    T(close(fd));

    fd = d_connect(D_ECHO);
    T(send(fd, "abc", 3, 0));
    T(d_read_full(fd, buf, 3));
    T(close(fd));

    fd = d_connect(D_ECHO);
    T(send(fd, "abc", 3, 0));
    T(d_read_full(fd, buf, 3));
    T(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
    T(close(fd));
    return 0;
}
