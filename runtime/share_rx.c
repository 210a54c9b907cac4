/*
 * The poll turn in shared mode (share_int.h): whoever holds the port lock
 * receives a burst and dispatches each frame: a TCP segment of a known
 * connection to its owner; a SYN (or a UDP datagram) to one of the
 * service's servers, chosen by a hash of the 4-tuple (as SO_REUSEPORT
 * does), tagged with the listener id so that the owner's stack queues it
 * on that listener; ARP and IGMP to itself and a copy to every active
 * process; a UDP datagram to a multicast group to every process serving
 * its port; anything else to its own stack. Frames for another process go into
 * its ring, and its eventfd is written if one of its threads sleeps. Each
 * process drains its ring under its own stack lock, without the port
 * lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "clock.h"
#include "impair.h"
#include "log.h"
#include "pkt_repair.h"
#include "rt.h"
#include "rt_int.h"
#include "share_int.h"
#include "stats.h"
#include "stk.h"

uint64_t rt__sh_wake_mask;

/* ---- dispatch (port lock and stack lock held) ------------------------- */

/* Frames parked in another process's ring hold mbufs of the shared pool
 * until that process polls. One that does not (busy outside the library,
 * stopped by a debugger) must not drain the pool: the port needs free
 * mbufs to take any frame at all (af_xdp refills its fill ring before it
 * reads), and a dry pool stops every process of the port, ARP included,
 * with their waits spinning on a receive ring nobody can read. Below an
 * eighth free, such a frame is dropped as a full ring would drop it (TCP
 * sends it again). */
static bool
pool_low(void)
{
    static bool logged;
    unsigned avail = rte_mempool_avail_count(rt__port.pool);

    if (avail >= rt__port.pool->size / 8)
        return false;
    if (!logged) {
        logged = true;
        BASE_WARN("share",
                  "mbuf pool low (%u of %u free): frames for processes that do "
                  "not poll are dropped; raise ACCEL_MBUFS if this is the load",
                  avail, rt__port.pool->size);
    }
    BASE_STAT_INC(share_drop_lowmem);
    return true;
}

static void
give(int slot, struct rte_mbuf *m, uint32_t lid)
{
    struct sh_slot *s = &rt__sh->slot[slot];

    m->hash.usr = lid;
    if (pool_low()) {
        RT_CAPTURE_DROPPED(m, BASE_SR_CAP_DROP_SHARE);
        rte_pktmbuf_free(m);
        return;
    }
    if (atomic_load_explicit(&s->state, memory_order_relaxed) != SLOT_LIVE ||
        !rt__sh_ring_put(&s->rx, m)) {
        atomic_fetch_add_explicit(&s->drops, 1, memory_order_relaxed);
        BASE_STAT_INC(share_drop_ring);
        RT_CAPTURE_DROPPED(m, BASE_SR_CAP_DROP_SHARE);
        rte_pktmbuf_free(m);
        return;
    }
    BASE_STAT_INC(share_handed);
    rt__sh_wake_mask |= 1ull << slot;
}

static void
local(struct rte_mbuf *m, uint32_t lid)
{
    stk_input_lid(rte_pktmbuf_mtod(m, const void *), m->data_len, lid);
    rt__mbuf_recycle(m);
}

static void
hold(const struct stk_flow *f, struct sh_flow *e, struct rte_mbuf *m)
{
    for (int i = 0; i < SH_HELD; i++) {
        if (rt__sh->held[i].m == NULL) {
            rt__sh->held[i].f = *f;
            rt__sh->held[i].m = m;
            BASE_STAT_INC(share_held);
            rt__sh_wake_mask |= e->holders;
            if (e->holders & (1ull << rt__sh_me))
                rt_wakeup();
            return;
        }
    }
    BASE_STAT_INC(share_drop_held);
    RT_CAPTURE_DROPPED(m, BASE_SR_CAP_DROP_SHARE);
    rte_pktmbuf_free(m);
}

static bool
owns_queue(int slot)
{
    for (unsigned q = 0; q < rt__port.nq; q++)
        if (atomic_load_explicit(&rt__sh->qown[q], memory_order_relaxed) ==
            slot + 1)
            return true;
    return false;
}

/* Every server of v owns a queue: the queues split the connections
 * between them. With more servers than queues, the hash spreads them
 * over every server instead (a server without a queue would get none). */
