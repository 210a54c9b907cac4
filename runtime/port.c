/*
 * The DPDK port, in the shape of DPDK's skeleton example: one mbuf pool
 * (pool.c; packed for af_xdp), one rx and one tx queue, offloads enabled
 * only when rte_eth_dev_info says the device has them (rx IPv4/TCP/UDP
 * checksum checks, reported to the stack as
 * STK_CSUM_* flags; no tx offloads, as the stack fills in every checksum),
 * then start and a bounded wait for the link. Devices with rx interrupts
 * (memif) get intr_conf.rxq so an idle process can sleep on the queue's
 * eventfd. It also provides the stack's frame output (stk_link_ops):
 * tx_alloc hands out the data area of an mbuf (preferably one just
 * received, see rt__mbuf_recycle), tx_send queues it, and
 * rt__tx_flush() sends the queue with rte_eth_tx_burst, retrying a full
 * ring a few times; what the ring still has no room for waits in the tx
 * backlog (ACCEL_TX_BACKLOG frames, in order) and goes first at the next
 * flush, as a kernel qdisc holds frames for a full NIC ring. Only beyond
 * the backlog, or with the mbuf pool low, are frames freed and counted.
 * Every rte_eth_* call is checked; errors come back as -errno with one
 * log line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "clock.h"
#include "impair.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "stats.h"
#include "stk.h"

#define TX_RETRIES 4
#define TX_BACKLOG_MAX 16384u /* ACCEL_TX_BACKLOG's upper bound */
/* A backlog the ring has taken nothing from for this long (a link that
 * went down, a memif peer gone) is dropped: TCP sends again, and waiting
 * threads stop retrying every millisecond. */
#define TX_BACKLOG_STUCK_NS 1000000000ull
#define LINK_WAIT_MS 2000

static void bl_drop_all(void);

struct rt__port rt__port;
int rt__port_fail_level = BASE_LOG_ERROR;

static int intr_fd = -1; /* rx interrupt eventfd, RT__WAIT_INTR only */

static int
create_pool(const struct base_cfg *cfg, bool packed)
{
    uint32_t room = RTE_MBUF_DEFAULT_DATAROOM;
    char name[RTE_MEMPOOL_NAMESIZE];

    if (rt__port.pool != NULL)
        return 0;
    if (cfg->mtu + 18 > room)
        room = cfg->mtu + 18;
    snprintf(name, sizeof(name), "accel_mbufs_%d", (int)getpid());
    rt__port.pool = rt__pool_create(name, cfg->mbufs,
                                    (uint16_t)(room + RTE_PKTMBUF_HEADROOM),
                                    (int)rte_socket_id(), packed);
    if (rt__port.pool == NULL) {
        int e = rte_errno;
        BASE_LOG(rt__port_fail_level, "port",
                 "cannot create the mbuf pool (%u buffers): %s; lower "
                 "ACCEL_MBUFS or raise ACCEL_MEM_MB (now %u)",
                 cfg->mbufs, rte_strerror(e), cfg->mem_mb);
        return -(e != 0 ? e : ENOMEM);
    }
    return 0;
}

static void
wait_link(uint16_t port_id)
{
    struct rte_eth_link link;
    struct timespec ts = {0, 10 * 1000 * 1000};

    for (int waited = 0; waited <= LINK_WAIT_MS; waited += 10) {
        memset(&link, 0, sizeof(link));
        if (rte_eth_link_get_nowait(port_id, &link) == 0 &&
            link.link_status == RTE_ETH_LINK_UP) {
            BASE_INFO("port", "%s: link up after %d ms", rt__port.desc, waited);
            return;
        }
        nanosleep(&ts, NULL);
    }
    BASE_INFO("port",
              "%s: link not up after %d ms; going on (a memif server waits "
              "for its client)",
              rt__port.desc, LINK_WAIT_MS);
}

/* Queue pairs: ACCEL_QUEUES, within what the device has; memif keeps one
 * (its maps are shared across fork for queue 0's regions only). */
