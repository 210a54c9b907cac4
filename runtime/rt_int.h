/*
 * Internal to runtime/'s DPDK files (eal.c, port.c, loop.c, block.c,
 * progress.c, start.c): the process's port state and the helpers they share.
 * Names with the rt__ prefix are not for other folders.
 */
#ifndef ACCEL_RT_INT_H
#define ACCEL_RT_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "statreg.h"
#include "xdpprog.h"

struct rte_mbuf;
struct rte_mempool;
struct stk_netif_cfg;

#define RT__MAX_BURST 512
#define RT__MAX_QUEUES 16
#define RT__MAX_WAIT_FDS RT__MAX_QUEUES

/** How the port lets a thread sleep until frames arrive. */
enum rt__wait_kind {
    RT__WAIT_NONE = 0, /* nothing to sleep on: short timed sleeps */
    RT__WAIT_SOCK,     /* AF_XDP / AF_PACKET socket: POLLIN = rx ring busy */
    RT__WAIT_INTR,     /* rx interrupt eventfd (memif): arm, then sleep */
};

struct rt__port {
    uint16_t port_id;
    bool up;     /* started; rx/tx allowed */
    bool is_xdp; /* the af_xdp PMD (xsk_repair.c) */
    bool is_pkt; /* the af_packet PMD (pkt_repair.c) */
    struct rte_mempool *pool;
    uint32_t burst;
    uint32_t rx_budget; /* frames per poll turn at most (>= burst) */
    char desc[160];     /* "net_af_xdp0 on veth-a" */
    enum rt__wait_kind wait_kind;
    int wait_fds[RT__MAX_WAIT_FDS];
    int nwait;
    /* Queue pairs (ACCEL_QUEUES): wait_fds[q] is queue q's when
     * nwait == nq (af_xdp, af_packet and rx interrupts open them in
     * queue order). txq: the queue rt__tx_flush_locked sends on. */
    uint16_t nq, txq;
    struct rte_mbuf *txbuf[RT__MAX_BURST];
    uint32_t ntx;
    /* Where the port's start-up went, ms (the start-up info line): the
     * XDP program (loaded, or adopted), the vdev probe, the mbuf pool, the
     * queues (configure and setup: the XSKs and their UMEM), the start. */
    struct {
        double prog, probe, pool, queues, start;
    } ms;
};

extern struct rt__port rt__port;

struct base_sr_port;
/** The port part of the live state region's snapshot (portstats.c). */
void rt__port_sr_fill(struct base_sr_port *p);
/** Another rx burst in this poll turn: the last one (got frames) came
 *  back full and the turn (total frames) is under ACCEL_RX_BUDGET. A
 *  program busy between its waits then finds a backlog in its sockets'
 *  queues, as on Linux, instead of the port dropping what its rings
 *  cannot hold. */
static inline bool
rt__rx_again(uint32_t got, uint32_t total)
{
    return got == rt__port.burst && total < rt__port.rx_budget;
}

/** Frames waiting in the tx backlog (port.c; written under the stack
 *  lock, read without it). */
extern _Atomic uint32_t rt__tx_backlog;

/* Thread that last polled: time of the last rt_poll by an application
 * thread (not the progress thread), for the progress thread. */
extern _Atomic uint64_t rt__last_app_poll_ns;
/* Time of the last rt_poll that received frames (any thread), and the
 * gap since the one before: rt_block spins before sleeping while frames
 * keep coming close together. */
extern _Atomic uint64_t rt__last_rx_ns;
extern _Atomic uint64_t rt__rx_gap_ns;
/* Threads sleeping in rt_block (the progress thread does not poll the
 * port's fds while application threads sleep on them). */
extern _Atomic int rt__sleepers;
/* Set in the progress thread. */
extern __thread bool rt__is_progress;

/* eal_fast.c: true when the EAL start-up shortcuts are linked in. */
extern const bool rt__eal_fast;
/* eal.c */
int rt__eal_init(const struct base_cfg *cfg);
/** Unlink this process's hugepage files once the port's memory is
 *  mapped: the memory stays until the process (and its fork children)
 *  end, and a process killed with SIGKILL leaves no file holding
 *  hugepages behind. Files made later go at exit. */
void rt__eal_unlink_hugepages(void);
int rt__eal_probe(const char *devargs, uint16_t *port_id);
void rt__eal_remove(uint16_t port_id);
int rt__eal_first_port(uint16_t *port_id);

/* port.c */
/** Level of rt__port_init's failure lines: BASE_LOG_INFO while trying a
 *  driver that has a fallback, BASE_LOG_ERROR otherwise. */
extern int rt__port_fail_level;
int rt__port_init(uint16_t port_id, const struct base_cfg *cfg,
                  uint32_t *csum_flags, uint8_t mac[6]);