static bool
all_own_queues(const struct sh_svc *v)
{
    for (int i = 0; i < v->n; i++)
        if (!owns_queue(v->v[i].slot))
            return false;
    return true;
}

/* A server of (proto, port) for this 4-tuple: -1 none known (no such
 * service), -2 known but nobody serves it now. A server with a thread
 * blocked waiting on the listener comes first (one connection per wait,
 * as a shared accept queue would hand them out: prefork servers whose
 * children serve one connection at a time depend on it); otherwise the
 * hash of the 4-tuple picks, as SO_REUSEPORT does. */
/* Nobody serves the port at the moment. If one process alone holds the
 * listening socket (its forked servers exited, say), the connection is
 * its: its stack queues it, as Linux's listener does until accept(). With
 * several holders (nginx's master and workers between two workers) the
 * SYN is dropped (-2) and sent again by the peer, by when one serves:
 * queued in a process that never accepts, it would wait for good. */
static int
sole_holder(const struct sh_svc *v)
{
    int only = -2;

    for (int i = 0; i < SH_SLOTS; i++) {
        if (v->copies[i] == 0 ||
            atomic_load(&rt__sh->slot[i].state) != SLOT_LIVE)
            continue;
        if (only != -2)
            return -2;
        only = i;
    }
    return only;
}

static int
pick_server(int proto, const struct stk_flow *f, uint32_t *lid)
{
    struct sh_svc *v = rt__sh_svc_find(proto, f->lport, false);
    uint32_t k, nwait = 0, h;

    if (v == NULL)
        return -1;
    if (v->n == 0)
        return sole_holder(v);
    h = rt__sh_flow_hash(f);
    /* Several queues: the frame came in on a queue this process polls
     * (its own, as the NIC's RSS or the kernel's fanout chose): if it
     * serves the port, and every server has a queue, the connection is
     * its own, as SO_REUSEPORT with per-queue workers does. Servers
     * blocked in accept() keep the shared queue behaviour below (a busy
     * one cannot take it). */
    if (rt__port.nq > 1 && !(v->blocking && proto == IPPROTO_TCP) &&
        all_own_queues(v)) {
        uint32_t nmine = 0;

        for (int i = 0; i < v->n; i++)
            if (v->v[i].slot == rt__sh_me)
                nmine++;
        k = nmine > 0 ? h % nmine : 0;
        for (int i = 0; nmine > 0 && i < v->n; i++) {
            if (v->v[i].slot != rt__sh_me || k-- != 0)
                continue;
            *lid = v->v[i].lid;
            return rt__sh_me;
        }
    }
    for (int i = 0; i < v->n; i++)
        if (v->v[i].waiting > 0)
            nwait++;
    if (nwait > 0 && proto == IPPROTO_TCP) {
        k = h % nwait;
        for (int i = 0; i < v->n; i++) {
            if (v->v[i].waiting == 0 || k-- != 0)
                continue;
            v->v[i].waiting--;
            v->v[i].inflight_ns = base_now_ns();
            *lid = v->v[i].lid;
            return v->v[i].slot;
        }
    }
    if (v->blocking && proto == IPPROTO_TCP)
        return -3; /* every server is busy: the SYN waits for one */
    k = h % v->n;
    *lid = v->v[k].lid;
    return v->v[k].slot;
}

/* The 4-tuple of an IPv6 frame (fixed header, no extension headers: those
 * stay with this process's stack) into *f, the transport header into *l4,
 * and the next header; -1 when it is not one the dispatch reads. */
static int
parse6(const uint8_t *ip, uint16_t len, struct stk_flow *f, const uint8_t **l4)
{
    struct stk_flow raw;

    if (len < 40 + 8 || (ip[0] >> 4) != 6)
        return -1;
    memset(&raw, 0, sizeof(raw));
    raw.v6 = true;
    memcpy(raw.lip6, ip + 24, 16);
    memcpy(raw.rip6, ip + 8, 16);
    *l4 = ip + 40;
    raw.lport = (uint16_t)((*l4)[2] << 8 | (*l4)[3]);
    raw.rport = (uint16_t)((*l4)[0] << 8 | (*l4)[1]);
    rt__sh_flow_canon(&raw, f);
    return ip[6];
}

/* A SYN for a service whose servers block in accept, all busy: it waits
 * (a retransmission replaces the copy already waiting) for the next
 * server that waits (rt__sh_serve_wait), as in a shared accept queue. */
