/*
 * Common includes for the scenario programs: each scenario is one small
 * main() in scen/NNN_name.c that traces a sequence of calls with T()/TF()/
 * TP()/NOTE() (trace.h) against the peer services (dnet.h).
 */
#ifndef DIFF_SCEN_H
#define DIFF_SCEN_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dnet.h"
#include "trace.h"

#define SA(p) ((struct sockaddr *)(p))

/* Read an int socket option (traced) and note it as "NAME = V". */
static inline void
d_geti(int fd, int level, int opt, const char *name)
{
    int v = -1;
    socklen_t l = sizeof(v);

    T(getsockopt(fd, level, opt, &v, &l));
    NOTE("%s = %d", name, v);
}

/* Set an int socket option (traced). */
static inline void
d_seti(int fd, int level, int opt, int v)
{
    T(setsockopt(fd, level, opt, &v, sizeof(v)));
}

/* getsockname (traced) into a sockaddr_in6-sized buffer; note "WHAT ADDR
 * len L" (@p eph as in tr_addr). */
static inline void
d_name(int fd, int eph, const char *what)
{
    struct sockaddr_in6 a;
    socklen_t al = sizeof(a);

    memset(&a, 0, sizeof(a));
    if (T(getsockname(fd, SA(&a), &al)) == 0)
        NOTE("%s %s len %d", what, tr_addr(&a, eph), (int)al);
}

/* getpeername likewise. */
static inline void
d_peer(int fd, int eph, const char *what)
{
    struct sockaddr_in6 a;
    socklen_t al = sizeof(a);

    memset(&a, 0, sizeof(a));
    if (T(getpeername(fd, SA(&a), &al)) == 0)
        NOTE("%s %s len %d", what, tr_addr(&a, eph), (int)al);
}

/* One epoll_wait(ep, 1 event, timeout 0), traced; a reported event is
 * noted as "WHAT: tag DATA.U64 EVENTS". */
static inline void
d_ep_one(int ep, const char *what)
{
    struct epoll_event ev;

    memset(&ev, 0, sizeof(ev));
    if (T(epoll_wait(ep, &ev, 1, 0)) > 0)
        NOTE("%s: tag %llx %s", what, (unsigned long long)ev.data.u64,
             tr_epollev(ev.events));
}

/* Send @p n bytes to the echo service (traced) and wait until the echo is
 * back: readable, and 20 ms more for the rest of it to land. */
static inline void
d_echoed(int fd, const char *data, size_t n)
{
    T(send(fd, data, n, 0));
    d_wait(fd, POLLIN);
    usleep(20000);
}

#endif