void rt__port_close(uint16_t port_id);
/** ", N queues" for the port's description. */
const char *rt__port_queues_desc(void);
uint8_t *rt__tx_alloc(void *ctx, uint16_t len, void **handle);
void rt__tx_send(void *ctx, void *handle, uint16_t len);
/** Send the queued frames (and the backlog); safe from inside the stack's
 *  output (a full tx queue). */
void rt__tx_flush(void);
/** The stack's deferred output, then rt__tx_flush (loop.c); never from
 *  inside the stack. */
void rt__tx_send_all(void);
/** Free a received mbuf, keeping it (hot in cache) for the next tx_alloc. */
void rt__mbuf_recycle(struct rte_mbuf *m);
/** accel-dump (loop.c): a frame dropped before the stack, captured with
 *  its drop mark (enum base_sr_cap_drop) while a capture runs. Stack
 *  lock held. */
void rt__capture_dropped(const struct rte_mbuf *m, uint8_t mark);
#define RT_CAPTURE_DROPPED(m, mark)                                            \
    do {                                                                       \
        if (atomic_load_explicit(&base_sr_capturing, memory_order_relaxed))    \
            rt__capture_dropped((m), (mark));                                  \
    } while (0)
/* The mbufs rt__mbuf_recycle keeps (stack lock held). Once the port is
 * shared by a fork, this process's stash lives in its slot of the shared
 * region: the mbufs of a process killed with a full stash go back to the
 * pool when its slot is cleaned up, instead of being lost with it. */
#define RT__STASH_MAX 64
struct rt__stash {
    uint32_t n;
    struct rte_mbuf *m[RT__STASH_MAX];
};
extern struct rt__stash *rt__stash;
/** Keep the stash in st from now on (NULL: the process's own), with the
 *  mbufs it holds. */
void rt__stash_move(struct rt__stash *st);
/** Give every mbuf in st back to the pool. */
void rt__stash_drain(struct rt__stash *st);
/** Arm the rx interrupt (RT__WAIT_INTR) before a sleep; 0 or -errno. */
int rt__port_intr_arm(void);
/** Disarm it after waking, and drain its eventfd. */
void rt__port_intr_disarm(void);

/* pool.c: the mbuf pool; packed lays it out as af_xdp's UMEM needs. */
struct rte_mempool *rt__pool_create(const char *name, uint32_t n,
                                    uint16_t data_room, int socket,
                                    bool packed);
/** True if every mbuf lies inside the UMEM the af_xdp PMD will register
 *  for this pool (logs the count outside otherwise). */
bool rt__pool_fits_umem(struct rte_mempool *mp);

/* portstats.c: the port's and the kernel's drop counters for the dump. */
void rt__port_stats_snapshot(void);
void rt__port_stats_dump(long pid);

/* fdplace.c: keep the runtime's fds above the range applications use. */
int rt__fd_base(void);
void rt__fd_reserve_low(void);
void rt__fd_release_low(void);
/* fd is one of the placeholders rt__fd_reserve_low holds. */
bool rt__fd_reserved(int fd);
/** Move fd above the base (F_DUPFD_CLOEXEC + close); returns the new fd,
 *  or fd itself when it is already high or the move failed. */
int rt__fd_move_high(int fd);

/* block.c */
void rt__port_fds_scan_begin(void);
void rt__port_fds_scan_end(void);
/** Sleep on the port's wait fds only, for at most timeout_ms, without the
 *  stack lock (progress thread). Returns ppoll's result or -errno. */
int rt__sleep_port(int timeout_ms);

/* progress.c */
int rt__progress_start(uint32_t period_usec);

/* xdpsteer.c, shared DPDK libraries only: accel's XDP program for
 * af_xdp with c's constants written in, in a memfd whose /proc/self/fd
 * path goes to path (the PMD's devarg xdp_prog). Returns the fd (close it
 * once the port is up) or -errno. */
int rt__xdp_steer_open(const struct rt__xdpprog_cfg *c, char *path,
                       size_t pathsz);
/** An fd (moved high) of the map called name of accel's program on
 *  iface, or -errno (-ENOENT: no such program or map). */
int rt__xdp_steer_map_fd(const char *iface, const char *name);

/* xdpsteer4.c: the stack sharing ACCEL_IFACE's IPv4 address with the
 * kernel. rt__steer4_on once set up (the port's owner, or a process that
 * joined it). */
struct stk_flow;
extern bool rt__steer4_on;
/** Find the program's maps: 0, or -errno (the ports then stay with the
 *  kernel, said once). */
