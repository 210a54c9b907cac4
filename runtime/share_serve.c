/*
 * Services (share_int.h): (protocol, local port) -> the (process, listener
 * id) pairs that serve it: processes that accept on, poll or epoll a
 * listening socket, or receive on a UDP socket (rt__sh_serve). And moving the
 * connections queued on a listener one process stopped serving to a
 * process that serves the port (stack/migrate.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <rte_mbuf.h>

#include "clock.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "share_int.h"
#include "stats.h"
#include "stk.h"

struct local_svc rt__sh_lsv[LOCAL_SVCS];
int rt__sh_nlsv;

/* ---- services (port lock held) ---------------------------------------- */

struct sh_svc *
rt__sh_svc_find(int proto, uint16_t port, bool create)
{
    struct sh_svc *free_svc = NULL;

    for (int i = 0; i < SH_SVCS; i++) {
        struct sh_svc *v = &rt__sh->svc[i];
        if (v->used && v->proto == proto && v->port == port)
            return v;
        if (!v->used && free_svc == NULL)
            free_svc = v;
    }
    if (!create || free_svc == NULL)
        return NULL;
    memset(free_svc, 0, sizeof(*free_svc));
    free_svc->used = 1;
    free_svc->proto = (uint8_t)proto;
    free_svc->port = port;
    return free_svc;
}

/* The last listening socket on the port is gone, in every process: the
 * entry goes, and SYNs are answered by the dispatcher's stack (RST). */
void
rt__sh_svc_drop_if_unheld(struct sh_svc *v)
{
    for (int i = 0; i < SH_SLOTS; i++)
        if (v->copies[i] != 0)
            return;
    for (int i = 0; i < v->npend; i++)
        rt__sh_mbuf_free(v->pend[i]);
    v->npend = 0;
    v->n = 0;
    v->used = 0;
    for (int k = 0; k < SH_MIG; k++) {
        struct sh_mig *g = &rt__sh->mig[k];
        struct sh_flow *e;
        if (!g->used || g->port != v->port)
            continue;
        e = rt__sh_flow_find(&g->img.f);
        if (e != NULL)
            rt__sh_flow_erase(e);
        g->used = 0;
        atomic_fetch_sub(&rt__sh->nmig, 1);
    }
}

/* Slot i holds no copy of any listener any more (it exits or is gone);
 * a service nobody holds goes. */
void
rt__sh_svc_drop_copies(int i)
{
    for (int k = 0; k < SH_SVCS; k++) {
        struct sh_svc *v = &rt__sh->svc[k];

        if (v->used && v->copies[i] != 0) {
            v->copies[i] = 0;
            rt__sh_svc_drop_if_unheld(v);
            if (!v->used)
                rt__steer4_svc_gone(v->proto, v->port);
        }
    }
}

void
rt__sh_svc_copies(int proto, uint16_t port, int delta)
{
    struct sh_svc *v = rt__sh_svc_find(proto, port, delta > 0);

    if (v == NULL)
        return;
    if (delta > 0 && v->copies[rt__sh_me] < 255)
        v->copies[rt__sh_me]++;
    else if (delta < 0 && v->copies[rt__sh_me] > 0)
        v->copies[rt__sh_me]--;
    if (delta < 0)
        rt__sh_svc_drop_if_unheld(v);
}

void
rt__sh_svc_set(const struct local_svc *l, bool on)
{
    struct sh_svc *v = rt__sh_svc_find(l->proto, l->port, true);

    if (v == NULL)
        return;
    for (int i = 0; i < v->n; i++) {
        if (v->v[i].slot == rt__sh_me && v->v[i].lid == l->lid) {
            if (!on)
                v->v[i] = v->v[--v->n];
            return;
        }
    }
    if (on)
        rt__sh_q_claim();
    if (on && v->n < SH_SRV) {
        v->v[v->n].slot = (uint8_t)rt__sh_me;
        v->v[v->n].lid = l->lid;
        v->v[v->n].waiting = 0;
        v->n++;
    }
}

