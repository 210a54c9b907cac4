/*
 * The kinds of blocking wait (the call a thread waits in) and the spin
 * budget each is given: ACCEL_POLL_USEC_RECV, _SEND, _ACCEPT, _CONNECT,
 * _EPOLL, _POLL, _SELECT, each ACCEL_POLL_USEC when left at "inherit".
 * Header-only so the unit tests check the mapping without DPDK.
 */
#ifndef ACCEL_RT_WAITKIND_H
#define ACCEL_RT_WAITKIND_H

#include <stdint.h>

#include "cfg.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The call a blocking wait (rt_block) is for. */
enum rt_wait_kind {
    RT_WAIT_RECV,    /* recv family, read/readv on a socket */
    RT_WAIT_SEND,    /* send family blocked on a full window */
    RT_WAIT_ACCEPT,  /* accept/accept4 */
    RT_WAIT_CONNECT, /* a blocking connect */
    RT_WAIT_EPOLL,   /* epoll_wait/epoll_pwait */
    RT_WAIT_POLL,    /* poll/ppoll */
    RT_WAIT_SELECT,  /* select/pselect */
    RT_WAIT_NKINDS
};

/** Microseconds a wait of this kind spins before it sleeps, per cfg. */
static inline uint32_t
rt_wait_spin_usec(const struct base_cfg *cfg, enum rt_wait_kind kind)
{
    uint32_t v;

    switch (kind) {
    case RT_WAIT_RECV:
        v = cfg->poll_usec_recv;
        break;
    case RT_WAIT_SEND:
        v = cfg->poll_usec_send;
        break;
    case RT_WAIT_ACCEPT:
        v = cfg->poll_usec_accept;
        break;
    case RT_WAIT_CONNECT:
        v = cfg->poll_usec_connect;
        break;
    case RT_WAIT_EPOLL:
        v = cfg->poll_usec_epoll;
        break;
    case RT_WAIT_POLL:
        v = cfg->poll_usec_poll;
        break;
    case RT_WAIT_SELECT:
        v = cfg->poll_usec_select;
        break;
    default:
        v = BASE_CFG_WORD;
        break;
    }
    return base_cfg_or(v, cfg->poll_usec);
}

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_RT_WAITKIND_H */