static uint16_t
queue_count(const struct base_cfg *cfg, const struct rte_eth_dev_info *info,
            const char *name)
{
    uint32_t nq = cfg->queues, max = info->max_rx_queues;

    if (info->max_tx_queues < max)
        max = info->max_tx_queues;
    if (nq > 1 && strstr(info->driver_name, "memif") != NULL) {
        BASE_INFO("port", "%s: memif ports use one queue (ACCEL_QUEUES=%u)",
                  name, nq);
        return 1;
    }
    if (nq > max) {
        BASE_WARN("port",
                  "%s: ACCEL_QUEUES=%u but the device has %u queue pairs; "
                  "using %u; set ACCEL_QUEUES=%u, or give the device more "
                  "(ethtool -L)",
                  name, nq, max, max, max);
        nq = max;
    }
    return (uint16_t)(nq < 1 ? 1 : nq);
}

const char *
rt__port_queues_desc(void)
{
    static char b[24];

    snprintf(b, sizeof(b), ", %u queues", (unsigned)rt__port.nq);
    return b;
}

static int
configure(uint16_t port_id, const struct base_cfg *cfg,
          const struct rte_eth_dev_info *info, bool rx_intr,
          uint32_t *csum_flags)
{
    struct rte_eth_conf conf;
    uint64_t want;

    memset(&conf, 0, sizeof(conf));
    /* Several queues on a NIC: RSS over the addresses and ports, so a
     * connection's segments stay on one queue. Software fanout (af_packet)
     * has no RSS to configure. */
    want = (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
           info->flow_type_rss_offloads;
    if (rt__port.nq > 1 && want != 0) {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_hf = want;
    }
    *csum_flags = 0;
    want = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
    if ((info->rx_offload_capa & want) == want) {
        conf.rxmode.offloads |= want;
        *csum_flags |= STK_CSUM_RX_IP;
    }
    want = RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
    if ((info->rx_offload_capa & want) == want) {
        conf.rxmode.offloads |= want;
        *csum_flags |= STK_CSUM_RX_L4;
    }
    /* memif is shared memory between two processes of this host: no wire
     * can corrupt a frame, so the receive checksums are not checked
     * (Linux's loopback does the same). Transmitted frames keep theirs
     * for whatever the peer is. Unless ACCEL_TEST_IMPAIR is set: its
     * corrupt= (the peer's or its own dir=rx) must be caught as a wire's
     * would be. */
    if (info->driver_name != NULL && strstr(info->driver_name, "memif") &&
        cfg->test_impair[0] == '\0')
        *csum_flags |= STK_CSUM_RX_IP | STK_CSUM_RX_L4;
    if (info->max_mtu >= cfg->mtu && info->min_mtu <= cfg->mtu)
        conf.rxmode.mtu = cfg->mtu;
    conf.intr_conf.rxq = rx_intr ? 1 : 0;
    return rte_eth_dev_configure(port_id, rt__port.nq, rt__port.nq, &conf);
}

int
rt__port_init(uint16_t port_id, const struct base_cfg *cfg,
              uint32_t *csum_flags, uint8_t mac[6])
{
    struct rte_eth_dev_info info;
    struct rte_ether_addr addr;
    uint16_t nrx = (uint16_t)cfg->rx_desc, ntx = (uint16_t)cfg->tx_desc;
    char name[RTE_ETH_NAME_MAX_LEN] = "?";
    bool rx_intr, is_xdp;
    int rc, sock = rte_eth_dev_socket_id(port_id);
    uint64_t t;

    /* A port tried before (af_xdp, before the af_packet fallback) may
     * have left its wait fds. */
    rt__port.nwait = 0;
    rt__port.wait_kind = RT__WAIT_NONE;
    if (sock < 0)
        sock = (int)rte_socket_id();
    rte_eth_dev_get_name_by_port(port_id, name);
    snprintf(rt__port.desc, sizeof(rt__port.desc), "%s", name);
    rt__port.burst = cfg->burst > RT__MAX_BURST ? RT__MAX_BURST : cfg->burst;
    rt__port.rx_budget =
        cfg->rx_budget < rt__port.burst ? rt__port.burst : cfg->rx_budget;
    rt__port.port_id = port_id;

    rc = rte_eth_dev_info_get(port_id, &info);
    if (rc != 0) {
        BASE_LOG(rt__port_fail_level, "port", "%s: cannot query the device: %s",
                 name, strerror(-rc));
        return rc;
    }
    rt__port.nq = queue_count(cfg, &info, name);
    rt__port.txq = 0;
    /* af_xdp turns the pool into its UMEM: it must be packed (pool.c). */
    is_xdp = strcmp(info.driver_name, "net_af_xdp") == 0;
    rt__port.is_xdp = is_xdp;
    rt__port.is_pkt = strcmp(info.driver_name, "net_af_packet") == 0;
    t = base_now_ns();
    rc = create_pool(cfg, is_xdp);
    rt__port.ms.pool = base_ms_lap(&t);
    if (rc != 0)
        return rc;
    if (is_xdp && !rt__pool_fits_umem(rt__port.pool))
        return -ENOMEM;
    /* af_xdp and af_packet are slept on through their sockets; any other
     * device (memif, NICs) is asked for an rx interrupt eventfd. */
    rx_intr = !is_xdp && strcmp(info.driver_name, "net_af_packet") != 0;
    rc = configure(port_id, cfg, &info, rx_intr, csum_flags);
    if (rc != 0 && rx_intr) {
        rx_intr = false;
        rc = configure(port_id, cfg, &info, false, csum_flags);
    }
    if (rc != 0) {
        BASE_LOG(rt__port_fail_level, "port", "%s: configure failed: %s", name,
                 strerror(-rc));
        return rc;
    }
    rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nrx, &ntx);
    if (rc != 0) {
        BASE_LOG(rt__port_fail_level, "port",
                 "%s: descriptor counts refused: %s; change "
                 "ACCEL_RX_DESC/ACCEL_TX_DESC",
                 name, strerror(-rc));
        return rc;
    }
    for (uint16_t q = 0; q < rt__port.nq; q++) {
        rc = rte_eth_rx_queue_setup(port_id, q, nrx, (unsigned)sock, NULL,
                                    rt__port.pool);
        if (rc != 0) {
            BASE_LOG(rt__port_fail_level, "port",
                     "%s: rx queue %u setup failed: %s", name, q,
                     strerror(-rc));
            return rc;
        }
        rc = rte_eth_tx_queue_setup(port_id, q, ntx, (unsigned)sock, NULL);
        if (rc != 0) {
            BASE_LOG(rt__port_fail_level, "port",
                     "%s: tx queue %u setup failed: %s", name, q,
                     strerror(-rc));
            return rc;
        }
    }
    rt__port.ms.queues = base_ms_lap(&t);
    if (cfg->mac_set) {
        memcpy(addr.addr_bytes, cfg->mac_addr, 6);
        if (rte_eth_dev_default_mac_addr_set(port_id, &addr) != 0 &&
            rte_eth_promiscuous_enable(port_id) != 0)
            BASE_WARN("port",
                      "%s: cannot set ACCEL_MAC on the device nor enable "
                      "promiscuous mode; frames to ACCEL_MAC may not arrive: "
                      "unset ACCEL_MAC to use the device's own MAC",
                      name);
    }
    rc = rte_eth_dev_start(port_id);
    if (rc != 0) {
        BASE_LOG(rt__port_fail_level, "port", "%s: start failed: %s", name,
                 strerror(-rc));
        return rc;
    }
    rt__port.up = true;
    rt__port.ms.start = base_ms_lap(&t);
    if (info.driver_name != NULL && strstr(info.driver_name, "memif"))
        rt__mf_own_arm();
    /* Groups the stack joins (IGMP) have no per-group MAC filter: take
     * every multicast frame. PMDs without the call are fine (af_xdp and
     * af_packet on veth receive them anyway). */
    rc = rte_eth_allmulticast_enable(port_id);
    if (rc != 0 && rc != -ENOTSUP)
        BASE_DBG("port", "%s: allmulticast: %s", name, strerror(-rc));
    if (cfg->mac_set) {
        memcpy(mac, cfg->mac_addr, 6);
    } else {
        rc = rte_eth_macaddr_get(port_id, &addr);
        if (rc != 0) {
            BASE_LOG(rt__port_fail_level, "port",
                     "%s: no MAC address: %s; set ACCEL_MAC", name,
                     strerror(-rc));
            return rc;
        }
        memcpy(mac, addr.addr_bytes, 6);
    }
    intr_fd = -1;
    if (rx_intr) {
        /* Devices without rx interrupts (memif in DPDK 22.11) make ethdev
         * log an error here: keep it out of the application's stderr. */
        uint32_t lvl = rte_log_get_global_level();
        if (base_log_level < BASE_LOG_DEBUG)
            rte_log_set_global_level(RTE_LOG_CRIT);
        for (uint16_t q = 0; q < rt__port.nq; q++) {
            int fd = rte_eth_dev_rx_intr_ctl_q_get_fd(port_id, q);
            if (fd < 0) {
                rt__port.nwait = 0;
                break;
            }
            /* The reader drains it after waking; never block there. */
            long fl = syscall(SYS_fcntl, fd, F_GETFL);
            if (fl >= 0)
                syscall(SYS_fcntl, fd, F_SETFL, fl | O_NONBLOCK);
            rt__port.wait_fds[rt__port.nwait++] = fd;
        }
        rte_log_set_global_level(lvl);
        if (rt__port.nwait > 0) {
            rt__port.wait_kind = RT__WAIT_INTR;
            intr_fd = rt__port.wait_fds[0];
        }
    }
    wait_link(port_id);
    return 0;
}