static void
pend_syn(const struct stk_flow *f, struct rte_mbuf *m)
{
    struct sh_svc *v = rt__sh_svc_find(IPPROTO_TCP, f->lport, false);

    for (int i = 0; i < v->npend; i++) {
        const uint8_t *o = rte_pktmbuf_mtod(v->pend[i], const uint8_t *);
        const uint8_t *oip = o + 14, *ol4 = oip + (oip[0] & 0x0fu) * 4u;
        struct stk_flow g;
        uint32_t rip;

        if (o[12] == 0x86 && o[13] == 0xdd) { /* IPv6: the whole flow */
            if (parse6(oip, (uint16_t)(v->pend[i]->data_len - 14), &g, &ol4) <
                0)
                continue;
            rip = g.lip == f->lip ? g.rip : ~f->rip;
        } else {
            memcpy(&rip, oip + 12, 4);
        }
        if (rip == f->rip && (uint16_t)(ol4[0] << 8 | ol4[1]) == f->rport) {
            rte_pktmbuf_free(v->pend[i]);
            v->pend[i] = m;
            return;
        }
    }
    if (v->npend == SH_PENDING) {
        BASE_STAT_INC(share_drop_noserver);
        RT_CAPTURE_DROPPED(m, BASE_SR_CAP_DROP_SHARE);
        rte_pktmbuf_free(m);
        return;
    }
    v->pend[v->npend++] = m;
    BASE_STAT_INC(share_syn_pending);
}

/* A copy to every other live process that has polled, then to this
 * process's stack: ARP (each stack keeps its own neighbour cache) and IGMP
 * (each has its own memberships). */
static void
to_all(struct rte_mbuf *m)
{
    for (int i = 0; i < SH_SLOTS; i++) {
        if (i == rt__sh_me || !atomic_load(&rt__sh->slot[i].active) ||
            atomic_load(&rt__sh->slot[i].state) != SLOT_LIVE)
            continue;
        rte_mbuf_refcnt_update(m, 1);
        give(i, m, 0);
    }
    local(m, 0);
}

/* A multicast or limited-broadcast destination (network order). */
static bool
is_group(uint32_t dst)
{
    uint32_t h = rte_be_to_cpu_32(dst);

    return (h >> 28) == 0xe || h == 0xffffffffu;
}

/* A UDP datagram to a group: as on Linux, every socket that joined it
 * gets a copy, whichever process holds it. So a copy goes to each process
 * serving the port, whose stack filters by its own memberships; this
 * process's stack takes one if it serves the port or nobody does. */
static void
udp_group(const struct stk_flow *f, struct rte_mbuf *m)
{
    struct sh_svc *v = rt__sh_svc_find(IPPROTO_UDP, f->lport, false);
    bool mine = v == NULL || v->n == 0;
    uint64_t done = 0;

    for (int i = 0; v != NULL && i < v->n; i++) {
        int slot = v->v[i].slot;

        if (done & (1ull << slot))
            continue;
        done |= 1ull << slot;
        if (slot == rt__sh_me) {
            mine = true;
            continue;
        }
        rte_mbuf_refcnt_update(m, 1);
        give(slot, m, 0);
    }
    if (mine)
        local(m, 0);
    else
        rte_pktmbuf_free(m);
}

/* A TCP segment of flow f: to the connection's owner, or for a new
 * connection (a SYN) to a process that serves the listener. Returns the
 * slot, or -1 for this process; *done when the frame was taken. */
static int
tcp_to(const struct stk_flow *f, const uint8_t *l4, struct rte_mbuf *m,
       uint32_t *lid, bool *done)
{
    bool syn = (l4[13] & 0x12) == 0x02; /* SYN without ACK */
    struct sh_flow *e = rt__sh_flow_find(f);
    int to;

    *done = false;
    if (e != NULL && e->frozen) {
        hold(f, e, m);
        *done = true;
        return -1;
    }
    if (e != NULL && !(syn && e->tw))
        return e->owner;
    if (!syn)
        return -1;
    /* A new connection (also one reusing a 4-tuple that is in TIME-WAIT
     * somewhere: it goes to a process that serves the listener, whose
     * report then takes the entry over). */
    to = pick_server(IPPROTO_TCP, f, lid);
    if (to == -1 && e != NULL)
        to = e->owner; /* no listener: the TIME-WAIT's owner */
    if (to == -3) {
        pend_syn(f, m);
        *done = true;
    } else if (to == -2) {
        BASE_STAT_INC(share_drop_noserver);
        RT_CAPTURE_DROPPED(m, BASE_SR_CAP_DROP_SHARE);
        rte_pktmbuf_free(m);
        *done = true;
    }
    return to;
}

