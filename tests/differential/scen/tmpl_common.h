/*
 * What the template scenarios (tmpl_*.h) share: their address family,
 * AF_INET by default, AF_INET6 over native IPv6 (fd00:200::/64) when the
 * scenario defines FAM6 (t_addr() fills an address of that family), and
 * the readiness probes (t_show(), t_ready()).
 */
#ifndef DIFF_TMPL_COMMON_H
#define DIFF_TMPL_COMMON_H

#include "scen.h"

#ifdef FAM6
#define FAM AF_INET6
#define S_PEER D_PEER_IP6
#define S_SUBJ D_SUBJ_IP6
#define S_NONLOCAL D_NONLOCAL_IP6
#else
#define FAM AF_INET
#define S_PEER D_PEER_IP
#define S_SUBJ D_SUBJ_IP
#define S_NONLOCAL D_NONLOCAL_IP
#endif

/* ip:port of the family in @p a; returns its length. */
static inline socklen_t
t_addr(struct sockaddr_in6 *a, const char *ip, int port)
{
    memset(a, 0, sizeof(*a));
#ifdef FAM6
    *a = d_sin6(ip, port);
    return sizeof(struct sockaddr_in6);
#else
    struct sockaddr_in a4 = d_sin(ip, port);
    memcpy(a, &a4, sizeof(a4));
    return sizeof(a4);
#endif
}

/* poll() for POLLIN|POLLOUT|POLLRDHUP, noted as "WHAT: revents ...". */
static inline void
t_show(int fd, const char *what)
{
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT | POLLRDHUP};

    T(poll(&p, 1, 0));
    NOTE("%s: revents %s", what, tr_pollev(p.revents));
}

/* The readiness poll (for @p pev), a level-triggered epoll set (for
 * @p eev) and select (all three sets) report, each noted. */
static inline void
t_ready(int fd, short pev, uint32_t eev)
{
    struct pollfd p = {.fd = fd, .events = pev};
    struct epoll_event ev = {.events = eev};
    fd_set r, w, e;
    struct timeval tv = {0, 0};
    int ep;

    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    memset(&ev, 0, sizeof(ev));
    T(epoll_wait(ep, &ev, 1, 0));
    NOTE("epoll %s", tr_epollev(ev.events));
    T(close(ep));
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_ZERO(&e);
    FD_SET(fd, &r);
    FD_SET(fd, &w);
    FD_SET(fd, &e);
    T(select(fd + 1, &r, &w, &e, &tv));
    NOTE("select r%d w%d e%d", FD_ISSET(fd, &r) ? 1 : 0,
         FD_ISSET(fd, &w) ? 1 : 0, FD_ISSET(fd, &e) ? 1 : 0);
}

#endif