int rt__steer4_setup(void);
/** The link ops of the stack (stack/steer.c). */
void rt__steer4_port(int proto, uint16_t port, bool on);
void rt__steer4_flow(const struct stk_flow *f, bool on);
void rt__steer4_arp(uint32_t ip);
void rt__steer4_nd(const uint8_t target[16]);
/* xdpsynck.c: SYN cookies answered by the XDP program */
struct stk_synck_arm;
/** The stack's link op syn_cookies: the program answers a's port for a
 *  second (stack lock held). */
void rt__xdp_synck_arm(const struct stk_synck_arm *a);
/** Find the program's maps now (fork children inherit them, also those
 *  that give up privileges): false when they cannot be reached (said
 *  once). */
bool rt__xdp_synck_open(void);
/** The program answered port (host order) within two minutes, for any
 *  process (a negative answer is kept 10 ms). */
bool rt__xdp_synck_seen(uint16_t port);
/** Count the program's last cookies and let go of its maps (exit). */
void rt__xdp_synck_close(void);
/** Keep fd open until the steering entry of f goes (its pcb is freed);
 *  closed at once if f has none. Stack lock held. */
void rt__steer4_hold(const struct stk_flow *f, int fd);
/** The family's last listener on port is gone (a dead process's, at its
 *  slot's cleanup; port lock held). */
void rt__steer4_svc_gone(int proto, uint16_t port);
/** Detach our program from iface if a dead process left it (the caller
 *  holds the interface lock). */
void rt__xdp_steer_clear_stale(const char *iface);
/** Static DPDK: attach the program with c's constants to ACCEL_IFACE, or
 *  adopt the one an earlier process left (xdpprog.c); rt__xdp_prog holds
 *  it. 0, or -errno (logged at info level). */
int rt__xdp_steer_attach(const struct rt__xdpprog_cfg *c);
/** The family's last process closed the port: the program stays attached
 *  (ACCEL_XDP_KEEP), or is detached. */
void rt__xdp_steer_leave(void);
/** The program this process attached or adopted (prog_fd -1: none); its
 *  xsks_map gets the port's XSKs (broker_client.c's wrappers). */
extern struct rt__xdpprog rt__xdp_prog;

/* ifacelock.c: one accel process (and its fork children) per interface:
 * 0, or -EBUSY when another process drives it (its pid in owner). */
int rt__iface_lock(const char *iface, char *owner, size_t n);

/* broker_client.c: the port of a process without CAP_NET_RAW, CAP_BPF
 * and CAP_NET_ADMIN goes through accel-broker. rt__broker_start: 0 when
 * the process has them (nothing to do) or the broker took it on
 * (rt__broker_active), else -errno with one line logged. */
extern bool rt__broker_active;
int rt__broker_start(const struct base_cfg *cfg);
/** The port did not start after all: the broker takes the interface back. */
void rt__broker_stop(void);
/** rt__broker_steer reaches the broker (this family's connection). */
extern bool rt__broker_steers;
/** One entry of the steering program's map called map, through the
 *  broker (its map fds stay there), not answered (a refusal goes to the
 *  broker's log): 0 when sent, -ENOSYS (no broker), -errno. */
int rt__broker_steer(const char *map, bool add, const void *key, uint32_t klen,
                     const void *val, uint32_t vlen);

/* isnkey.c: the host-wide key of initial sequence numbers */
void rt__isn_key_load(void);

/* datapath.c: the way frames move in this process, chosen once (at start,
 * at the fork that shares the port, at a join) instead of being tested
 * for at every step. Every operation runs with the stack lock held. */
struct rt__dp {
    const char *name;
    /** Receive and input, run the timers, send: the frames received. */
    int (*poll)(void);
    /** Send the frames the stack queued. */
    void (*flush)(void);
    /** Before a sleep: false when frames already wait (do not sleep);
     *  else *fd is an extra fd to wait on (or -1), and sleep_end follows
     *  with whether it fired. */
    bool (*sleep_begin)(int *fd);
    void (*sleep_end)(bool woken);
    /** Whether a sleeper here waits on the port's queue q. */
    bool (*watches_queue)(unsigned q);
    /** When an application thread of any process on the port last polled
     *  it (0: only this process's polls count). */
    uint64_t (*others_polled_ns)(void);
    /** At exit, before the connections close: hand the connections queued
     *  on shared listeners to the processes that still serve them. */
    void (*leave)(void);
    /** The stack's link operations (stk_link_ops): where its frames go. */
    uint8_t *(*tx_alloc)(void *ctx, uint16_t len, void **handle);
    void (*tx_send)(void *ctx, void *handle, uint16_t len);
    /** After stk_init: what the stack must report from the start. */
    void (*stack_up)(void);
    /** The port must be polled even when no application thread does (other
     *  processes' frames pass through it): a progress thread runs. */
    bool progress;
};
/** own port (one process), shared port (a fork family), joined (an
 *  exec'd process on its owner's port). */
