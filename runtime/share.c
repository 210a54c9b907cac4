/*
 * Several processes on one port: the fork model (docs/DESIGN.md §6).
 *
 * The process that starts the data path owns the DPDK port; fork() gives
 * its children the same port (queue state and mbufs live in hugepage
 * memory, shared across fork) and a copy of its lwIP stack. From the first
 * fork on, the processes share the port through a region of shared memory
 * made at that fork (a memfd, MAP_SHARED, so every later child inherits
 * it):
 *
 *  - a robust process-shared mutex, the port lock: whoever holds it
 *    receives a burst and transmits its own frames. A process killed while
 *    holding it leaves it recoverable (EOWNERDEAD);
 *  - a slot per process (64): its pid, a liveness token (a robust mutex
 *    the process holds: a dead or exec'd process's token reads as
 *    EOWNERDEAD), an eventfd made before the first fork (so every process
 *    has all of them) to wake it, and a ring of mbufs received for it;
 *  - a flow table: TCP 4-tuple -> the process whose stack holds the
 *    connection, or "frozen" (copied by a fork, not yet claimed: its
 *    segments are held until a process claims it, stack/fork.c);
 *  - a service table: (protocol, local port) -> the (process, listener id)
 *    pairs that serve it: processes that accept on, poll or epoll a
 *    listening socket, or receive on a UDP socket (rt_serve).
 *
 * Whoever holds the port lock dispatches each received frame: a TCP
 * segment of a known connection to its owner; a SYN (or a UDP datagram)
 * to one of the service's servers, chosen by a hash of the 4-tuple (as
 * SO_REUSEPORT does), tagged with the listener id so that the owner's
 * stack queues it on that listener; a SYN for a port whose listeners are
 * all idle is dropped (the client retries) rather than queued where no one
 * accepts; ARP to itself and a copy to every active process (each stack
 * keeps its own neighbour cache); anything else to its own stack, which
 * answers as a lone process would (ICMP echo, RST for unknown segments).
 * Frames for another process go into its ring and its eventfd is written
 * if one of its threads sleeps. Each process drains its ring under its
 * own stack lock, without the port lock.
 *
 * Each stack reports the connections it adds and removes
 * (stk_set_flow_ops); the reports are applied to the flow table under the
 * port lock, always before the process transmits, so an owner is on
 * record before its SYN or SYN-ACK leaves.
 *
 * The holder of the port lock checks the other processes' tokens every
 * SWEEP_NS; a process gone (killed, exited without cleanup, or exec'd)
 * has its ring drained, its connections removed (their peers get a RST
 * from the stack that receives their next segment), its copies of frozen
 * connections released and its services withdrawn. A process that exits
 * normally does the same for itself; the last one closes the port.
 *
 * Not shared: a process whose memory is not in hugepages (--no-huge makes
 * DPDK's memory private to the process): its children use the kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "siphash.h"
#include "stats.h"
#include "stk.h"

#define SH_SLOTS 64
#define SH_RING 4096u /* mbufs queued for one process */
#define SH_FLOWS (1u << 18)
#define SH_FLOW_MAX (SH_FLOWS / 4 * 3)
#define SH_SVCS 256
#define SH_SRV 64
#define SH_HELD 1024
#define SWEEP_NS 100000000ull
#define RESERVE_TIMEOUT_NS 10000000000ull
/* A pending SYN handed to a blocking server counts as being set up for
 * this long at most (a handshake that never completes frees it). */
#define INFLIGHT_NS 1000000000ull
/* A listener this process stopped serving keeps its queue this long
 * before the connections move to another process. */
#define UNSERVED_NS 2000000ull

enum { SLOT_FREE = 0, SLOT_RESERVED, SLOT_LIVE };

struct sh_ring {
    _Atomic uint32_t head, tail; /* consumer, producer */
    struct rte_mbuf *e[SH_RING];
};

struct sh_slot {
    _Atomic int state;
    _Atomic int pid;
    uint64_t reserved_ns;
    pthread_mutex_t token; /* held by the process while it lives */
    bool tokenless;        /* its holder thread ended: check by pid */
    int efd;
    _Atomic int sleepers;
    _Atomic bool active; /* has polled: gets ARP copies */
    _Atomic uint64_t drops;
    struct sh_ring rx;
};

struct sh_flow {
    uint32_t lip, rip;
    uint16_t lport, rport;
    uint8_t used, frozen, owner, tw; /* tw: in the owner's TIME-WAIT */
    uint64_t holders;                /* frozen: slots holding a copy */
};

#define SH_PENDING 64

struct sh_svc {
    uint8_t used, proto;
    uint16_t port;
    uint16_t n;
    bool blocking; /* its servers block in accept: SYNs wait for one */
    uint8_t copies[SH_SLOTS]; /* listening sockets each process holds */
    uint16_t npend;
    struct rte_mbuf *pend[SH_PENDING]; /* SYNs no waiting server took */
    struct {
        uint8_t slot;
        uint16_t waiting; /* threads blocked accepting/polling on it */
        uint32_t lid;
        uint64_t inflight_ns; /* a pending SYN was handed to it then */
    } v[SH_SRV];
};

struct sh_held {
    struct stk_flow f;
    struct rte_mbuf *m; /* NULL: free */
};

/* Connections queued on a listener in one process and moved to another
 * (stack/migrate.c): see rt_migrate_out. */
#define SH_MIG 64
#define SH_MIG_DATA 16384
struct sh_mig {
    uint8_t used;
    uint16_t port;
    uint64_t t_ns;
    struct stk_conn_image img;
    uint8_t data[SH_MIG_DATA];
};