void
rt__port_close(uint16_t port_id)
{
    if (rt__port.up) {
        rt__tx_flush();
        bl_drop_all();
        rt__stash_drain(rt__stash);
        rt__port_stats_snapshot();
        rte_eth_dev_stop(port_id);
    }
    /* nwait, wait_fds and wait_kind stay (rt__port_init resets them):
     * at exit, sleepers read them without the lock to build their ppoll
     * set (a closed fd just ends that ppoll), and every poll checks up
     * under the lock. */
    rt__port.up = false;
    intr_fd = -1;
}

int
rt__port_intr_arm(void)
{
    int rc = 0;

    if (intr_fd < 0)
        return -ENOTSUP;
    /* Only the queues this process sleeps on: another owner's interrupt
     * is its own to arm and disarm. */
    for (uint16_t q = 0; q < rt__port.nwait && rc == 0; q++)
        if (rt__share_watches_queue(q))
            rc = rte_eth_dev_rx_intr_enable(rt__port.port_id, q);
    return rc;
}

void
rt__port_intr_disarm(void)
{
    uint64_t v;

    if (intr_fd < 0)
        return;
    for (uint16_t q = 0; q < rt__port.nwait; q++) {
        if (!rt__share_watches_queue(q))
            continue;
        rte_eth_dev_rx_intr_disable(rt__port.port_id, q);
        while (syscall(SYS_read, rt__port.wait_fds[q], &v, sizeof(v)) ==
               sizeof(v))
            ;
    }
}