static void
dispatch(struct rte_mbuf *m)
{
    const uint8_t *fr = rte_pktmbuf_mtod(m, const uint8_t *);
    uint16_t len = m->data_len, type;
    const uint8_t *ip, *l4;
    struct stk_flow f;
    uint32_t lid = 0;
    bool group, done;
    unsigned ihl;
    int proto, to;

    if (len < 14 + 20)
        goto mine;
    type = (uint16_t)(fr[12] << 8 | fr[13]);
    if (type == 0x0806) { /* ARP: every stack keeps its own cache */
        to_all(m);
        return;
    }
    ip = fr + 14;
    if (type == 0x86dd) {
        proto = parse6(ip, (uint16_t)(len - 14), &f, &l4);
        if (proto == 58) { /* ICMPv6: ND and MLD, as ARP and IGMP */
            to_all(m);
            return;
        }
        group = ip[24] == 0xff;
        if ((proto == 6 && len < 14 + 40 + 20) || proto < 0)
            goto mine;
    } else if (type == 0x0800) {
        ihl = (ip[0] & 0x0fu) * 4u;
        if ((ip[0] >> 4) != 4 || ihl < 20 || len < 14 + ihl + 8 ||
            (((ip[6] << 8) | ip[7]) & 0x3fff) != 0) /* a fragment */
            goto mine;
        l4 = ip + ihl;
        memset(&f, 0, sizeof(f));
        memcpy(&f.lip, ip + 16, 4);
        memcpy(&f.rip, ip + 12, 4);
        f.lport = (uint16_t)(l4[2] << 8 | l4[3]);
        f.rport = (uint16_t)(l4[0] << 8 | l4[1]);
        proto = ip[9];
        group = is_group(f.lip);
        if (proto == 6 && len < 14 + ihl + 20)
            goto mine;
        if (proto == 2) { /* IGMP: each stack has its own groups */
            to_all(m);
            return;
        }
    } else {
        goto mine;
    }
    if (proto == 6) {
        to = tcp_to(&f, l4, m, &lid, &done);
        if (done)
            return;
    } else if (proto == 17 && group) {
        udp_group(&f, m);
        return;
    } else if (proto == 17) {
        to = pick_server(IPPROTO_UDP, &f, &lid);
        if (to == -2)
            to = -1;
    } else {
        to = -1;
    }
    if (to >= 0 && to != rt__sh_me) {
        give(to, m, lid);
        return;
    }
mine:
    local(m, lid);
}

void
rt__sh_wake_slots(void)
{
    uint64_t one = 1, mask = rt__sh_wake_mask;

    rt__sh_wake_mask = 0;
    if (mask == 0)
        return;
    /* The frames went into the slots' rings (and cells) with release
     * stores; a sleeper counts itself in `sleepers`, then looks at its
     * ring. Without a full fence here the loads of `sleepers` below may be
     * served before those stores are visible (x86 lets a load pass an
     * earlier store): each side misses the other and the sleeper sleeps
     * to its timeout. The port lock's unlock before this call, a locked
     * instruction on x86, orders them in practice; C11 does not promise
     * it. */
    atomic_thread_fence(memory_order_seq_cst);
    while (mask != 0) {
        int i = __builtin_ctzll(mask);
        mask &= mask - 1;
        if (i != rt__sh_me && atomic_load(&rt__sh->slot[i].sleepers) > 0) {
            BASE_STAT_INC(share_wakes);
            syscall(SYS_write, rt__sh_efd(i), &one, sizeof(one));
        }
    }
}

void
rt__sh_kick_family(void)
{
    uint64_t one = 1;

    atomic_thread_fence(memory_order_seq_cst); /* as in rt__sh_wake_slots */

    for (int i = 0; i < SH_SLOTS; i++) {
        struct sh_slot *s = &rt__sh->slot[i];

        if (i == rt__sh_me || s->remote ||
            atomic_load(&s->state) != SLOT_LIVE ||
            atomic_load(&s->sleepers) == 0)
            continue;
        syscall(SYS_write, rt__sh_efd(i), &one, sizeof(one));
        return;
    }
}