struct sh_region {
    pthread_mutex_t port_mu;
    _Atomic uint32_t nmig;
    struct sh_mig mig[SH_MIG];
    _Atomic uint64_t last_app_poll_ns; /* any process's application thread */
    uint64_t key[2];
    uint64_t last_sweep_ns;
    uint32_t nflows;
    struct sh_slot slot[SH_SLOTS];
    struct sh_svc svc[SH_SVCS];
    struct sh_held held[SH_HELD];
    struct sh_flow flow[SH_FLOWS];
};

static struct sh_region *sh;
static int me = -1;         /* this process's slot */
static int child_slot = -1; /* reserved by the fork in progress */
bool rt__shared;
static __thread bool port_held;
static bool share_failed; /* no hugepages or no region: children on kernel */

/* Flow reports waiting for the port lock (stack lock held). */
struct flow_op {
    struct stk_flow f;
    bool add, tw;
};
static struct flow_op *ops;
static uint32_t nops, capops;

/* This process's services, kept before the region exists too. */
struct local_svc {
    int proto;
    uint16_t port;
    uint32_t lid;
    bool serving;
    struct stk_sock *stk; /* the listening socket (NULL for UDP) */
    uint64_t off_ns;      /* when it stopped serving */
};
#define LOCAL_SVCS 256
static struct local_svc lsv[LOCAL_SVCS];
static int nlsv;

static uint64_t wake_mask; /* slots given frames in this dispatch */
static void wake_slots(void);

/* ---- the port lock --------------------------------------------------------
 */

static void
robust_init(pthread_mutex_t *mu)
{
    pthread_mutexattr_t a;

    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(mu, &a);
    pthread_mutexattr_destroy(&a);
}

static void
port_recovered(void)
{
    pthread_mutex_consistent(&sh->port_mu);
    RT_STAT_INC(share_lock_recovered);
    RT_WARN("share", "a process died holding the port lock; recovered");
}

static void
port_lock(void)
{
    if (pthread_mutex_lock(&sh->port_mu) == EOWNERDEAD)
        port_recovered();
    port_held = true;
}

static bool
port_trylock(void)
{
    int rc = pthread_mutex_trylock(&sh->port_mu);

    if (rc == EOWNERDEAD)
        port_recovered();
    else if (rc != 0)
        return false;
    port_held = true;
    return true;
}

static void
port_unlock(void)
{
    port_held = false;
    pthread_mutex_unlock(&sh->port_mu);
}

/* ---- rings ------------------------------------------------------------------
 */

static bool
ring_put(struct sh_ring *r, struct rte_mbuf *m)
{
    uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);

    if (t - h >= SH_RING)
        return false;
    r->e[t & (SH_RING - 1)] = m;
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return true;
}

static struct rte_mbuf *
ring_get(struct sh_ring *r)
{
    uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    struct rte_mbuf *m;

    if (h == atomic_load_explicit(&r->tail, memory_order_acquire))
        return NULL;
    m = r->e[h & (SH_RING - 1)];
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return m;
}

static bool
ring_empty(struct sh_ring *r)
{
    return atomic_load(&r->head) == atomic_load(&r->tail);
}

/* ---- flow table (port lock held) ------------------------------------------
 */

static uint32_t
flow_hash(const struct stk_flow *f)
{
    uint64_t w[2] = {(uint64_t)f->lip << 32 | f->rip,
                     (uint64_t)f->lport << 16 | f->rport};

    return (uint32_t)stk__siphash(sh->key, w, 2, 1, 3);
}

static bool
flow_eq(const struct sh_flow *e, const struct stk_flow *f)
{
    return e->lip == f->lip && e->rip == f->rip && e->lport == f->lport &&
           e->rport == f->rport;
}

static struct sh_flow *
flow_find(const struct stk_flow *f)
{
    for (uint32_t i = flow_hash(f) & (SH_FLOWS - 1); sh->flow[i].used;
         i = (i + 1) & (SH_FLOWS - 1))
        if (flow_eq(&sh->flow[i], f))
            return &sh->flow[i];
    return NULL;
}

static struct sh_flow *
flow_insert(const struct stk_flow *f)
{
    static bool full_logged;
    uint32_t i;

    for (i = flow_hash(f) & (SH_FLOWS - 1); sh->flow[i].used;
         i = (i + 1) & (SH_FLOWS - 1))
        if (flow_eq(&sh->flow[i], f))
            return &sh->flow[i];
    if (sh->nflows >= SH_FLOW_MAX) {
        if (!full_logged)
            RT_ERR("share",
                   "flow table full (%u connections across the "
                   "processes); new connections may be reset",
                   SH_FLOW_MAX);
        full_logged = true;
        return NULL;
    }
    memset(&sh->flow[i], 0, sizeof(sh->flow[i]));
    sh->flow[i].lip = f->lip;
    sh->flow[i].rip = f->rip;
    sh->flow[i].lport = f->lport;
    sh->flow[i].rport = f->rport;
    sh->flow[i].used = 1;
    sh->nflows++;
    return &sh->flow[i];
}

/* The entry names this process as the connection's only owner (live, not
 * in TIME-WAIT); segments held for it stay until replayed or freed. */
static void
flow_take(struct sh_flow *e)
{
    e->owner = (uint8_t)me;
    e->frozen = 0;
    e->holders = 0;
    e->tw = 0;
}

static void
held_free(const struct stk_flow *f)
{
    for (int i = 0; i < SH_HELD; i++) {
        struct sh_held *h = &sh->held[i];
        if (h->m != NULL && memcmp(&h->f, f, sizeof(*f)) == 0) {
            rte_pktmbuf_free(h->m);
            h->m = NULL;
        }
    }
}