/* ---- tx: stk_link_ops ---------------------------------------------------- */

/* Recently received mbufs, kept for the next frames the stack sends
 * (stack lock held). The pool is a FIFO ring with no per-lcore cache
 * (fork safety), so a fresh allocation returns the coldest of its 16k
 * mbufs and the first write to it is a cache miss; the mbuf that just
 * carried a request is hot. LIFO, bounded, drained at port close and
 * when the process leaves a shared port (rt__stash in rt_int.h). */
static struct rt__stash own_stash;
struct rt__stash *rt__stash = &own_stash;

void
rt__mbuf_recycle(struct rte_mbuf *m)
{
    struct rt__stash *st = rt__stash;

    if (m->nb_segs != 1 || m->pool != rt__port.pool || !rt__port.up) {
        rte_pktmbuf_free(m);
        return;
    }
    m = rte_pktmbuf_prefree_seg(m);
    if (m == NULL)
        return; /* still referenced elsewhere */
    if (st->n < RT__STASH_MAX)
        st->m[st->n++] = m;
    else
        rte_mbuf_raw_free(m);
}

void
rt__stash_drain(struct rt__stash *st)
{
    while (st->n > 0)
        rte_mbuf_raw_free(st->m[--st->n]);
}

void
rt__stash_move(struct rt__stash *st)
{
    if (st == NULL)
        st = &own_stash;
    if (st == rt__stash)
        return;
    *st = *rt__stash;
    rt__stash->n = 0;
    rt__stash = st;
}