void
rt__sh_serve_wait(int proto, uint16_t port, uint32_t lid, bool on, bool accept)
{
    struct sh_svc *v;
    bool kick = false;

    if (!rt__shared)
        return;
    rt__sh_port_lock();
    v = rt__sh_svc_find(proto, port, false);
    for (int i = 0; v != NULL && i < v->n; i++) {
        if (v->v[i].slot != rt__sh_me || v->v[i].lid != lid)
            continue;
        /* Servers that block in accept() take connections one at a time:
         * SYNs then wait for one (pend_syn). Event loops (poll, epoll)
         * only get preference while they wait: under load they may never
         * block, and a SYN must not wait for that. */
        if (accept)
            v->blocking = true;
        if (!on) {
            if (v->v[i].waiting > 0)
                v->v[i].waiting--;
            break;
        }
        /* A connection waits for a server: take the oldest, unless the
         * last one taken is still being set up (one at a time, as each
         * accept takes one from a shared queue). */
        if (base_ns_since(base_now_ns(), v->v[i].inflight_ns) <= INFLIGHT_NS)
            break; /* its connection is being set up: not free yet */
        if (v->npend > 0) {
            struct rte_mbuf *m = v->pend[0];
            memmove(v->pend, v->pend + 1, --v->npend * sizeof(v->pend[0]));
            v->v[i].inflight_ns = base_now_ns();
            m->hash.usr = lid;
            if (!rt__sh_ring_put(&rt__sh->slot[rt__sh_me].rx, m))
                rt__sh_mbuf_free(m);
            else if (rt__remote)
                kick = true; /* a family process copies it to our cells */
            break;
        }
        v->v[i].waiting++;
        break;
    }
    rt__sh_port_unlock();
    if (kick)
        rt__sh_kick_family();
}

void
rt__sh_serve_accepted(int proto, uint16_t port, uint32_t lid)
{
    struct sh_svc *v;

    if (!rt__shared)
        return;
    rt__sh_port_lock();
    v = rt__sh_svc_find(proto, port, false);
    for (int i = 0; v != NULL && i < v->n; i++)
        if (v->v[i].slot == rt__sh_me && v->v[i].lid == lid)
            v->v[i].inflight_ns = 0;
    rt__sh_port_unlock();
}

void
rt__sh_serve(struct stk_sock *stk, int proto, uint16_t port, uint32_t lid,
             int how)
{
    struct local_svc *l = NULL;
    bool shared = rt__sh != NULL && rt__sh_me >= 0;

    for (int i = 0; i < rt__sh_nlsv; i++)
        if (rt__sh_lsv[i].proto == proto && rt__sh_lsv[i].port == port &&
            rt__sh_lsv[i].lid == lid)
            l = &rt__sh_lsv[i];
    if (how == RT_SERVE_CLOSE) {
        if (shared) {
            rt__sh_port_lock();
            if (l != NULL)
                rt__sh_svc_set(l, false);
            rt__sh_svc_copies(proto, port, -1);
            rt__sh_port_unlock();
        }
        if (l != NULL)
            *l = rt__sh_lsv[--rt__sh_nlsv];
        return;
    }
    if (how == RT_SERVE_OFF) {
        if (l == NULL)
            return;
        l->serving = false;
        l->off_ns = base_now_ns();
        if (shared) {
            rt__sh_port_lock();
            rt__sh_svc_set(l, false);
            rt__sh_port_unlock();
        }
        return;
    }
    if (l == NULL) {
        if (rt__sh_nlsv == LOCAL_SVCS)
            return;
        l = &rt__sh_lsv[rt__sh_nlsv++];
        *l = (struct local_svc){
            proto,        port, lid, false, proto == IPPROTO_TCP ? stk : NULL,
            base_now_ns()};
    } else if (l->serving || how == RT_SERVE_DECLARE) {
        return;
    }
    l->serving = how == RT_SERVE_ON;
    if (shared) {
        rt__sh_port_lock();
        if (how == RT_SERVE_DECLARE)
            rt__sh_svc_copies(proto, port, +1);
        else
            rt__sh_svc_set(l, true);
        rt__sh_port_unlock();
    }
}

/* Input every frame waiting in this process's ring (port lock held):
 * before its connections are copied or moved away. */
void
rt__sh_drain_own(void)
{
    struct rte_mbuf *m;

    if (rt__remote) {
        rt__rm_drain();
        return;
    }
    while ((m = rt__sh_ring_get(&rt__sh->slot[rt__sh_me].rx)) != NULL) {
        stk_input_lid(rte_pktmbuf_mtod(m, const void *), m->data_len,
                      m->hash.usr);
        rt__mbuf_recycle(m);
    }
}

/* At exit (stack lock held), before the connections are closed: this
 * process stops serving its listeners, and the connections waiting on
 * their queues move to a process that still serves the port, as close()
 * moves them. Linux frees a listener only with its last holder: a worker
 * that exits, even by _exit, leaves its queued connections to the others,
 * where closing them here would reset them. */
void
rt__share_leave_listeners(void)
{
    for (int i = 0; i < rt__sh_nlsv; i++) {
        struct local_svc *l = &rt__sh_lsv[i];

        if (l->proto != IPPROTO_TCP || l->stk == NULL)
            continue;
        rt__sh_serve(l->stk, l->proto, l->port, l->lid, RT_SERVE_OFF);
        rt__sh_migrate_out(l->stk);
    }
    /* Its copies of every listener are closed now, as the kernel closes
     * an exiting process's fds before anything else: a port nobody holds
     * any more answers SYNs with RST while this process still lingers. */
    rt__sh_port_lock();
    rt__sh_svc_drop_copies(rt__sh_me);
    rt__sh_port_unlock();
}

