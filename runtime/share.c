/*
 * Several processes on one port: the fork model (docs/DESIGN.md §8).
 *
 * The process that starts the data path owns the DPDK port; fork() gives
 * its children the same port (queue state and mbufs live in hugepage
 * memory, shared across fork) and a copy of its lwIP stack. From the first
 * fork on, the processes share the port through a region of shared memory
 * made at that fork (a memfd, MAP_SHARED, so every later child inherits
 * it), laid out in share_int.h:
 *
 *  - a robust process-shared mutex, the port lock (this file): whoever
 *    holds it receives a burst and transmits its own frames. A process
 *    killed while holding it leaves it recoverable (EOWNERDEAD);
 *  - a slot per process (64, share_slot.c): its pid, a liveness token (a
 *    robust mutex the process holds: a dead or exec'd process's token
 *    reads as EOWNERDEAD), an eventfd made before the first fork (so every
 *    process has all of them) to wake it, and a ring of mbufs received for
 *    it;
 *  - a flow table (share_flow.c): TCP 4-tuple -> the process whose stack
 *    holds the connection, or "frozen" (copied by a fork, not yet claimed);
 *  - a service table (share_serve.c): (protocol, local port) -> the
 *    processes that serve it, and connections moving between processes;
 *  - the dispatch of each received frame by the port lock's holder
 *    (share_rx.c).
 *
 * This file makes the region at the first fork, reserves the child's slot
 * in the fork's prepare step, enters it in the child, and leaves it at
 * exit (the last process closes the port).
 *
 * A process outside the family (an exec'd child) may join the port too
 * (share_join.c): it gets a slot marked remote, its frames copied into
 * cells (no access to the mbufs), and sends through a packet socket of its
 * own.
 *
 * Not shared: a process whose memory is not in hugepages (--no-huge makes
 * DPDK's memory private to the process): its children use the kernel.
 * memif ports are shared as the others are, with their mappings kept in
 * step by share_memif.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "clock.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "share_int.h"
#include "stats.h"
#include "stk.h"
#include "pkt_repair.h"
#include "xsk_repair.h"

struct sh_region *rt__sh;
int rt__sh_fd = -1;         /* the region's memfd, for joins */
int rt__sh_me = -1;         /* this process's slot */
static int child_slot = -1; /* reserved by the fork in progress */
bool rt__shared;
__thread bool rt__sh_port_held;
static bool share_failed; /* no hugepages or no region: children on kernel */

/* ---- the port lock ---------------------------------------------------- */

void
rt__sh_robust_init(pthread_mutex_t *mu)
{
    pthread_mutexattr_t a;

    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(mu, &a);
    pthread_mutexattr_destroy(&a);
}

/* The PMD's queue q after its lock's holder died, maybe mid-burst (each
 * call does nothing on another PMD). */
static void
rings_repair(uint16_t q)
{
    rt__xsk_repair(q);
    rt__pkt_repair(q);
}

static void
port_recovered(void)
{
    pthread_mutex_consistent(&rt__sh->port_mu);
    BASE_STAT_INC(share_lock_recovered);
    BASE_WARN("share", "a process died holding the port lock; recovered, "
                       "nothing to do");
    /* With one queue its bursts run under the port lock: the dead
     * process may have been in the middle of one. */
    if (rt__port.nq < 2)
        rings_repair(0);
}

void
rt__sh_port_lock(void)
{
    if (pthread_mutex_lock(&rt__sh->port_mu) == EOWNERDEAD)
        port_recovered();
    rt__sh_port_held = true;
}

bool
rt__sh_port_trylock(void)
{
    int rc = pthread_mutex_trylock(&rt__sh->port_mu);

    if (rc == EOWNERDEAD)
        port_recovered();
    else if (rc != 0)
        return false;
    rt__sh_port_held = true;
    return true;
}

void
rt__sh_port_unlock(void)
{
    rt__sh_port_held = false;
    pthread_mutex_unlock(&rt__sh->port_mu);
}

/* ---- mbufs a joined process lets go of ------------------------------- */

void
rt__sh_mbuf_free(struct rte_mbuf *m)
{
    if (!rt__remote) {
        rte_pktmbuf_free(m);
    } else if (rt__sh->ndfree < SH_DFREE) {
        rt__sh->dfree[rt__sh->ndfree++] = m;
    } else {
        /* Not reachable from here; lost to the pool (counted). */
        BASE_STAT_INC(share_drop_dfree);
    }
}