uint8_t *
rt__tx_alloc(void *ctx, uint16_t len, void **handle)
{
    struct rte_mbuf *m;

    (void)ctx;
    if (!rt__port.up)
        return NULL;
    if (rt__stash->n > 0) {
        m = rt__stash->m[--rt__stash->n];
        rte_pktmbuf_reset(m);
    } else {
        m = rte_pktmbuf_alloc(rt__port.pool);
    }
    if (m == NULL) {
        BASE_STAT_INC(tx_drop_nombuf);
        return NULL;
    }
    if (len > rte_pktmbuf_tailroom(m)) {
        rte_pktmbuf_free(m);
        BASE_STAT_INC(tx_drop_toolong);
        return NULL;
    }
    *handle = m;
    return rte_pktmbuf_mtod(m, uint8_t *);
}

void
rt__tx_send(void *ctx, void *handle, uint16_t len)
{
    struct rte_mbuf *m = handle;

    (void)ctx;
    m->data_len = len;
    m->pkt_len = len;
    rt__port.txbuf[rt__port.ntx] = m;
    __atomic_store_n(&rt__port.ntx, rt__port.ntx + 1, __ATOMIC_RELAXED);
    if (rt__port.ntx >= rt__port.burst)
        rt__tx_flush();
}

void
rt__tx_flush(void)
{
    if (rt__port.ntx == 0 &&
        atomic_load_explicit(&rt__tx_backlog, memory_order_relaxed) == 0 &&
        !rt__impair_tx_pending())
        return;
    rt__dp->flush();
}

/* Frames the tx ring had no room for, oldest at head (stack lock held;
 * the count is also read without it, rt__tx_backlog). */
static struct {
    struct rte_mbuf *m[TX_BACKLOG_MAX];
    uint32_t head, n;
    uint64_t stuck_ns; /* since when no flush took any of it; 0: moving */
} bl;
_Atomic uint32_t rt__tx_backlog;

static void
bl_set_count(uint32_t n)
{
    bl.n = n;
    atomic_store_explicit(&rt__tx_backlog, n, memory_order_relaxed);
}

/* A frame the ring refused: into the backlog, or dropped when the
 * backlog is full or the pool is low (held frames must not starve rx). */
static void
hold_or_drop(struct rte_mbuf *m)
{
    if (bl.n < base_cfg.tx_backlog &&
        rte_mempool_avail_count(rt__port.pool) >= rt__port.pool->size / 4) {
        bl.m[(bl.head + bl.n) % TX_BACKLOG_MAX] = m;
        bl_set_count(bl.n + 1);
        BASE_STAT_INC(tx_backlogged);
        return;
    }
    BASE_STAT_INC(tx_drop_full);
    rt__mbuf_recycle(m);
}

/* rte_eth_tx_burst of v[0..n), tries times at most while frames remain:
 * how many went. Sent frames are released (bytes counted); the others
 * are left to the caller as they were. A reference of ours across the
 * burst: a PMD that copies the frame (memif, af_packet, af_xdp outside
 * its umem) drops its reference before it returns, and the mbuf, hot in
 * the cache, goes back to the stash instead of through the pool's ring
 * (two atomic ring operations per frame); one that still holds it
 * (zero-copy) frees it later. */
