/*
 * The mbuf pool, and the memory layout the af_xdp PMD needs from it.
 *
 * DPDK 22.11's af_xdp PMD registers the rx queue's mempool itself as the
 * AF_XDP UMEM, and sizes that UMEM as if the pool were one block of
 * objects packed back to back: it starts at the pool's first memory chunk
 * (rounded down to a page) and spans populated_size * object size (newer
 * DPDK reads the pool's real address range instead). A pool built the
 * usual way does not look like that: objects must not cross a page
 * boundary (for IOVA-contiguous objects), so every 2 MB hugepage ends with
 * a gap, and with --no-huge (4 KB pages) only one 2.3 KB mbuf fits per
 * page. The last mbufs of the pool then lie past the end of the UMEM. The
 * kernel rejects their descriptors as invalid: a frame sent in one is
 * dropped (a TCP retransmission 200 ms later; xsk tx_invalid_descs), an
 * rx buffer given to the fill ring is consumed, and both are never
 * returned, so the pool leaks one mbuf per use. With hugepages that is a
 * few dozen frames lost after start-up; with --no-huge it is 40 % of the
 * pool, and a bulk transfer stalls once the pool runs dry.
 *
 * So for af_xdp the pool is built with RTE_MEMPOOL_F_NO_IOVA_CONTIG: no
 * page-boundary padding, one virtually contiguous memzone, objects packed
 * (AF_XDP in copy mode, the only mode on veth, needs no IOVA; a device
 * that DMAs gets the usual pool). rt__pool_fits_umem() checks every
 * object against the PMD's arithmetic, so a pool that still does not fit
 * is refused with a clear line instead of leaking.
 *
 * The pool is a LIFO (DPDK's lock-free stack, "lf_stack"), not the usual
 * FIFO ring. With no per-lcore cache (fork safety, below), a ring hands
 * out the coldest of its 16k mbufs: the PMD's receive writes to a buffer
 * not touched for a whole cycle through the pool, a cache miss per frame.
 * The stack returns the mbuf freed last, still hot: memif keep-alive
 * HTTP went from 0.42-0.45M to 0.51-0.54M req/s (bench/http topology B,
 * both processes on one idle CPU each). Lock-free, so a process killed
 * in the middle of an operation cannot hang the others that share the
 * pool after a fork (the ring's tail update has that window too).
 * --mbuf-pool-ops-name in ACCEL_EAL_ARGS chooses another handler; without
 * the stack driver the platform's default is used.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include "log.h"
#include "rt_int.h"

#define POOL_OPS "lf_stack"

static int
set_ops(struct rte_mempool *mp)
{
    const char *user = rte_mbuf_user_mempool_ops();

    if (user != NULL)
        return rte_mempool_set_ops_byname(mp, user, NULL);
    if (rte_mempool_set_ops_byname(mp, POOL_OPS, NULL) == 0)
        return 0;
    BASE_DBG("port", "no %s mempool driver: the pool is %s", POOL_OPS,
             rte_mbuf_best_mempool_ops());
    return rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
}

struct rte_mempool *
rt__pool_create(const char *name, uint32_t n, uint16_t data_room, int socket,
                bool packed)
{
    struct rte_pktmbuf_pool_private priv;
    struct rte_mempool *mp;
    unsigned elt = (unsigned)sizeof(struct rte_mbuf) + data_room;
    int rc;

    memset(&priv, 0, sizeof(priv));
    priv.mbuf_data_room_size = data_room;
    priv.mbuf_priv_size = 0;
    /* No per-lcore cache: after a fork every child would share lcore 0's
     * cache (ENVIRONMENT.md); a ring-only pool stays correct. */
    mp = rte_mempool_create_empty(name, n, elt, 0, sizeof(priv), socket,
                                  packed ? RTE_MEMPOOL_F_NO_IOVA_CONTIG : 0);
    if (mp == NULL)
        return NULL;
    rc = set_ops(mp);
    if (rc == 0) {
        rte_pktmbuf_pool_init(mp, &priv);
        rc = rte_mempool_populate_default(mp);
    }
    if (rc < 0) {
        rte_mempool_free(mp);
        rte_errno = -rc;
        return NULL;
    }
    rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
    return mp;
}

struct umem_span {
    uintptr_t base, end;
    uint32_t frame, header;
    unsigned outside;
};

static void
check_obj(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
    struct umem_span *s = arg;
    uintptr_t start = (uintptr_t)obj - s->header;

    (void)mp;
    (void)idx;
    if (start < s->base || start + s->frame > s->end)
        s->outside++;
}

bool
rt__pool_fits_umem(struct rte_mempool *mp)
{
    struct rte_mempool_memhdr *first = STAILQ_FIRST(&mp->mem_list);
    struct umem_span s;
    uintptr_t addr;
    long pg = sysconf(_SC_PAGESIZE);

    if (first == NULL)
        return false;
    /* The same arithmetic as the PMD's xdp_umem_configure(). */
    addr = (uintptr_t)first->addr;
    s.base = addr & ~((uintptr_t)(pg > 0 ? pg : 4096) - 1);
    s.frame = rte_mempool_calc_obj_size(mp->elt_size, mp->flags, NULL);
    s.header = mp->header_size;
    s.end = s.base + (uintptr_t)mp->populated_size * s.frame + (addr - s.base);
    s.outside = 0;
    rte_mempool_obj_iter(mp, check_obj, &s);
    if (s.outside != 0)
        BASE_LOG(rt__port_fail_level, "port",
                 "the mbuf pool does not fit the af_xdp UMEM (%u of %u mbufs "
                 "outside, %u memory chunks): af_xdp would drop and leak them",
                 s.outside, mp->populated_size, mp->nb_mem_chunks);
    return s.outside == 0;
}