void
rt__sh_dfree_drain(void)
{
    while (rt__sh->ndfree > 0)
        rte_pktmbuf_free(rt__sh->dfree[--rt__sh->ndfree]);
}

/* ---- queues (ACCEL_QUEUES > 1) --------------------------------------- */

int rt__sh_myq = -1;

static void
q_recovered(unsigned q)
{
    pthread_mutex_consistent(&rt__sh->q_mu[q]);
    BASE_STAT_INC(share_lock_recovered);
    BASE_WARN("share",
              "a process died holding queue %u's lock; recovered, nothing "
              "to do",
              q);
    rings_repair((uint16_t)q);
}

static void
q_lock(unsigned q)
{
    if (pthread_mutex_lock(&rt__sh->q_mu[q]) == EOWNERDEAD)
        q_recovered(q);
}

bool
rt__sh_q_trylock(unsigned q)
{
    int rc = pthread_mutex_trylock(&rt__sh->q_mu[q]);

    if (rc == EOWNERDEAD) {
        q_recovered(q);
        return true;
    }
    return rc == 0;
}

void
rt__sh_q_unlock(unsigned q)
{
    pthread_mutex_unlock(&rt__sh->q_mu[q]);
}

void
rt__sh_q_claim(void)
{
    if (rt__port.nq < 2 || rt__sh_myq >= 0)
        return;
    for (unsigned q = 0; q < rt__port.nq; q++) {
        if (atomic_load(&rt__sh->qown[q]) != 0)
            continue;
        atomic_store(&rt__sh->qown[q], (uint8_t)(rt__sh_me + 1));
        rt__sh_myq = (int)q;
        BASE_STAT_INC(share_queue_claimed);
        BASE_INFO("share", "queue %u of %u is this process's (slot %d)", q,
                  (unsigned)rt__port.nq, rt__sh_me);
        return;
    }
}

void
rt__sh_q_release(int i)
{
    for (unsigned q = 0; q < rt__port.nq; q++)
        if (atomic_load(&rt__sh->qown[q]) == i + 1)
            atomic_store(&rt__sh->qown[q], 0);
    if (i == rt__sh_me)
        rt__sh_myq = -1;
}

/* A process without a queue of its own sends on one picked by its slot. */
static unsigned
tx_queue(void)
{
    return rt__sh_myq >= 0 ? (unsigned)rt__sh_myq
                           : (unsigned)rt__sh_me % rt__port.nq;
}

void
rt__sh_tx_flush_held(void)
{
    unsigned q;

    if (rt__remote) {
        rt__rm_flush();
        return;
    }
    if (rt__port.nq < 2) {
        rt__tx_flush_locked();
        return;
    }
    q = tx_queue();
    q_lock(q);
    rt__port.txq = (uint16_t)q;
    rt__tx_flush_locked();
    rt__sh_q_unlock(q);
}

/* ---- fork ------------------------------------------------------------- */

static void
publish_flow(void *ctx, const struct stk_flow *f, bool has_sock)
{
    struct sh_flow *e = rt__sh_flow_insert(f);

    (void)ctx;
    (void)has_sock;
    if (e != NULL)
        rt__sh_flow_take(e);
}