static uint32_t
burst_out(struct rte_mbuf **v, uint32_t n, int tries, uint64_t *bytes)
{
    uint32_t sent = 0;

    for (uint32_t i = 0; i < n; i++)
        rte_mbuf_refcnt_update(v[i], 1);
    for (int t = 0; sent < n && t < tries; t++)
        sent += rte_eth_tx_burst(rt__port.port_id, rt__port.txq, v + sent,
                                 (uint16_t)(n - sent));
    for (uint32_t i = 0; i < n; i++) {
        if (i < sent) {
            *bytes += v[i]->pkt_len;
            rt__mbuf_recycle(v[i]);
        } else {
            rte_mbuf_refcnt_update(v[i], -1);
        }
    }
    return sent;
}

/* Port closing: what the backlog still holds is dropped. */
static void
bl_drop_all(void)
{
    while (bl.n > 0) {
        rte_pktmbuf_free(bl.m[bl.head]);
        bl.head = (bl.head + 1) % TX_BACKLOG_MAX;
        bl_set_count(bl.n - 1);
        BASE_STAT_INC(tx_drop_full);
    }
    bl.head = 0;
    bl.stuck_ns = 0;
}

void
rt__port_atfork_child(void)
{
    /* The stash it sees is the parent's (its slot's, or a copy): not ours. */
    own_stash.n = 0;
    rt__stash = &own_stash;
    rt__port.ntx = 0;
    /* The backlog's frames are the parent's to send. */
    bl.head = 0;
    bl.stuck_ns = 0;
    bl_set_count(0);
    if (rt__impair_active())
        rt__impair_atfork_child();
}

void
rt__tx_flush_locked(void)
{
    uint32_t n = rt__port.ntx, sent = 0, moved = 0;
    uint64_t bytes = 0;
    /* A memif map behind in this process (share_memif.c): no burst. */
    int tries = rt__mf_stale() ? 0 : TX_RETRIES;

    if (rt__impair_active()) {
        /* ACCEL_TEST_IMPAIR (impair_port.c): the queued frames go through
         * it; those that leave now, held ones first, take their place. */
        n = rt__impair_tx(rt__port.txbuf, n);
        __atomic_store_n(&rt__port.ntx, n, __ATOMIC_RELAXED);
    }
    if (n == 0 && bl.n == 0)
        return;
    /* The backlog first, oldest first, so a connection's frames keep
     * their order; new frames go out only once it is empty. */
    while (bl.n > 0) {
        uint32_t chunk = bl.n, s;

        if (chunk > TX_BACKLOG_MAX - bl.head)
            chunk = TX_BACKLOG_MAX - bl.head;
        if (chunk > RT__MAX_BURST)
            chunk = RT__MAX_BURST;
        s = burst_out(bl.m + bl.head, chunk, tries, &bytes);
        bl.head = (bl.head + s) % TX_BACKLOG_MAX;
        bl_set_count(bl.n - s);
        moved += s;
        if (s < chunk)
            break;
    }
    if (bl.n > 0 && moved == 0) {
        uint64_t now = base_now_ns();

        if (bl.stuck_ns == 0)
            bl.stuck_ns = now;
        else if (now - bl.stuck_ns >= TX_BACKLOG_STUCK_NS)
            bl_drop_all();
    } else {
        bl.stuck_ns = 0;
    }
    if (bl.n == 0) {
        bl.head = 0;
        sent = burst_out(rt__port.txbuf, n, tries, &bytes);
    }
    for (uint32_t i = sent; i < n; i++)
        hold_or_drop(rt__port.txbuf[i]);
    BASE_STAT_ADD(tx_frames, sent + moved);
    BASE_STAT_ADD(tx_bytes, bytes);
    __atomic_store_n(&rt__port.ntx, 0, __ATOMIC_RELAXED);
}
