/*
 * af_xdp rings after a process died in the middle of a burst.
 *
 * Once a fork family shares the port (share.c), the af_xdp PMD's queue
 * structures live in hugepage memory every process maps, and whoever
 * holds the lock of a queue (the port lock with one queue) runs the PMD
 * on it. The PMD moves a cursor of its own first and tells the kernel at
 * the end of the burst:
 *
 *  - rings it fills (tx, fill): xsk_ring_prod__reserve advances
 *    cached_prod, the descriptors are written, then submit adds their
 *    count to the producer index the kernel reads;
 *  - rings it drains (rx, completion): xsk_ring_cons__peek advances
 *    cached_cons, the entries are read, then release adds their count to
 *    the consumer index.
 *
 * At rest the cursor equals the shared index. A process killed between
 * the two (kill -9 of an nginx worker under load lands there now and
 * then) leaves the cursor ahead for good. On the tx ring each later burst
 * then publishes as many entries as it wrote, but starting with the dead
 * process's unpublished ones: its own last frames wait for the next
 * burst, and at the end of a load they never leave (the RSTs answering
 * the FINs of the dead worker's clients: the clients stayed in LAST-ACK,
 * retransmitting). On the rx ring the frames it had peeked are skipped and
 * their slots lost; on the fill ring the kernel would read addresses the
 * dead process may not have written yet.
 *
 * So whoever recovers the lock (EOWNERDEAD) calls rt__xsk_repair:
 *
 *  - tx, fill: cached_prod = producer. The reservation is dropped; the
 *    mbufs the dead process was sending or refilling with are lost to the
 *    pool (a burst at most);
 *  - rx: cached_cons = consumer. The frames are read again: between peek
 *    and release the PMD only writes their mbuf headers;
 *  - completion: consumer = cached_cons. The completions are taken as
 *    done: the dead process may have freed some of their mbufs already,
 *    and freeing one twice would corrupt the pool (the others are lost).
 *
 * The queue structure is the PMD's own (drivers/net/af_xdp, not in
 * DPDK's headers): its layout is written below for DPDK 22.11, the
 * version built against, and every ring found there is checked against
 * what a kernel ring must look like before anything is changed.
 */
#include <stddef.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_version.h>

#include "log.h"
#include "rt_int.h"
#include "stats.h"
#include "xsk_repair.h"

#if RTE_VERSION >= RTE_VERSION_NUM(22, 11, 0, 0) &&                            \
    RTE_VERSION < RTE_VERSION_NUM(22, 12, 0, 0)
#define XSK_LAYOUT_KNOWN 1
#else
#define XSK_LAYOUT_KNOWN 0
#endif

/* DPDK 22.11 drivers/net/af_xdp/rte_eth_af_xdp.c: struct pkt_rx_queue up
 * to its completion ring, and struct pkt_tx_queue's first member. */
struct xdp_rxq {
    struct rt__xsk_ring rx;
    void *umem;
    void *xsk;
    void *mb_pool;
    uint16_t port;
    uint64_t stats[3];
    struct rt__xsk_ring fill;
    struct rt__xsk_ring comp;
};

struct xdp_txq {
    struct rt__xsk_ring tx;
};

/* What a ring mapped from the kernel looks like: a power of two of
 * entries, producer and consumer indexes in the page before the entries
 * (XDP_MMAP_OFFSETS), at most size entries between them, and our cursor
 * at most size ahead of the index it shadows. */
static bool
ring_sane(const struct rt__xsk_ring *r, bool prod)
{
    uintptr_t ring = (uintptr_t)r->ring, p = (uintptr_t)r->producer,
              c = (uintptr_t)r->consumer;
    uint32_t used, ahead;

    if (r->size < 8 || r->size > (1u << 20) || (r->size & r->mask) != 0 ||
        r->mask != r->size - 1 || p == 0 || c == 0 || ring == 0)
        return false;
    if (p >= ring || c >= ring || ring - p > 4096 || ring - c > 4096)
        return false;
    used = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE) -
           __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
    ahead =
        prod ? r->cached_prod - *r->producer : r->cached_cons - *r->consumer;
    return used <= r->size && ahead <= r->size;
}

bool
rt__xsk_rings(uint16_t q, struct rt__xsk_rings *r)
{
    struct xdp_rxq *rxq;
    struct xdp_txq *txq;

    if (!XSK_LAYOUT_KNOWN || !rt__port.is_xdp || q >= rt__port.nq)
        return false;
    rxq = rte_eth_fp_ops[rt__port.port_id].rxq.data[q];
    txq = rte_eth_fp_ops[rt__port.port_id].txq.data[q];
    if (rxq == NULL || txq == NULL || rxq->port != rt__port.port_id ||
        !ring_sane(&rxq->rx, false) || !ring_sane(&rxq->fill, true) ||
        !ring_sane(&rxq->comp, false) || !ring_sane(&txq->tx, true))
        return false;
    r->rx = &rxq->rx;
    r->fill = &rxq->fill;
    r->comp = &rxq->comp;
    r->tx = &txq->tx;
    return true;
}

/* A ring we fill: drop the reservation nobody will submit. */
static uint32_t
prod_repair(struct rt__xsk_ring *r)
{
    uint32_t n = r->cached_prod - *r->producer;

    r->cached_prod = *r->producer;
    return n;
}

void
rt__xsk_rings_fix(const struct rt__xsk_rings *r, struct rt__xsk_fixed *n)
{
    n->rx = r->rx->cached_cons - *r->rx->consumer;
    r->rx->cached_cons = *r->rx->consumer;
    n->comp = r->comp->cached_cons - *r->comp->consumer;
    __atomic_store_n(r->comp->consumer, r->comp->cached_cons, __ATOMIC_RELEASE);
    n->fill = prod_repair(r->fill);
    n->tx = prod_repair(r->tx);
}

uint32_t
rt__xsk_repair(uint16_t q)
{
    struct rt__xsk_rings r;
    struct rt__xsk_fixed n;
    uint32_t total;

    if (!rt__port.is_xdp)
        return 0;
    if (!rt__xsk_rings(q, &r)) {
        BASE_WARN("port",
                  "%s queue %u: a process died holding the queue's lock, and "
                  "this af_xdp PMD's rings cannot be checked (DPDK %s); if "
                  "frames stop flowing, restart the program",
                  rt__port.desc, q, rte_version());
        return 0;
    }
    rt__xsk_rings_fix(&r, &n);
    total = n.rx + n.comp + n.fill + n.tx;
    if (total == 0)
        return 0;
    BASE_STAT_ADD(xsk_repairs, total);
    BASE_WARN("port",
              "%s queue %u: a process died in the middle of a burst; af_xdp "
              "rings back in step (rx: %u frames to read again, tx: %u "
              "unsent descriptors dropped, fill: %u, completion: %u): "
              "repaired, nothing to do",
              rt__port.desc, q, n.rx, n.tx, n.fill, n.comp);
    return total;
}
