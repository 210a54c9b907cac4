/*
 * Behaviour: TCP_CORK holds partial segments until uncorked (or a full
 * segment is queued); MSG_MORE holds a send's data the same way until a
 * send without it; a corked partial segment still leaves after Linux's
 * 200 ms cork timer. TCP_CORK reads back 0/1. The wire mode checks where
 * PSH lands: one segment per corked batch, PSH at its end.
 */
#include "scen.h"

int
main(void)
{
    char buf[600], part[100];
    int one = 1, zero = 0, fd;

    tr_init();
    memset(part, 'c', sizeof(part));
    fd = d_connect(D_ECHO);
    d_geti(fd, IPPROTO_TCP, TCP_CORK, "TCP_CORK default");
    T(setsockopt(fd, IPPROTO_TCP, TCP_CORK, &one, sizeof(one)));
    d_geti(fd, IPPROTO_TCP, TCP_CORK, "TCP_CORK set");
    T(send(fd, part, 100, 0));
    T(send(fd, part, 100, 0));
    T(send(fd, part, 100, 0));
    T(setsockopt(fd, IPPROTO_TCP, TCP_CORK, &zero, sizeof(zero)));
    d_geti(fd, IPPROTO_TCP, TCP_CORK, "TCP_CORK cleared");
    T(d_read_full(fd, buf, 300));

    T(send(fd, part, 100, MSG_MORE));
    T(send(fd, part, 100, MSG_MORE));
    T(send(fd, part, 100, 0));
    T(d_read_full(fd, buf, 300));

    /* Corked and never uncorked: the cork timer sends it. */
    T(setsockopt(fd, IPPROTO_TCP, TCP_CORK, &one, sizeof(one)));
    T(send(fd, part, 50, 0));
    T(d_read_full(fd, buf, 50));
    T(setsockopt(fd, IPPROTO_TCP, TCP_CORK, &zero, sizeof(zero)));

    /* MSG_MORE alone, then nothing more: the same timer. */
    T(send(fd, part, 40, MSG_MORE));
    T(d_read_full(fd, buf, 40));
    T(close(fd));
    return 0;
}