/* Linear probing deletion without tombstones (as stack/pcb_hash.c). */
static void
flow_erase(struct sh_flow *e)
{
    uint32_t i = (uint32_t)(e - sh->flow), j = i, home;
    struct stk_flow f = {e->lip, e->rip, e->lport, e->rport};

    if (e->frozen)
        held_free(&f);
    for (;;) {
        struct stk_flow g;

        j = (j + 1) & (SH_FLOWS - 1);
        if (!sh->flow[j].used)
            break;
        g = (struct stk_flow){sh->flow[j].lip, sh->flow[j].rip,
                              sh->flow[j].lport, sh->flow[j].rport};
        home = flow_hash(&g) & (SH_FLOWS - 1);
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        sh->flow[i] = sh->flow[j];
        i = j;
    }
    sh->flow[i].used = 0;
    sh->nflows--;
}

static void
ops_apply(void)
{
    for (uint32_t k = 0; k < nops; k++) {
        struct sh_flow *e;

        if (ops[k].add) {
            e = flow_insert(&ops[k].f);
            if (e != NULL) {
                if (e->frozen)
                    held_free(&ops[k].f);
                flow_take(e);
                e->tw = ops[k].tw;
            }
        } else {
            e = flow_find(&ops[k].f);
            if (e != NULL && !e->frozen && e->owner == me)
                flow_erase(e);
        }
    }
    nops = 0;
}

static void
flow_note(const struct stk_flow *f, bool add, bool tw)
{
    if (nops == capops) {
        uint32_t cap = capops ? capops * 2 : 256;
        struct flow_op *n = realloc(ops, cap * sizeof(*ops));
        if (n == NULL) {
            /* Apply now rather than lose the report. */
            port_lock();
            ops_apply();
            port_unlock();
            if (nops == capops)
                return;
        } else {
            ops = n;
            capops = cap;
        }
    }
    ops[nops].f = *f;
    ops[nops].add = add;
    ops[nops].tw = tw;
    nops++;
    if (port_held)
        ops_apply();
}

/* An active open's 4-tuple, reserved across the processes before its
 * port is taken (stack/fork.c); the add report that follows confirms it. */
static bool
flow_reserve(const struct stk_flow *f, bool take)
{
    bool locked = !port_held, ok = true;
    struct sh_flow *e;

    if (locked)
        port_lock();
    ops_apply();
    e = flow_find(f);
    if (take) {
        /* Any entry (another process's connection, or a TIME-WAIT
         * anywhere) makes the 4-tuple unavailable. */
        if (e != NULL || (e = flow_insert(f)) == NULL) {
            ok = false;
        } else {
            flow_take(e);
        }
    } else if (e != NULL && !e->frozen && e->owner == me) {
        flow_erase(e);
    }
    if (locked)
        port_unlock();
    return ok;
}

static const struct stk_flow_ops flow_ops = {.note = flow_note,
                                             .reserve = flow_reserve};

/* ---- services (port lock held) ------------------------------------------- */