/* Joined processes (share_join.c) cannot read the port's mbufs: what was
 * dispatched to them is copied into their cells here, by the family's
 * port lock holder, and they are woken as for their ring. */
void
rt__sh_pump_remote(void)
{
    uint64_t mask = rt__sh->remote_mask;

    while (mask != 0) {
        int i = __builtin_ctzll(mask);
        struct sh_slot *s = &rt__sh->slot[i];
        struct sh_xring *x = &rt__sh->xr[i];
        struct rte_mbuf *m;

        mask &= mask - 1;
        while ((m = rt__sh_ring_get(&s->rx)) != NULL) {
            uint32_t t = atomic_load_explicit(&x->tail, memory_order_relaxed);
            uint32_t h = atomic_load_explicit(&x->head, memory_order_acquire);

            if (t - h >= SH_XCELLS || m->data_len > SH_CELL_DATA ||
                m->nb_segs != 1) {
                atomic_fetch_add_explicit(&s->drops, 1, memory_order_relaxed);
                BASE_STAT_INC(share_drop_ring);
                RT_CAPTURE_DROPPED(m, BASE_SR_CAP_DROP_SHARE);
            } else {
                struct sh_cell *c = &x->c[t & (SH_XCELLS - 1)];

                memcpy(c->data, rte_pktmbuf_mtod(m, const void *), m->data_len);
                c->len = m->data_len;
                c->lid = m->hash.usr;
                atomic_store_explicit(&x->tail, t + 1, memory_order_release);
                BASE_STAT_INC(share_pumped);
                rt__sh_wake_mask |= 1ull << i;
            }
            rte_pktmbuf_free(m);
        }
    }
}

/* Frames the driver flags as bad, or chained: the stack does not take
 * them. */
