/*
 * The address family of the template scenarios (tmpl_*.h): AF_INET by
 * default, AF_INET6 over native IPv6 (fd00:200::/64) when the scenario
 * defines FAM6. t_addr() fills an address of that family.
 */
#ifndef DIFF_TMPL_FAM_H
#define DIFF_TMPL_FAM_H

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
static socklen_t
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

#endif
