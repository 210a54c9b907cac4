/*
 * The fork model's shared state (share.c and its companions), internal to
 * runtime/: the region's layout, this process's view of it and the
 * helpers the files use across each other.
 *
 *   share.c           the region, the port lock, fork and exit
 *   share_flow.c      the flow table: reports, reservations, claims
 *   share_serve.c     services (who serves which port) and moving queued
 *                     connections between processes
 *   share_sock.c      the interface preload calls (rt.h's rt_sock_*): the
 *                     only way in from preload
 *   share_slot.c      process slots: liveness and cleanup of the gone
 *   share_rx.c        the poll turn: receive, dispatch, wake, sleep
 *   share_memif.c     a memif port's shared-memory maps in every process
 *   share_join.c      a process outside the fork family joining the port
 *                     (an exec'd child): the owner's service and the client
 *   remote.c          a joined process's data path (rt__rm_)
 *
 * Locking: the region's tables change only under the port lock
 * (rt__sh_port_lock); each process's ring is single-producer (the port
 * lock holder) single-consumer (the process, under its stack lock). With
 * one queue the port lock also covers its rx and tx bursts; with several,
 * each queue has its own lock (q_mu), taken after the port lock when both
 * are held, never before it.
 */
#ifndef ACCEL_RT_SHARE_INT_H
#define ACCEL_RT_SHARE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "stk.h"

#include "rt_int.h"
#include "siphash.h"
#include "stats.h"
#include "stk.h"

#define SH_SLOTS 64
#define SH_RING 4096u /* mbufs queued for one process */
/* Connections across a port's processes: 1.5 M (48 MB of the region, pages
 * touched as flows hash into them). */
#define SH_FLOWS (1u << 21)
#define SH_FLOW_MAX (SH_FLOWS / 4 * 3)
#define SH_UDP_TAGS 4096u /* UDP queues tagged at forks (share_udp.c) */
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
/* A joined process (share_join.c) cannot reach the port's mbufs (they are
 * in the owner's DPDK memory): the frames dispatched to it are copied into
 * a ring of cells in the region, and mbufs it would free are left on a
 * list the family frees. */
#define SH_XCELLS 512u
#define SH_CELL_DATA 2042
#define SH_DFREE 1024

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
    struct rt__stash stash; /* the process's recycled mbufs (rt_int.h) */
    bool remote;            /* joined (share_join.c), not a fork child */
    uintptr_t map_addr;     /* where the process maps the region */
    struct sh_ring rx;
};

struct sh_cell {
    uint32_t lid;
    uint16_t len;
    uint8_t data[SH_CELL_DATA];
};

/* Frames for a joined process, copied out of their mbufs by the family's
 * port lock holder (producer); the joined process consumes. */
struct sh_xring {
    _Atomic uint32_t head, tail;
    struct sh_cell c[SH_XCELLS];
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
 * (stack/migrate.c): see rt__sh_migrate_out. */
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
    /* Several queues (ACCEL_QUEUES > 1): queue q's rx and tx bursts take
     * q_mu[q] instead of the port lock; qown[q] is its owner's slot + 1
     * (0: nobody's, any process polls it). */
    pthread_mutex_t q_mu[RT__MAX_QUEUES];
    _Atomic uint8_t qown[RT__MAX_QUEUES];
    /* af_packet queues whose rx position is unsure (pkt_repair.c) */
    _Atomic uint32_t pkt_unsure;
    _Atomic uint32_t nmig;
    struct sh_mig mig[SH_MIG];
    _Atomic uint64_t last_app_poll_ns; /* any process's application thread */
    uint64_t key[2];
    /* memif (share_memif.c): the generation of the first process's maps,
     * and where it answers for them */
    _Atomic uint64_t mf_gen;
    int mf_pid;
    char mf_name[48];
    uint64_t last_sweep_ns;
    uint32_t nflows;
    _Atomic uint32_t udp_tag_next;
    _Atomic uint32_t udp_tag[SH_UDP_TAGS];
    struct sh_slot slot[SH_SLOTS];
    struct sh_svc svc[SH_SVCS];
    struct sh_held held[SH_HELD];
    struct sh_flow flow[SH_FLOWS];
    /* Joined processes (share_join.c): their slots, and mbufs they let go
     * of, for a family process to free (port lock held). */
    uint64_t remote_mask;
    uint32_t ndfree;
    struct rte_mbuf *dfree[SH_DFREE];
    struct sh_xring xr[SH_SLOTS]; /* last: only joined slots' pages are used */
};

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

extern struct sh_region *rt__sh; /* NULL until the first fork */
extern int rt__sh_me;            /* this process's slot */
extern __thread bool rt__sh_port_held;
extern int rt__sh_myq;       /* the queue this process owns, -1: none */
extern uint32_t rt__sh_nops; /* flow reports waiting for the port lock */
extern struct local_svc rt__sh_lsv[LOCAL_SVCS];
extern int rt__sh_nlsv;
extern uint64_t rt__sh_wake_mask; /* slots given frames in this dispatch */
extern const struct stk_flow_ops rt__sh_flow_ops; /* share_udp.c */
void rt__sh_flow_note(const struct stk_flow *f, bool add, bool tw);
bool rt__sh_flow_reserve(const struct stk_flow *f, bool take);
extern int rt__sh_fd;            /* the region's memfd (family only) */
extern int rt__rm_efd[SH_SLOTS]; /* a joined process's copies of the efds */