/* ---- moving queued connections (stack/migrate.c) ---------------------- */

/* This process stops serving listener l (epoll removal, close): the
 * connections waiting on its queue would wait for it, where Linux lets
 * any process holding the listener take them. If another process serves
 * the port, they move to the shared area; their segments are held until
 * a server imports them (rt__sh_migrate_in), and the servers are woken so
 * that their listener reads as ready. Stack lock held. */
int
rt__sh_migrate_out(struct stk_sock *l)
{
    struct sh_svc *v;
    uint32_t lid;
    uint16_t port;
    int proto, n = 0;
    bool other = false;

    if (!rt__shared || !stk_sock_service(l, &proto, &port, &lid) ||
        proto != IPPROTO_TCP)
        return 0;
    rt__sh_port_lock();
    v = rt__sh_svc_find(IPPROTO_TCP, port, false);
    for (int i = 0; v != NULL && i < v->n; i++)
        if (v->v[i].slot != rt__sh_me)
            other = true;
    if (other) {
        /* Segments already handed to us belong with what moves. */
        rt__sh_drain_own();
        rt__sh_ops_apply();
    }
    for (int k = 0; other && k < SH_MIG; k++) {
        struct sh_mig *g = &rt__sh->mig[k];
        struct sh_flow *e;

        if (g->used)
            continue;
        if (stk_listener_export(l, &g->img, g->data, SH_MIG_DATA) <= 0)
            break;
        e = rt__sh_flow_find(&g->img.f);
        if (e != NULL) {
            e->frozen = 1; /* held for the importer */
            e->holders = 0;
        }
        g->used = 1;
        g->port = port;
        g->t_ns = base_now_ns();
        atomic_fetch_add(&rt__sh->nmig, 1);
        BASE_STAT_INC(share_moved_out);
        n++;
    }
    for (int i = 0; n > 0 && i < v->n; i++)
        rt__sh_wake_mask |= 1ull << v->v[i].slot;
    rt__sh_port_unlock();
    if (rt__sh_wake_mask != 0)
        rt__sh_wake_slots();
    return n;
}

bool
rt__sh_migrants(uint16_t port)
{
    if (!rt__shared ||
        atomic_load_explicit(&rt__sh->nmig, memory_order_relaxed) == 0)
        return false;
    for (int k = 0; k < SH_MIG; k++)
        if (rt__sh->mig[k].used && rt__sh->mig[k].port == port)
            return true;
    return false;
}

/* After a poll: connections that completed on a listener this process
 * does not serve (it left the epoll set before their handshake ended, or
 * never served it) move out too. Stack lock held. */
void
rt__share_export_unserved(void)
{
    uint64_t now = 0;

    for (int i = 0; i < rt__sh_nlsv; i++) {
        struct local_svc *l = &rt__sh_lsv[i];
        if (l->serving || l->stk == NULL ||
            !(stk_sock_events(l->stk, NULL) & EPOLLIN))
            continue;
        if (now == 0)
            now = base_now_ns();
        /* nginx takes listeners out of its epoll set and puts them back
         * at once (EPOLLEXCLUSIVE rotation): move only after a while. */
        if (now - l->off_ns >= UNSERVED_NS)
            rt__sh_migrate_out(l->stk);
    }
}

/* Take the oldest connection moved out for listener l's port and queue it
 * on l (1), or 0. Stack lock held. */
int
rt__sh_migrate_in(struct stk_sock *l)
{
    struct sh_mig *g = NULL;
    struct stk_flow f;
    struct sh_flow *e;
    uint32_t lid;
    uint16_t port;
    int proto, rc;

    if (!rt__shared ||
        atomic_load_explicit(&rt__sh->nmig, memory_order_relaxed) == 0 ||
        !stk_sock_service(l, &proto, &port, &lid) || proto != IPPROTO_TCP)
        return 0;
    rt__sh_port_lock();
    for (int k = 0; k < SH_MIG; k++) {
        struct sh_mig *x = &rt__sh->mig[k];
        if (x->used && x->port == port && (g == NULL || x->t_ns < g->t_ns))
            g = x;
    }
    if (g == NULL) {
        rt__sh_port_unlock();
        return 0;
    }
    f = g->img.f;
    e = rt__sh_flow_find(&f);
    if (e != NULL)
        rt__sh_flow_take(e); /* the held segments stay for the replay below */
    rc = stk_listener_import(l, &g->img, g->data);
    g->used = 0;
    atomic_fetch_sub(&rt__sh->nmig, 1);
    rt__sh_port_unlock();
    if (rc < 0)
        return 0;
    BASE_STAT_INC(share_moved_in);
    rt__sh_flow_replay(&f);
    return 1;
}