/* The first fork: make the region, with this process in slot 0. */
static int
region_create(void)
{
    size_t size = sizeof(struct sh_region);
    long fd;
    void *p;

    int rc;

    if (!rte_eal_has_hugepages()) {
        BASE_INFO("share", "DPDK memory is not in hugepages (--no-huge): "
                           "children of this process will use the kernel");
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
    if (p == MAP_FAILED) {
        int e = errno;
        syscall(SYS_close, (int)fd);
        return -e;
    }
    /* Kept (close-on-exec) to hand to a joining process (share_join.c). */
    rt__sh_fd = rt__fd_move_high((int)fd);
    rt__sh = p;
    rt__sh_robust_init(&rt__sh->port_mu);
    for (int q = 0; q < RT__MAX_QUEUES; q++)
        rt__sh_robust_init(&rt__sh->q_mu[q]);
    if (getrandom(rt__sh->key, sizeof(rt__sh->key), GRND_NONBLOCK) !=
        (ssize_t)sizeof(rt__sh->key))
        rt__sh->key[0] = (uint64_t)base_now_ns();
    rc = rt__mf_create();
    if (rc != 0) {
        BASE_WARN("share",
                  "memif maps cannot be shared (%s): children of this "
                  "process use the kernel; for them to share the port, "
                  "allow 1 GiB more address space (ulimit -v)",
                  strerror(-rc));
        munmap(p, size);
        syscall(SYS_close, rt__sh_fd);
        rt__sh_fd = -1;
        rt__sh = NULL;
        return rc;
    }
    for (int i = 0; i < SH_SLOTS; i++) {
        long efd = syscall(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (efd < 0) {
            int e = errno;
            for (int j = 0; j < i; j++)
                syscall(SYS_close, rt__sh->slot[j].efd);
            munmap(rt__sh, size);
            syscall(SYS_close, rt__sh_fd);
            rt__sh_fd = -1;
            rt__sh = NULL;
            return -e;
        }
        rt__sh->slot[i].efd = rt__fd_move_high((int)efd);
    }
    rt__sh_me = 0;
    rt__sh_robust_init(&rt__sh->slot[0].token);
    pthread_mutex_lock(&rt__sh->slot[0].token);
    atomic_store(&rt__sh->slot[0].pid, (int)getpid());
    rt__sh->slot[0].map_addr = (uintptr_t)rt__sh;
    atomic_store(&rt__sh->slot[0].state, SLOT_LIVE);
    atomic_store(&rt__sh->slot[0].active, true);
    rt__stash_move(&rt__sh->slot[0].stash);
    rt__sh_port_lock();
    stk_each_flow(publish_flow, NULL);
    for (int i = 0; i < rt__sh_nlsv; i++) {
        rt__sh_svc_copies(rt__sh_lsv[i].proto, rt__sh_lsv[i].port, +1);
        rt__sh_svc_set(&rt__sh_lsv[i], rt__sh_lsv[i].serving);
    }
    rt__sh_port_unlock();
    stk_set_flow_ops(&rt__sh_flow_ops);
    rt__shared = true;
    rt__dp_select();
    BASE_INFO("share",
              "the port is shared from now on (%zu KB of shared state, "
              "mostly unused until touched)",
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
    e = rt__sh_flow_find(f);
    if (e == NULL)
        return;
    if (!e->frozen && e->owner == rt__sh_me) {
        e->frozen = 1;
        e->holders = 1ull << rt__sh_me;
    }
    if (e->frozen && (e->holders & (1ull << rt__sh_me)))
        e->holders |= 1ull << child_slot;
}

/* Frozen connections this process holds copies of (out of lwIP's lists,
 * so stk_each_flow does not see them): the child holds them too. */
static void
freeze_frozen_copies(void)
{
    if (rt__sh->nflows == 0)
        return; /* the usual fork: before any connection */
    for (uint32_t k = 0; k < SH_FLOWS; k++) {
        struct sh_flow *e = &rt__sh->flow[k];
        if (e->used && e->frozen && (e->holders & (1ull << rt__sh_me)))
            e->holders |= 1ull << child_slot;
    }
}

/* Port lock held: a free slot, or -1. */
static int
free_slot(void)
{
    for (int i = 0; i < SH_SLOTS; i++)
        if (atomic_load(&rt__sh->slot[i].state) == SLOT_FREE)
            return i;
    return -1;
}

/* Port lock held: slot i, free, reserved for a fork child or a joining
 * process (remote) that has not started yet. */
static void
slot_reserve(int i, bool remote)
{
    struct sh_slot *c = &rt__sh->slot[i];
    struct rte_mbuf *m;

    while ((m = rt__sh_ring_get(&c->rx)) != NULL)
        rt__sh_mbuf_free(m);
    rt__sh_robust_init(&c->token);
    c->tokenless = false;
    c->reserved_ns = base_now_ns();
    c->stash.n = 0;
    c->remote = remote;
    c->map_addr = (uintptr_t)rt__sh;
    atomic_store(&c->pid, 0);
    atomic_store(&c->sleepers, 0);
    atomic_store(&c->active, false);
    atomic_store(&c->drops, 0);
    atomic_store(&rt__sh->xr[i].head, 0);
    atomic_store(&rt__sh->xr[i].tail, 0);
    if (remote)
        rt__sh->remote_mask |= 1ull << i;
    else
        rt__sh->remote_mask &= ~(1ull << i);
    atomic_store(&c->state, SLOT_RESERVED);
}

int
rt__share_join_reserve(void)
{
    int slot;

    if (share_failed || !rt__port.up || rt__remote)
        return -ENODEV;
    if (rt__sh == NULL && region_create() != 0) {
        share_failed = true;
        return -ENOTSUP;
    }
    rt__sh_port_lock();
    slot = free_slot();
    if (slot >= 0)
        slot_reserve(slot, true);
    rt__sh_port_unlock();
    return slot >= 0 ? slot : -EUSERS;
}

bool
rt__share_prepare(void)
{
    child_slot = -1;
    if (share_failed || !rt__port.up)
        return false;
    if (rt__sh == NULL && region_create() != 0) {
        share_failed = true;
        return false;
    }
    rt__sh_port_lock();
    /* Frames already handed to this process belong to the state the
     * child copies: input them now, or they would reach a stack that has
     * since frozen or dropped their connection. */
    rt__sh_drain_own();
    rt__sh_ops_apply();
    rt__sh_tx_flush_held();
    child_slot = free_slot();
    if (child_slot < 0) {
        rt__sh_port_unlock();
        BASE_WARN("share",
                  "%d processes share the port already (the most there can "
                  "be): the new child uses the kernel; nothing to do "
                  "unless it must be accelerated: then fork fewer",
                  SH_SLOTS);
        return false;
    }
    /* A joined process's child is joined too: its frames are copied into
     * cells, and it sends through the packet socket it inherits. */
    slot_reserve(child_slot, rt__remote);
    freeze_frozen_copies();
    stk_each_flow(freeze_flow, NULL);
    stk_fork_tag_udp(); /* datagrams queued now: one reader of the fork */
    /* The child holds copies of this process's listening sockets. */
    for (int k = 0; k < SH_SVCS; k++)
        if (rt__sh->svc[k].used)
            rt__sh->svc[k].copies[child_slot] =
                rt__sh->svc[k].copies[rt__sh_me];
    rt__sh_port_unlock();
    return true;
}

void
rt__share_child(void)
{
    struct sh_slot *s = &rt__sh->slot[child_slot];

    rt__sh_me = child_slot;
    rt__sh_myq = -1;
    child_slot = -1;
    rt__sh_port_held = false;
    rt__sh_nops = 0;
    rt__sh_nlsv = 0;
    rt__sh_wake_mask = 0;
    rt__mf_child();
    rt__stash_move(&s->stash);
    pthread_mutex_lock(&s->token);
    atomic_store(&s->pid, (int)getpid());
    atomic_store(&s->state, SLOT_LIVE);
}

/* Port lock held: no other process of the family lives on the port
 * (joined processes do not keep it open). */
static bool
others_gone(void)
{
    for (int i = 0; i < SH_SLOTS; i++)
        if (i != rt__sh_me && !rt__sh->slot[i].remote &&
            atomic_load(&rt__sh->slot[i].state) == SLOT_LIVE &&
            rt__sh_slot_alive(i))
            return false;
    return true;
}

/* Port lock held: a fork child of the family has its slot reserved but
 * has not entered it yet (it does in its atfork handler, its first step
 * after fork). Reservations for joining processes do not count: those
 * never keep the port open. */
static bool
child_starting(void)
{
    uint64_t now = base_now_ns();

    for (int i = 0; i < SH_SLOTS; i++) {
        struct sh_slot *s = &rt__sh->slot[i];

        if (i != rt__sh_me && !s->remote &&
            atomic_load(&s->state) == SLOT_RESERVED &&
            (int64_t)(now - s->reserved_ns) < (int64_t)RESERVE_TIMEOUT_NS)
            return true;
    }
    return false;
}

/* At exit (stack lock held): leave the region; true if this was the last
 * process on the port (the caller closes it). A parent that exits right
 * after fork (a daemon: nginx, sshd-style servers) may get here before its
 * child has run at all: it waits for the child to enter its slot, bounded
 * by the reservation's timeout (a fork that failed leaves one), instead of
 * closing the port under it. */
bool
rt__share_exit(void)
{
    struct timespec ms = {0, 1000000};
    bool last;

    if (!rt__shared)
        return true;
    rt__sh_port_lock();
    while (child_starting()) {
        rt__sh_port_unlock();
        nanosleep(&ms, NULL);
        rt__sh_port_lock();
    }
    rt__sh_ops_apply();
    rt__sh_tx_flush_held();
    last = !rt__remote && others_gone();
    rt__sh_slot_cleanup(rt__sh_me); /* drains the stash too */
    rt__stash_move(NULL);
    rt__sh_port_unlock();
    rt__shared = false;
    rt__dp_select();
    stk_set_flow_ops(NULL);
    return last; /* a joined process never closes the owner's port */
}