/* Slot i's eventfd in this process. */
static inline int
rt__sh_efd(int i)
{
    return rt__remote ? rt__rm_efd[i] : rt__sh->slot[i].efd;
}

/* share.c */
void rt__sh_robust_init(pthread_mutex_t *mu);
void rt__sh_port_lock(void);
bool rt__sh_port_trylock(void);
void rt__sh_port_unlock(void);
bool rt__sh_q_trylock(unsigned q);
void rt__sh_q_unlock(unsigned q);
/* Port lock held: take a queue nobody owns as this process's (several
 * queues, none owned yet); release slot i's. */
void rt__sh_q_claim(void);
void rt__sh_q_release(int i);
/* Send the queued frames on this process's tx queue (port lock held). */
void rt__sh_tx_flush_held(void);

/* Port lock held: free an mbuf of the port's pool, or in a joined
 * process, which cannot, leave it for the family (rt__sh_dfree_drain). */
void rt__sh_mbuf_free(struct rte_mbuf *m);
void rt__sh_dfree_drain(void);

/* share_flow.c (port lock held) */
/** f as the flow table keys it: an IPv6 flow's addresses become one
 *  64-bit keyed hash in lip/rip (v6 cleared); an IPv4 flow as it is. The
 *  table's functions take either form. */
void rt__sh_flow_canon(const struct stk_flow *f, struct stk_flow *out);
uint32_t rt__sh_flow_hash(const struct stk_flow *f);
struct sh_flow *rt__sh_flow_find(const struct stk_flow *f);
struct sh_flow *rt__sh_flow_insert(const struct stk_flow *f);
void rt__sh_flow_take(struct sh_flow *e);
void rt__sh_flow_erase(struct sh_flow *e);
void rt__sh_ops_apply(void);

/* Claim a connection copied by fork: 1 (this process has it now; thaw
 * it, then rt__sh_flow_replay), 0 (another process has it), -ENODEV (the
 * port is not shared). Give up this process's copy: 1 if it was the last
 * one (now claimed: close it normally), else 0 (drop the copy). Input the
 * segments held for f while it was frozen. Stack lock held. */
int rt__sh_flow_claim(const struct stk_flow *f);
int rt__sh_flow_release(const struct stk_flow *f);
void rt__sh_flow_replay(const struct stk_flow *f);

/* share_serve.c: what rt_sock_serve, rt_sock_accept_wait and
 * rt_sock_accepted (share_sock.c) do for a service (protocol, port,
 * listener id). Move the connections queued on l to the shared area for a
 * process that serves the port (out), take the oldest one for l's port
 * (in: 1 if one came), whether some wait for port. Stack lock held. */
void rt__sh_serve(struct stk_sock *stk, int proto, uint16_t port, uint32_t lid,
                  int how);
void rt__sh_serve_wait(int proto, uint16_t port, uint32_t lid, bool on,
                       bool accept);
void rt__sh_serve_accepted(int proto, uint16_t port, uint32_t lid);
int rt__sh_migrate_out(struct stk_sock *l);
int rt__sh_migrate_in(struct stk_sock *l);
bool rt__sh_migrants(uint16_t port);

/* share_serve.c (port lock held) */
struct sh_svc *rt__sh_svc_find(int proto, uint16_t port, bool create);
void rt__sh_svc_drop_if_unheld(struct sh_svc *v);
void rt__sh_svc_drop_copies(int slot);
void rt__sh_svc_copies(int proto, uint16_t port, int delta);
void rt__sh_svc_set(const struct local_svc *l, bool on);
void rt__sh_drain_own(void);

/* share_slot.c (port lock held) */
void rt__sh_slot_cleanup(int i);
bool rt__sh_slot_alive(int i);
void rt__sh_sweep(uint64_t now);

/* share_rx.c */
void rt__sh_wake_slots(void);
/* Port lock held, family process: copy the frames in joined processes'
 * rings into their cells. */
void rt__sh_pump_remote(void);
/* Wake a sleeping family process (a joined one put an mbuf in its ring
 * that a family process must copy). */
void rt__sh_kick_family(void);

/* ---- rings: one producer (the port lock holder), one consumer --------- */

static inline bool
rt__sh_ring_put(struct sh_ring *r, struct rte_mbuf *m)
{
    uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);

    if (t - h >= SH_RING)
        return false;
    r->e[t & (SH_RING - 1)] = m;
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return true;
}

static inline struct rte_mbuf *
rt__sh_ring_get(struct sh_ring *r)
{
    uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    struct rte_mbuf *m;

    if (h == atomic_load_explicit(&r->tail, memory_order_acquire))
        return NULL;
    m = r->e[h & (SH_RING - 1)];
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return m;
}

static inline bool
rt__sh_ring_empty(struct sh_ring *r)
{
    return atomic_load(&r->head) == atomic_load(&r->tail);
}

#endif /* ACCEL_RT_SHARE_INT_H */