static struct sh_svc *
svc_find(int proto, uint16_t port, bool create)
{
    struct sh_svc *free_svc = NULL;

    for (int i = 0; i < SH_SVCS; i++) {
        struct sh_svc *v = &sh->svc[i];
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
static void
svc_drop_if_unheld(struct sh_svc *v)
{
    for (int i = 0; i < SH_SLOTS; i++)
        if (v->copies[i] != 0)
            return;
    for (int i = 0; i < v->npend; i++)
        rte_pktmbuf_free(v->pend[i]);
    v->npend = 0;
    v->n = 0;
    v->used = 0;
    for (int k = 0; k < SH_MIG; k++) {
        struct sh_mig *g = &sh->mig[k];
        struct sh_flow *e;
        if (!g->used || g->port != v->port)
            continue;
        e = flow_find(&g->img.f);
        if (e != NULL)
            flow_erase(e);
        g->used = 0;
        atomic_fetch_sub(&sh->nmig, 1);
    }
}

static void
svc_copies(int proto, uint16_t port, int delta)
{
    struct sh_svc *v = svc_find(proto, port, delta > 0);

    if (v == NULL)
        return;
    if (delta > 0 && v->copies[me] < 255)
        v->copies[me]++;
    else if (delta < 0 && v->copies[me] > 0)
        v->copies[me]--;
    if (delta < 0)
        svc_drop_if_unheld(v);
}

static void
svc_set(const struct local_svc *l, bool on)
{
    struct sh_svc *v = svc_find(l->proto, l->port, true);

    if (v == NULL)
        return;
    for (int i = 0; i < v->n; i++) {
        if (v->v[i].slot == me && v->v[i].lid == l->lid) {
            if (!on)
                v->v[i] = v->v[--v->n];
            return;
        }
    }
    if (on && v->n < SH_SRV) {
        v->v[v->n].slot = (uint8_t)me;
        v->v[v->n].lid = l->lid;
        v->v[v->n].waiting = 0;
        v->n++;
    }
}

void
rt_serve_wait(int proto, uint16_t port, uint32_t lid, bool on, bool accept)
{
    struct sh_svc *v;

    if (!rt__shared)
        return;
    port_lock();
    v = svc_find(proto, port, false);
    for (int i = 0; v != NULL && i < v->n; i++) {
        if (v->v[i].slot != me || v->v[i].lid != lid)
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
        if (rt_now_ns() - v->v[i].inflight_ns <= INFLIGHT_NS)
            break; /* its connection is being set up: not free yet */
        if (v->npend > 0) {
            struct rte_mbuf *m = v->pend[0];
            memmove(v->pend, v->pend + 1, --v->npend * sizeof(v->pend[0]));
            v->v[i].inflight_ns = rt_now_ns();
            m->hash.usr = lid;
            if (!ring_put(&sh->slot[me].rx, m))
                rte_pktmbuf_free(m);
            break;
        }
        v->v[i].waiting++;
        break;
    }
    port_unlock();
}

void
rt_serve_accepted(int proto, uint16_t port, uint32_t lid)
{
    struct sh_svc *v;

    if (!rt__shared)
        return;
    port_lock();
    v = svc_find(proto, port, false);
    for (int i = 0; v != NULL && i < v->n; i++)
        if (v->v[i].slot == me && v->v[i].lid == lid)
            v->v[i].inflight_ns = 0;
    port_unlock();
}

void
rt_serve(struct stk_sock *stk, int proto, uint16_t port, uint32_t lid, int how)
{
    struct local_svc *l = NULL;
    bool shared = sh != NULL && me >= 0;

    for (int i = 0; i < nlsv; i++)
        if (lsv[i].proto == proto && lsv[i].port == port && lsv[i].lid == lid)
            l = &lsv[i];
    if (how == RT_SERVE_CLOSE) {
        if (shared) {
            port_lock();
            if (l != NULL)
                svc_set(l, false);
            svc_copies(proto, port, -1);
            port_unlock();
        }
        if (l != NULL)
            *l = lsv[--nlsv];
        return;
    }
    if (how == RT_SERVE_OFF) {
        if (l == NULL)
            return;
        l->serving = false;
        l->off_ns = rt_now_ns();
        if (shared) {
            port_lock();
            svc_set(l, false);
            port_unlock();
        }
        return;
    }
    if (l == NULL) {
        if (nlsv == LOCAL_SVCS)
            return;
        l = &lsv[nlsv++];
        *l = (struct local_svc){
            proto,      port, lid, false, proto == IPPROTO_TCP ? stk : NULL,
            rt_now_ns()};
    } else if (l->serving || how == RT_SERVE_DECLARE) {
        return;
    }
    l->serving = how == RT_SERVE_ON;
    if (shared) {
        port_lock();
        if (how == RT_SERVE_DECLARE)
            svc_copies(proto, port, +1);
        else
            svc_set(l, true);
        port_unlock();
    }
}

/* Input every frame waiting in this process's ring (port lock held):
 * before its connections are copied or moved away. */
static void
drain_own_locked(void)
{
    struct rte_mbuf *m;

    while ((m = ring_get(&sh->slot[me].rx)) != NULL) {
        stk_input_lid(rte_pktmbuf_mtod(m, const void *), m->data_len,
                      m->hash.usr);
        rt__mbuf_recycle(m);
    }
}

/* ---- moving queued connections (stack/migrate.c) ----------------------- */

/* This process stops serving listener l (epoll removal, close): the
 * connections waiting on its queue would wait for it, where Linux lets
 * any process holding the listener take them. If another process serves
 * the port, they move to the shared area; their segments are held until
 * a server imports them (rt_migrate_in), and the servers are woken so
 * that their listener reads as ready. Stack lock held. */
int
rt_migrate_out(struct stk_sock *l)
{
    struct sh_svc *v;
    uint32_t lid;
    uint16_t port;
    int proto, n = 0;
    bool other = false;

    if (!rt__shared || !stk_sock_service(l, &proto, &port, &lid) ||
        proto != IPPROTO_TCP)
        return 0;
    port_lock();
    v = svc_find(IPPROTO_TCP, port, false);
    for (int i = 0; v != NULL && i < v->n; i++)
        if (v->v[i].slot != me)
            other = true;
    if (other) {
        /* Segments already handed to us belong with what moves. */
        drain_own_locked();
        ops_apply();
    }
    for (int k = 0; other && k < SH_MIG; k++) {
        struct sh_mig *g = &sh->mig[k];
        struct sh_flow *e;

        if (g->used)
            continue;
        if (stk_listener_export(l, &g->img, g->data, SH_MIG_DATA) <= 0)
            break;
        e = flow_find(&g->img.f);
        if (e != NULL) {
            e->frozen = 1; /* held for the importer */
            e->holders = 0;
        }
        g->used = 1;
        g->port = port;
        g->t_ns = rt_now_ns();
        atomic_fetch_add(&sh->nmig, 1);
        RT_STAT_INC(share_moved_out);
        n++;
    }
    for (int i = 0; n > 0 && i < v->n; i++)
        wake_mask |= 1ull << v->v[i].slot;
    port_unlock();
    if (wake_mask != 0)
        wake_slots();
    return n;
}

bool
rt_migrants(uint16_t port)
{
    if (!rt__shared ||
        atomic_load_explicit(&sh->nmig, memory_order_relaxed) == 0)
        return false;
    for (int k = 0; k < SH_MIG; k++)
        if (sh->mig[k].used && sh->mig[k].port == port)
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

    for (int i = 0; i < nlsv; i++) {
        struct local_svc *l = &lsv[i];
        if (l->serving || l->stk == NULL ||
            !(stk_sock_events(l->stk, NULL) & EPOLLIN))
            continue;
        if (now == 0)
            now = rt_now_ns();
        /* nginx takes listeners out of its epoll set and puts them back
         * at once (EPOLLEXCLUSIVE rotation): move only after a while. */
        if (now - l->off_ns >= UNSERVED_NS)
            rt_migrate_out(l->stk);
    }
}

/* Take the oldest connection moved out for listener l's port and queue it
 * on l (1), or 0. Stack lock held. */
int
rt_migrate_in(struct stk_sock *l)
{
    struct sh_mig *g = NULL;
    struct stk_flow f;
    struct sh_flow *e;
    uint32_t lid;
    uint16_t port;
    int proto, rc;

    if (!rt__shared ||
        atomic_load_explicit(&sh->nmig, memory_order_relaxed) == 0 ||
        !stk_sock_service(l, &proto, &port, &lid) || proto != IPPROTO_TCP)
        return 0;
    port_lock();
    for (int k = 0; k < SH_MIG; k++) {
        struct sh_mig *x = &sh->mig[k];
        if (x->used && x->port == port && (g == NULL || x->t_ns < g->t_ns))
            g = x;
    }
    if (g == NULL) {
        port_unlock();
        return 0;
    }
    f = g->img.f;
    e = flow_find(&f);
    if (e != NULL)
        flow_take(e); /* the held segments stay for the replay below */
    rc = stk_listener_import(l, &g->img, g->data);
    g->used = 0;
    atomic_fetch_sub(&sh->nmig, 1);
    port_unlock();
    if (rc < 0)
        return 0;
    RT_STAT_INC(share_moved_in);
    rt_flow_replay(&f);
    return 1;
}

/* ---- slots ------------------------------------------------------------------
 */

static void
slot_cleanup(int i)
{
    struct sh_slot *s = &sh->slot[i];
    struct rte_mbuf *m;
    unsigned conns = 0;

    while ((m = ring_get(&s->rx)) != NULL)
        rte_pktmbuf_free(m);
    for (uint32_t k = 0; k < SH_FLOWS; k++) {
        struct sh_flow *e = &sh->flow[k];

        while (e->used) {
            if (e->frozen && (e->holders & (1ull << i))) {
                e->holders &= ~(1ull << i);
                if (e->holders != 0)
                    break;
            } else if (e->frozen || e->owner != i) {
                break;
            }
            conns++;
            flow_erase(e); /* may move the next entry into k: look again */
        }
    }
    for (int k = 0; k < SH_SVCS; k++) {
        struct sh_svc *v = &sh->svc[k];
        if (!v->used)
            continue;
        for (int j = 0; j < v->n;)
            if (v->v[j].slot == i)
                v->v[j] = v->v[--v->n];
            else
                j++;
        if (v->copies[i] != 0) {
            v->copies[i] = 0;
            svc_drop_if_unheld(v);
        }
    }
    atomic_store(&s->sleepers, 0);
    atomic_store(&s->active, false);
    if (i != me)
        RT_INFO("share", "process %d is gone: %u connections released",
                atomic_load(&s->pid), conns);
    atomic_store(&s->state, SLOT_FREE);
}

/* True if the region is mapped in pid (the same program image). */
static bool
maps_have_region(int pid)
{
    char path[64], buf[4096], want[32];
    size_t wl, keep = 0;
    long fd, n;
    bool found = false;

    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    wl = (size_t)snprintf(want, sizeof(want), "%" PRIxPTR "-", (uintptr_t)sh);
    fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    while (!found && (n = syscall(SYS_read, (int)fd, buf + keep,
                                  sizeof(buf) - 1 - keep)) > 0) {
        char *line = buf, *nl;
        buf[keep + (size_t)n] = '\0';
        while ((nl = strchr(line, '\n')) != NULL) {
            if (strncmp(line, want, wl) == 0) {
                found = true;
                break;
            }
            line = nl + 1;
        }
        keep = strlen(line);
        memmove(buf, line, keep);
    }
    syscall(SYS_close, (int)fd);
    return found;
}

static bool
slot_alive(int i)
{
    struct sh_slot *s = &sh->slot[i];
    int pid = atomic_load(&s->pid), rc;

    if (!s->tokenless) {
        rc = pthread_mutex_trylock(&s->token);
        if (rc == EBUSY)
            return true;
        if (rc == EOWNERDEAD)
            pthread_mutex_consistent(&s->token);
        if (rc == 0 || rc == EOWNERDEAD)
            pthread_mutex_unlock(&s->token);
        s->tokenless = true;
    }
    /* Its token holder is gone: the process died or exec'd, or only the
     * thread that took the token ended. */
    if (syscall(SYS_kill, pid, 0) != 0 && errno == ESRCH)
        return false;
    return maps_have_region(pid);
}

static void
sweep(uint64_t now)
{
    if (now - sh->last_sweep_ns < SWEEP_NS)
        return;
    sh->last_sweep_ns = now;
    for (int i = 0; i < SH_SLOTS; i++) {
        int st = atomic_load(&sh->slot[i].state);

        if (i == me || st == SLOT_FREE)
            continue;
        if (st == SLOT_RESERVED) {
            if (now - sh->slot[i].reserved_ns > RESERVE_TIMEOUT_NS)
                atomic_store(&sh->slot[i].state, SLOT_FREE);
            continue;
        }
        if (!slot_alive(i))
            slot_cleanup(i);
    }
}

/* ---- dispatch (port lock and stack lock held) ------------------------------
 */

static void
give(int slot, struct rte_mbuf *m, uint32_t lid)
{
    struct sh_slot *s = &sh->slot[slot];

    m->hash.usr = lid;
    if (atomic_load_explicit(&s->state, memory_order_relaxed) != SLOT_LIVE ||
        !ring_put(&s->rx, m)) {
        atomic_fetch_add_explicit(&s->drops, 1, memory_order_relaxed);
        RT_STAT_INC(share_drop_ring);
        rte_pktmbuf_free(m);
        return;
    }
    RT_STAT_INC(share_handed);
    wake_mask |= 1ull << slot;
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
        if (sh->held[i].m == NULL) {
            sh->held[i].f = *f;
            sh->held[i].m = m;
            RT_STAT_INC(share_held);
            wake_mask |= e->holders;
            if (e->holders & (1ull << me))
                rt_wakeup();
            return;
        }
    }
    RT_STAT_INC(share_drop_held);
    rte_pktmbuf_free(m);
}

/* A server of (proto, port) for this 4-tuple: -1 none known (no such
 * service), -2 known but nobody serves it now. A server with a thread
 * blocked waiting on the listener comes first (one connection per wait,
 * as a shared accept queue would hand them out: prefork servers whose
 * children serve one connection at a time depend on it); otherwise the
 * hash of the 4-tuple picks, as SO_REUSEPORT does. */
static int
pick_server(int proto, const struct stk_flow *f, uint32_t *lid)
{
    struct sh_svc *v = svc_find(proto, f->lport, false);
    uint32_t k, nwait = 0, h;

    if (v == NULL)
        return -1;
    if (v->n == 0)
        return -2;
    h = flow_hash(f);
    for (int i = 0; i < v->n; i++)
        if (v->v[i].waiting > 0)
            nwait++;
    if (nwait > 0 && proto == IPPROTO_TCP) {
        k = h % nwait;
        for (int i = 0; i < v->n; i++) {
            if (v->v[i].waiting == 0 || k-- != 0)
                continue;
            v->v[i].waiting--;
            v->v[i].inflight_ns = rt_now_ns();
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

/* A SYN for a service whose servers block in accept, all busy: it waits
 * (a retransmission replaces the copy already waiting) for the next
 * server that waits (rt_serve_wait), as in a shared accept queue. */
static void
pend_syn(const struct stk_flow *f, struct rte_mbuf *m)
{
    struct sh_svc *v = svc_find(IPPROTO_TCP, f->lport, false);

    for (int i = 0; i < v->npend; i++) {
        const uint8_t *o = rte_pktmbuf_mtod(v->pend[i], const uint8_t *);
        const uint8_t *oip = o + 14, *ol4 = oip + (oip[0] & 0x0fu) * 4u;
        uint32_t rip;

        memcpy(&rip, oip + 12, 4);
        if (rip == f->rip && (uint16_t)(ol4[0] << 8 | ol4[1]) == f->rport) {
            rte_pktmbuf_free(v->pend[i]);
            v->pend[i] = m;
            return;
        }
    }
    if (v->npend == SH_PENDING) {
        RT_STAT_INC(share_drop_noserver);
        rte_pktmbuf_free(m);
        return;
    }
    v->pend[v->npend++] = m;
    RT_STAT_INC(share_syn_pending);
}

static void
dispatch(struct rte_mbuf *m)
{
    const uint8_t *fr = rte_pktmbuf_mtod(m, const uint8_t *);
    uint16_t len = m->data_len, type;
    const uint8_t *ip, *l4;
    struct stk_flow f;
    uint32_t lid = 0;
    unsigned ihl;
    int to;

    if (len < 14 + 20)
        goto mine;
    type = (uint16_t)(fr[12] << 8 | fr[13]);
    if (type == 0x0806) { /* ARP: every stack keeps its own cache */
        for (int i = 0; i < SH_SLOTS; i++) {
            if (i == me || !atomic_load(&sh->slot[i].active) ||
                atomic_load(&sh->slot[i].state) != SLOT_LIVE)
                continue;
            rte_mbuf_refcnt_update(m, 1);
            give(i, m, 0);
        }
        goto mine;
    }
    if (type != 0x0800)
        goto mine;
    ip = fr + 14;
    ihl = (ip[0] & 0x0fu) * 4u;
    if ((ip[0] >> 4) != 4 || ihl < 20 || len < 14 + ihl + 8 ||
        (((ip[6] << 8) | ip[7]) & 0x3fff) != 0) /* a fragment */
        goto mine;
    l4 = ip + ihl;
    memcpy(&f.lip, ip + 16, 4);
    memcpy(&f.rip, ip + 12, 4);
    f.lport = (uint16_t)(l4[2] << 8 | l4[3]);
    f.rport = (uint16_t)(l4[0] << 8 | l4[1]);
    if (ip[9] == 6) {
        struct sh_flow *e;

        bool syn;

        if (len < 14 + ihl + 20)
            goto mine;
        syn = (l4[13] & 0x12) == 0x02; /* SYN without ACK */
        e = flow_find(&f);
        if (e != NULL && e->frozen) {
            hold(&f, e, m);
            return;
        }
        if (e != NULL && !(syn && e->tw)) {
            to = e->owner;
        } else if (syn) {
            /* A new connection (also one reusing a 4-tuple that is in
             * TIME-WAIT somewhere: it goes to a process that serves the
             * listener, whose report then takes the entry over). */
            to = pick_server(IPPROTO_TCP, &f, &lid);
            if (to == -1 && e != NULL)
                to = e->owner; /* no listener: the TIME-WAIT's owner */
            if (to == -3) {
                pend_syn(&f, m);
                return;
            }
            if (to == -2) {
                RT_STAT_INC(share_drop_noserver);
                rte_pktmbuf_free(m);
                return;
            }
        } else {
            to = -1;
        }
    } else if (ip[9] == 17) {
        to = pick_server(IPPROTO_UDP, &f, &lid);
        if (to == -2)
            to = -1;
    } else {
        to = -1;
    }
    if (to >= 0 && to != me) {
        give(to, m, lid);
        return;
    }
mine:
    local(m, lid);
}

static void
wake_slots(void)
{
    uint64_t one = 1, mask = wake_mask;

    wake_mask = 0;
    while (mask != 0) {
        int i = __builtin_ctzll(mask);
        mask &= mask - 1;
        if (i != me && atomic_load(&sh->slot[i].sleepers) > 0) {
            RT_STAT_INC(share_wakes);
            syscall(SYS_write, sh->slot[i].efd, &one, sizeof(one));
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

/* ---- the poll turn in shared mode (stack lock held) ---------------------- */

int
rt__share_drain(void)
{
    struct rte_mbuf *m;
    int n = 0;

    if (!atomic_load_explicit(&sh->slot[me].active, memory_order_relaxed))
        atomic_store(&sh->slot[me].active, true);
    while (n < (int)rt__port.burst &&
           (m = ring_get(&sh->slot[me].rx)) != NULL) {
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
    return atomic_load_explicit(&sh->last_app_poll_ns, memory_order_relaxed);
}

int
rt__share_rx(uint64_t now, uint64_t *bytes)
{
    struct rte_mbuf *pkts[RT__MAX_BURST];
    uint16_t n;

    /* Written at most every 100 us: the line is shared by every process. */
    if (!rt__is_progress && now - atomic_load_explicit(&sh->last_app_poll_ns,
                                                       memory_order_relaxed) >
                                100000)
        atomic_store_explicit(&sh->last_app_poll_ns, now, memory_order_relaxed);
    bool flush = rt__tx_due();

    if (flush || nops > 0)
        port_lock();
    else if (!port_trylock())
        return 0;
    ops_apply();
    sweep(now);
    n = rte_eth_rx_burst(rt__port.port_id, 0, pkts, (uint16_t)rt__port.burst);
    for (uint16_t i = 0; i < n; i++) {
        struct rte_mbuf *m = pkts[i];

        if (i + 1 < n)
            rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
        *bytes += m->pkt_len;
        if (frame_bad(m)) {
            RT_STAT_INC(rx_drop_stack);
            rte_pktmbuf_free(m);
        } else {
            dispatch(m);
        }
    }
    ops_apply();
    if (flush || rt__tx_due())
        rt__tx_flush_locked();
    port_unlock();
    if (wake_mask != 0)
        wake_slots();
    return n;
}

/* rt__tx_flush in shared mode: the burst needs the port lock. */
void
rt__share_tx_flush(void)
{
    if (port_held) {
        ops_apply();
        rt__tx_flush_locked();
        return;
    }
    port_lock();
    ops_apply();
    rt__tx_flush_locked();
    port_unlock();
}

/* ---- sleeping (rt_block) ------------------------------------------------- */

int
rt__share_sleep_begin(void)
{
    struct sh_slot *s = &sh->slot[me];

    atomic_fetch_add(&s->sleepers, 1);
    if (!ring_empty(&s->rx)) {
        atomic_fetch_sub(&s->sleepers, 1);
        return -1; /* frames waiting: do not sleep */
    }
    return s->efd;
}

void
rt__share_sleep_end(bool woken)
{
    struct sh_slot *s = &sh->slot[me];
    uint64_t v;

    atomic_fetch_sub(&s->sleepers, 1);
    if (woken)
        syscall(SYS_read, s->efd, &v, sizeof(v));
}

/* ---- claiming connections copied by fork -------------------------------- */

int
rt_flow_claim(const struct stk_flow *f)
{
    struct sh_flow *e;
    int r = 0;

    if (!rt__shared)
        return -ENODEV;
    port_lock();
    ops_apply();
    e = flow_find(f);
    if (e != NULL && e->frozen && (e->holders & (1ull << me))) {
        flow_take(e);
        r = 1;
        RT_STAT_INC(share_claims);
    } else if (e != NULL && !e->frozen && e->owner == me) {
        r = 1;
    }
    port_unlock();
    return r;
}

int
rt_flow_release(const struct stk_flow *f)
{
    struct sh_flow *e;
    int r = 0;

    if (!rt__shared)
        return 0;
    port_lock();
    e = flow_find(f);
    if (e != NULL && e->frozen && (e->holders & (1ull << me))) {
        if (e->holders == (1ull << me)) {
            flow_take(e);
            r = 1; /* the last copy: the caller closes it for real */
        } else {
            e->holders &= ~(1ull << me);
        }
    }
    port_unlock();
    return r;
}

void
rt_flow_replay(const struct stk_flow *f)
{
    struct rte_mbuf *got[64];
    int n, from = 0;

    if (!rt__shared)
        return;
    do { /* TCP puts them back in order */
        n = 0;
        port_lock();
        for (; from < SH_HELD && n < 64; from++) {
            struct sh_held *h = &sh->held[from];
            if (h->m != NULL && memcmp(&h->f, f, sizeof(*f)) == 0) {
                got[n++] = h->m;
                h->m = NULL;
            }
        }
        port_unlock();
        for (int i = 0; i < n; i++) {
            stk_input(rte_pktmbuf_mtod(got[i], const void *), got[i]->data_len);
            rte_pktmbuf_free(got[i]);
        }
    } while (from < SH_HELD);
}

/* ---- fork -------------------------------------------------------------------
 */

static void
publish_flow(void *ctx, const struct stk_flow *f, bool has_sock)
{
    struct sh_flow *e = flow_insert(f);

    (void)ctx;
    (void)has_sock;
    if (e != NULL)
        flow_take(e);
}

/* The first fork: make the region, with this process in slot 0. */
static int
region_create(void)
{
    size_t size = sizeof(struct sh_region);
    long fd;
    void *p;

    struct rte_eth_dev_info info;

    if (!rte_eal_has_hugepages()) {
        RT_INFO("share", "DPDK memory is not in hugepages (--no-huge): "
                         "children of this process will use the kernel");
        return -ENOTSUP;
    }
    /* memif: the control channel lives in this process's EAL interrupt
     * thread; when the peer reconnects it maps new regions here only, and
     * a child's queues point at unmapped memory (ENVIRONMENT.md). */
    if (rte_eth_dev_info_get(rt__port.port_id, &info) == 0 &&
        info.driver_name != NULL && strstr(info.driver_name, "memif")) {
        RT_WARN("share", "memif ports are not shared across fork (a peer "
                         "reconnect would break the children's queues): "
                         "children of this process use the kernel");
        return -ENOTSUP;
    }
    fd = syscall(SYS_memfd_create, "accel-share", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (syscall(SYS_ftruncate, (int)fd, (long)size) != 0) {
        int e = errno;
        syscall(SYS_close, (int)fd);
        return -e;
    }
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    syscall(SYS_close, (int)fd);
    if (p == MAP_FAILED)
        return -errno;
    sh = p;
    robust_init(&sh->port_mu);
    if (getrandom(sh->key, sizeof(sh->key), GRND_NONBLOCK) !=
        (ssize_t)sizeof(sh->key))
        sh->key[0] = (uint64_t)rt_now_ns();
    for (int i = 0; i < SH_SLOTS; i++) {
        long efd = syscall(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (efd < 0) {
            int e = errno;
            for (int j = 0; j < i; j++)
                syscall(SYS_close, sh->slot[j].efd);
            munmap(sh, size);
            sh = NULL;
            return -e;
        }
        sh->slot[i].efd = rt__fd_move_high((int)efd);
    }
    me = 0;
    robust_init(&sh->slot[0].token);
    pthread_mutex_lock(&sh->slot[0].token);
    atomic_store(&sh->slot[0].pid, (int)getpid());
    atomic_store(&sh->slot[0].state, SLOT_LIVE);
    atomic_store(&sh->slot[0].active, true);
    port_lock();
    stk_each_flow(publish_flow, NULL);
    for (int i = 0; i < nlsv; i++) {
        svc_copies(lsv[i].proto, lsv[i].port, +1);
        svc_set(&lsv[i], lsv[i].serving);
    }
    port_unlock();
    stk_set_flow_ops(&flow_ops);
    rt__shared = true;
    RT_INFO("share",
            "first fork: the port is shared from now on (%zu KB "
            "of shared state)",
            size / 1024);
    return 0;
}

static void
freeze_flow(void *ctx, const struct stk_flow *f, bool has_sock)
{
    struct sh_flow *e;

    (void)ctx;
    if (!has_sock)
        return;
    e = flow_find(f);
    if (e == NULL)
        return;
    if (!e->frozen && e->owner == me) {
        e->frozen = 1;
        e->holders = 1ull << me;
    }
    if (e->frozen && (e->holders & (1ull << me)))
        e->holders |= 1ull << child_slot;
}

/* Frozen connections this process holds copies of (out of lwIP's lists,
 * so stk_each_flow does not see them): the child holds them too. */
static void
freeze_frozen_copies(void)
{
    for (uint32_t k = 0; k < SH_FLOWS; k++) {
        struct sh_flow *e = &sh->flow[k];
        if (e->used && e->frozen && (e->holders & (1ull << me)))
            e->holders |= 1ull << child_slot;
    }
}

bool
rt__share_prepare(void)
{
    uint64_t now = rt_now_ns();

    child_slot = -1;
    if (share_failed || !rt__port.up)
        return false;
    if (sh == NULL && region_create() != 0) {
        share_failed = true;
        return false;
    }
    port_lock();
    /* Frames already handed to this process belong to the state the
     * child copies: input them now, or they would reach a stack that has
     * since frozen or dropped their connection. */
    drain_own_locked();
    ops_apply();
    rt__tx_flush_locked();
    for (int i = 0; i < SH_SLOTS; i++) {
        if (atomic_load(&sh->slot[i].state) == SLOT_FREE) {
            child_slot = i;
            break;
        }
    }
    if (child_slot < 0) {
        port_unlock();
        RT_WARN("share",
                "%d processes share the port already: the new "
                "child uses the kernel",
                SH_SLOTS);
        return false;
    }
    {
        struct sh_slot *c = &sh->slot[child_slot];
        struct rte_mbuf *m;

        while ((m = ring_get(&c->rx)) != NULL)
            rte_pktmbuf_free(m);
        robust_init(&c->token);
        c->tokenless = false;
        c->reserved_ns = now;
        atomic_store(&c->pid, 0);
        atomic_store(&c->sleepers, 0);
        atomic_store(&c->active, false);
        atomic_store(&c->drops, 0);
        atomic_store(&c->state, SLOT_RESERVED);
    }
    freeze_frozen_copies();
    stk_each_flow(freeze_flow, NULL);
    /* The child holds copies of this process's listening sockets. */
    for (int k = 0; k < SH_SVCS; k++)
        if (sh->svc[k].used)
            sh->svc[k].copies[child_slot] = sh->svc[k].copies[me];
    port_unlock();
    return true;
}

void
rt__share_child(void)
{
    struct sh_slot *s = &sh->slot[child_slot];

    me = child_slot;
    child_slot = -1;
    port_held = false;
    nops = 0;
    nlsv = 0;
    wake_mask = 0;
    pthread_mutex_lock(&s->token);
    atomic_store(&s->pid, (int)getpid());
    atomic_store(&s->state, SLOT_LIVE);
}

/* At exit (stack lock held): leave the region; true if this was the last
 * process on the port (the caller closes it). */
bool
rt__share_exit(void)
{
    bool last = true;

    if (!rt__shared)
        return true;
    port_lock();
    ops_apply();
    rt__tx_flush_locked();
    for (int i = 0; i < SH_SLOTS; i++)
        if (i != me && atomic_load(&sh->slot[i].state) == SLOT_LIVE &&
            slot_alive(i))
            last = false;
    slot_cleanup(me);
    port_unlock();
    rt__shared = false;
    stk_set_flow_ops(NULL);
    return last;
}