static bool
frame_bad(const struct rte_mbuf *m)
{
    return m->nb_segs != 1 ||
           (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
               RTE_MBUF_F_RX_IP_CKSUM_BAD ||
           (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) ==
               RTE_MBUF_F_RX_L4_CKSUM_BAD;
}

/* ---- the poll turn in shared mode (stack lock held) ------------------- */

int
rt__share_drain(void)
{
    struct rte_mbuf *m;
    int n = 0;

    if (!atomic_load_explicit(&rt__sh->slot[rt__sh_me].active,
                              memory_order_relaxed))
        atomic_store(&rt__sh->slot[rt__sh_me].active, true);
    while (n < (int)rt__port.rx_budget &&
           (m = rt__sh_ring_get(&rt__sh->slot[rt__sh_me].rx)) != NULL) {
        /* Each burst of frames its own time (see loop.c). */
        if (n != 0 && n % rt__port.burst == 0)
            stk_clock_turn(base_now_ns());
        stk_input_lid(rte_pktmbuf_mtod(m, const void *), m->data_len,
                      m->hash.usr);
        rt__mbuf_recycle(m);
        n++;
    }
    return n;
}

uint64_t
rt__share_last_app_poll(void)
{
    return atomic_load_explicit(&rt__sh->last_app_poll_ns,
                                memory_order_relaxed);
}

/* A segment of a connection this process's stack holds live: its own to
 * input, without the flow table (several queues). SYNs, frozen and
 * TIME-WAIT connections, UDP, ARP and the rest go through dispatch. */
static bool
fast_local(const struct rte_mbuf *m)
{
    const uint8_t *fr = rte_pktmbuf_mtod(m, const uint8_t *), *ip, *l4;
    struct stk_flow f;
    unsigned ihl;

    if (m->data_len < 14 + 20 + 20 || fr[12] != 0x08 || fr[13] != 0x00)
        return false;
    ip = fr + 14;
    ihl = (ip[0] & 0x0fu) * 4u;
    if (ip[0] >> 4 != 4 || ip[9] != 6 || ihl < 20 ||
        m->data_len < 14 + ihl + 20 || (((ip[6] << 8) | ip[7]) & 0x3fff) != 0)
        return false;
    l4 = ip + ihl;
    if ((l4[13] & 0x12) == 0x02) /* SYN without ACK */
        return false;
    memcpy(&f.lip, ip + 16, 4);
    memcpy(&f.rip, ip + 12, 4);
    f.lport = (uint16_t)(l4[2] << 8 | l4[3]);
    f.rport = (uint16_t)(l4[0] << 8 | l4[1]);
    return stk_flow_active(&f);
}

/* A received burst: bad frames dropped and, with own set (several
 * queues), segments of this process's live connections input; the rest
 * moved to the front of pkts, in order, for dispatch: returns how many.
 * With one queue every frame is dispatched in arrival order through the
 * flow table. */
static uint16_t
take_own(struct rte_mbuf **pkts, uint16_t n, uint64_t *bytes, bool own)
{
    uint16_t rest = 0;

    for (uint16_t i = 0; i < n; i++) {
        struct rte_mbuf *m = pkts[i];

        if (i + 1 < n)
            rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
        *bytes += m->pkt_len;
        if (frame_bad(m)) {
            BASE_STAT_INC(rx_drop_stack);
            rte_pktmbuf_free(m);
        } else if (own && fast_local(m)) {
            BASE_STAT_INC(share_fast_local);
            local(m, 0);
        } else {
            pkts[rest++] = m;
        }
    }
    return rest;
}

/* Whether this process polls queue q (several queues): its own, and any
 * nobody owns. */
static bool
polls_queue(unsigned q)
{
    unsigned own = atomic_load_explicit(&rt__sh->qown[q], memory_order_relaxed);

    return own == 0 || own == (unsigned)rt__sh_me + 1;
}

bool
rt__share_watches_queue(unsigned q)
{
    return !rt__shared || rt__port.nq < 2 || polls_queue(q);
}

/* A process that serves something and has no queue takes a free one (an
 * nginx worker started by a reload, once an old worker has left). */
static bool
serves_any(void)
{
    for (int i = 0; i < rt__sh_nlsv; i++)
        if (rt__sh_lsv[i].serving)
            return true;
    return false;
}

static bool
queue_free(void)
{
    for (unsigned q = 0; q < rt__port.nq; q++)
        if (atomic_load_explicit(&rt__sh->qown[q], memory_order_relaxed) == 0)
            return true;
    return false;
}

/* af_packet queue q's rx position may be behind the kernel's after a
 * death mid-burst (pkt_repair.c): one bit test per burst until found. */
static inline void
pkt_resync_if_unsure(uint16_t q)
{
    if (atomic_load_explicit(&rt__sh->pkt_unsure, memory_order_relaxed) &
        (1u << q))
        rt__pkt_rx_resync(q);
}

/* The poll turn with several queues: a burst from this process's queue
 * (and from any nobody owns) under that queue's lock only; segments of
 * its own connections go straight to its stack; the rest is dispatched
 * under the port lock. */
static int
rx_queues(uint64_t now, uint64_t *bytes)
{
    struct rte_mbuf *pkts[RT__MAX_BURST];
    uint16_t got, ns, start;
    int n = 0;
    bool flush = rt__tx_due();

    if (rt__sh_myq < 0 && !rt__is_progress && queue_free() && serves_any()) {
        rt__sh_port_lock();
        rt__sh_q_claim();
        rt__sh_port_unlock();
    }
    if (rt__sh_nops > 0 ||
        (int64_t)(now -
                  __atomic_load_n(&rt__sh->last_sweep_ns, __ATOMIC_RELAXED)) >=
            (int64_t)SWEEP_NS) {
        rt__sh_port_lock();
        rt__sh_ops_apply();
        rt__sh_sweep(now);
        rt__sh_dfree_drain();
        if (rt__sh->remote_mask != 0)
            rt__sh_pump_remote();
        rt__sh_port_unlock();
    }
    start = rt__sh_myq >= 0 ? (uint16_t)rt__sh_myq : 0;
    do {
        got = 0;
        stk_clock_turn(base_now_ns()); /* per burst: see loop.c */
        for (uint16_t k = 0; k < rt__port.nq && got < rt__port.burst; k++) {
            uint16_t q = (uint16_t)((start + k) % rt__port.nq);

            if (!polls_queue(q) || !rt__sh_q_trylock(q))
                continue;
            pkt_resync_if_unsure(q);
            got += rte_eth_rx_burst(rt__port.port_id, q, pkts + got,
                                    (uint16_t)(rt__port.burst - got));
            rt__sh_q_unlock(q);
        }
        if (rt__impair_active()) /* ACCEL_TEST_IMPAIR, dir=rx */
            got = rt__impair_rx(pkts, got, (uint16_t)rt__port.burst);
        ns = take_own(pkts, got, bytes, true);
        if (ns > 0) {
            rt__sh_port_lock();
            rt__sh_ops_apply();
            for (uint16_t i = 0; i < ns; i++)
                dispatch(pkts[i]);
            if (rt__sh->remote_mask != 0)
                rt__sh_pump_remote();
            rt__sh_ops_apply();
            rt__sh_port_unlock();
        }
        n += got;
    } while (rt__rx_again(got, (uint32_t)n));
    if (flush || rt__tx_due())
        rt__share_tx_flush();
    if (rt__sh_wake_mask != 0)
        rt__sh_wake_slots();
    return n;
}

int
rt__share_rx(uint64_t now, uint64_t *bytes)
{
    struct rte_mbuf *pkts[RT__MAX_BURST];
    uint16_t got, ns;
    int n = 0;

    if (rt__port.nq > 1)
        return rx_queues(now, bytes);

    /* Written at most every 100 us: the line is shared by every process. */
    if (!rt__is_progress &&
        base_ns_since(now, atomic_load_explicit(&rt__sh->last_app_poll_ns,
                                                memory_order_relaxed)) > 100000)
        atomic_store_explicit(&rt__sh->last_app_poll_ns, now,
                              memory_order_relaxed);
    bool flush = rt__tx_due();

    if (flush || rt__sh_nops > 0)
        rt__sh_port_lock();
    else if (!rt__sh_port_trylock())
        return 0;
    rt__sh_ops_apply();
    rt__sh_sweep(now);
    if (rt__mf_stale()) {
        rt__sh_port_unlock();
        if (rt__sh_wake_mask != 0)
            rt__sh_wake_slots();
        rt__mf_refresh();
        return 0;
    }
    rt__sh_dfree_drain();
    pkt_resync_if_unsure(0);
    do {
        got = rte_eth_rx_burst(rt__port.port_id, 0, pkts,
                               (uint16_t)rt__port.burst);
        if (rt__impair_active()) /* ACCEL_TEST_IMPAIR, dir=rx */
            got = rt__impair_rx(pkts, got, (uint16_t)rt__port.burst);
        ns = take_own(pkts, got, bytes, false);
        for (uint16_t i = 0; i < ns; i++)
            dispatch(pkts[i]);
        n += got;
    } while (rt__rx_again(got, (uint32_t)n));
    if (rt__sh->remote_mask != 0)
        rt__sh_pump_remote();
    rt__sh_ops_apply();
    if (flush || rt__tx_due())
        rt__tx_flush_locked();
    rt__sh_port_unlock();
    if (rt__sh_wake_mask != 0)
        rt__sh_wake_slots();
    return n;
}

/* rt__tx_flush in shared mode: the burst needs the port lock (one
 * queue) or the queue's lock, after any flow report is on record. */
void
rt__share_tx_flush(void)
{
    if (rt__port.nq > 1) {
        if (rt__sh_nops > 0 && !rt__sh_port_held) {
            rt__sh_port_lock();
            rt__sh_ops_apply();
            rt__sh_port_unlock();
        } else if (rt__sh_port_held) {
            rt__sh_ops_apply();
        }
        rt__sh_tx_flush_held();
        return;
    }
    if (rt__sh_port_held) {
        rt__sh_ops_apply();
        rt__tx_flush_locked();
        return;
    }
    rt__sh_port_lock();
    rt__sh_ops_apply();
    if (rt__mf_stale()) {
        rt__sh_port_unlock();
        rt__mf_refresh();
        rt__sh_port_lock();
    }
    rt__tx_flush_locked();
    rt__sh_port_unlock();
}

/* ---- sleeping (rt_block) ---------------------------------------------- */

int
rt__share_sleep_begin(void)
{
    struct sh_slot *s = &rt__sh->slot[rt__sh_me];

    atomic_fetch_add(&s->sleepers, 1);
    atomic_thread_fence(memory_order_seq_cst); /* pairs with wake_slots' */
    if (rt__remote ? rt__rm_pending() : !rt__sh_ring_empty(&s->rx)) {
        atomic_fetch_sub(&s->sleepers, 1);
        return -1; /* frames waiting: do not sleep */
    }
    return rt__sh_efd(rt__sh_me);
}

void
rt__share_sleep_end(bool woken)
{
    struct sh_slot *s = &rt__sh->slot[rt__sh_me];
    uint64_t v;

    atomic_fetch_sub(&s->sleepers, 1);
    if (woken)
        syscall(SYS_read, rt__sh_efd(rt__sh_me), &v, sizeof(v));
}