extern const struct rt__dp rt__dp_own, rt__dp_shared, rt__dp_joined;
extern const struct rt__dp *rt__dp;
/** Choose rt__dp again from rt__shared and rt__remote, after either
 *  changed. */
void rt__dp_select(void);

/* share.c: several processes on the port (after the first fork) */
extern bool rt__shared;
/* This process joined another's port (share_join.c, remote.c). */
extern bool rt__remote;
/** Input the frames other processes dispatched to this one. */
int rt__share_drain(void);
/** rx burst and dispatch, tx flush, under the port lock (taken only if
 *  free, unless frames wait to go out). Returns frames received. */
int rt__share_rx(uint64_t now, uint64_t *bytes);
void rt__share_tx_flush(void);
/** Whether a sleeper here waits on queue q's fd: always with one queue;
 *  with several, this process's queue and those nobody owns. */
bool rt__share_watches_queue(unsigned q);
/* share_memif.c: a memif port's maps in every process */
int rt__mf_create(void);
void rt__mf_child(void);
/** Port lock held: this process's memif maps are behind (no burst now). */
bool rt__mf_stale(void);
/** Port lock not held: fetch and make the maps (rate-limited). */
void rt__mf_refresh(void);
/** A memif port of this process alone: its interrupt thread's callbacks
 *  run holding the stack lock (they unmap the rings a burst reads), until
 *  rt__mf_own_closing (the port's close at exit waits for them). */
void rt__mf_own_arm(void);
void rt__mf_own_closing(void);
/** Only the process with the control channel may close a memif port. */
bool rt__mf_may_close(void);
/** When an application thread of any process last polled the port. */
uint64_t rt__share_last_app_poll(void);
/** Before a sleep: the eventfd to add to the wait, or -1 when frames are
 *  already waiting (do not sleep). Pair with rt__share_sleep_end. */
int rt__share_sleep_begin(void);
void rt__share_sleep_end(bool woken);
bool rt__share_prepare(void);
void rt__share_child(void);
bool rt__share_exit(void);
void rt__share_leave_listeners(void);
void rt__share_export_unserved(void);
/** Stack lock held, in the port's owner: make the region if no fork made
 *  it and reserve a slot for a process joining (share_join.c). The slot,
 *  or -errno. */
int rt__share_join_reserve(void);

/* share_join.c: a process outside the fork family (an exec'd child)
 * joining the port of the process that holds the interface. */
/** In the port's owner: serve joins (a thread). 0 or -errno. */
int rt__join_serve_start(const struct stk_netif_cfg *nc);
void rt__join_atfork_child(void);

/** Join the port of the process holding ACCEL_IFACE: 0 (nc filled in,
 *  the data path up) or -errno with why in reason. */
int rt__join(struct stk_netif_cfg *nc, char *reason, size_t n);

/* remote.c */
/** Start the joined data path with the region and the fds the owner
 *  sent. 0 or -errno (reason filled in). */
int rt__rm_start(int memfd, const int *efds, int slot, char *reason, size_t n);
/** Stack lock held: input the frames in this process's cells; whether
 *  any wait; send the queued frames. */
int rt__rm_drain(void);
bool rt__rm_pending(void);
void rt__rm_flush(void);
uint8_t *rt__rm_tx_alloc(void *ctx, uint16_t len, void **handle);
/** After stk_init (stack lock held): report flows to the shared table. */
void rt__rm_stack_up(void);
void rt__rm_tx_send(void *ctx, void *handle, uint16_t len);

/* port.c: the tx burst itself (caller holds the port if shared). */
void rt__tx_flush_locked(void);
/** In a fork child: forget the parent's recycled mbufs (they are the
 *  parent's to reuse) and its unsent frames. */
void rt__port_atfork_child(void);

/* block.c */
/** In a fork child: the parent's threads' wakeup eventfds are not ours. */
void rt__block_atfork_child(void);

/* progress.c */
/** Start the progress thread in a fork child, once, if configured. */
/** This process has its progress thread (or tried to start it). */
extern atomic_bool rt__progress_running;
void rt__progress_ensure(void);
void rt__progress_atfork_child(void);

/* loop.c */
/** rt__dp's poll of each data path. */
int rt__poll_own(void);
int rt__poll_shared(void);
int rt__poll_joined(void);
/** This poll should send the queued frames (rt_tx_defer). */
bool rt__tx_due(void);
void rt__loop_reset(void);
bool rt__trylock(void);
void rt__loop_atfork_child(void);

#endif /* ACCEL_RT_INT_H */
