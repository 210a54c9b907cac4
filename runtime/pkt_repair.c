/*
 * af_packet rings after a process died in the middle of a burst: the
 * af_packet counterpart of xsk_repair.c (which says why this happens).
 *
 * DPDK 22.11's af_packet PMD keeps each queue's position in the kernel's
 * TPACKET_V2 rings (framenum) in its queue structure, shared by the fork
 * family, and stores it at the end of a burst; each frame carries its own
 * status. A process killed in the middle of a burst leaves:
 *
 *  - tx: frames written and marked SEND_REQUEST, framenum not moved and
 *    no sendto. The next burst found its first frame busy and sent
 *    nothing of its own; the kick then sent the dead process's frames and
 *    the kernel's position moved past framenum for good: from then on
 *    every frame was written behind the kernel's position and waited for
 *    it to come round the ring. Repair: step framenum over the
 *    SEND_REQUEST frames and kick, so both positions agree again (the
 *    dead process's frames, complete once marked, are sent).
 *  - rx: frames already handed back to the kernel, framenum not moved.
 *    The PMD then waited on a frame the kernel would only write after
 *    going round the whole ring: no frame was received until a ring's
 *    worth had arrived (an idle connection: never). The kernel's position
 *    is not readable; it shows as soon as one frame waits: the first
 *    frame marked USER after framenum. Until then the queue is unsure:
 *    each empty poll looks for that frame (rt__pkt_rx_resync). A frame
 *    the kernel is still writing on another CPU could be passed over, so
 *    a candidate counts only once the frames before it still read as the
 *    kernel's a moment later.
 *
 * The frames the dead process had taken are lost with it (TCP sends
 * them again). Not covered: a death between the tx kick and the store of
 * the position, once the kernel has sent every frame (they read as free
 * again, like any other): the next frames written wait for the kernel to
 * come round the ring once. Layout: DPDK 22.11's, checked before anything
 * is changed.
 */
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <linux/if_packet.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_version.h>

#include "log.h"
#include "pkt_repair.h"
#include "rt_int.h"
#include "share_int.h"
#include "stats.h"

#if RTE_VERSION >= RTE_VERSION_NUM(22, 11, 0, 0) &&                            \
    RTE_VERSION < RTE_VERSION_NUM(22, 12, 0, 0)
#define PKT_LAYOUT_KNOWN 1
#else
#define PKT_LAYOUT_KNOWN 0
#endif

/* DPDK 22.11 drivers/net/af_packet/rte_eth_af_packet.c, up to framenum
 * (and in_port, for the check). */
struct pkt_rxq {
    int sockfd;
    struct iovec *rd;
    uint8_t *map;
    unsigned int framecount;
    unsigned int framenum;
    void *mb_pool;
    uint16_t in_port;
};

struct pkt_txq {
    int sockfd;
    unsigned int frame_data_size;
    struct iovec *rd;
    uint8_t *map;
    unsigned int framecount;
    unsigned int framenum;
};

static bool
frames_sane(const struct iovec *rd, const uint8_t *map, unsigned count,
            unsigned num)
{
    if (rd == NULL || map == NULL || count < 2 || count > (1u << 20) ||
        num >= count || rd[0].iov_base != map)
        return false;
    /* Frames of one size, back to back. */
    return rd[1].iov_base == map + rd[0].iov_len &&
           rd[1].iov_len == rd[0].iov_len;
}

static bool
queues(uint16_t q, struct pkt_rxq **rx, struct pkt_txq **tx)
{
    if (!PKT_LAYOUT_KNOWN || !rt__port.is_pkt || q >= rt__port.nq)
        return false;
    *rx = rte_eth_fp_ops[rt__port.port_id].rxq.data[q];
    *tx = rte_eth_fp_ops[rt__port.port_id].txq.data[q];
    return *rx != NULL && *tx != NULL && (*rx)->in_port == rt__port.port_id &&
           frames_sane((*rx)->rd, (*rx)->map, (*rx)->framecount,
                       (*rx)->framenum) &&
           frames_sane((*tx)->rd, (*tx)->map, (*tx)->framecount,
                       (*tx)->framenum);
}

bool
rt__pkt_rings(uint16_t q, struct rt__pkt_rings *r)
{
    struct pkt_rxq *rx;
    struct pkt_txq *tx;

    if (!queues(q, &rx, &tx))
        return false;
    *r = (struct rt__pkt_rings){.rx_rd = rx->rd,
                                .tx_rd = tx->rd,
                                .rx_count = rx->framecount,
                                .tx_count = tx->framecount,
                                .rx_num = &rx->framenum,
                                .tx_num = &tx->framenum};
    return true;
}

static uint32_t
status(const struct iovec *rd, unsigned i)
{
    const struct tpacket2_hdr *h = rd[i].iov_base;

    return __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
}

void
rt__pkt_repair(uint16_t q)
{
    struct pkt_rxq *rx;
    struct pkt_txq *tx;
    unsigned n = 0;

    if (!rt__port.is_pkt)
        return;
    if (!queues(q, &rx, &tx)) {
        BASE_WARN("port",
                  "%s queue %u: a process died holding the queue's lock, and "
                  "this af_packet PMD's rings cannot be checked (DPDK %s); if "
                  "frames stop flowing, restart the program",
                  rt__port.desc, q, rte_version());
        return;
    }
    /* Marked for sending, or being sent (the kick came first): either way
     * behind the kernel's position once it is done with them. */
    while (n < tx->framecount &&
           (status(tx->rd, tx->framenum) &
            (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING))) {
        tx->framenum = (tx->framenum + 1) % tx->framecount;
        n++;
    }
    if (n > 0)
        (void)sendto(tx->sockfd, NULL, 0, MSG_DONTWAIT, NULL, 0);
    /* Nothing waits at the rx position: it may be behind the kernel's
     * (the dead process handed frames back), or the ring is just empty.
     * The next frame to arrive tells (rt__pkt_rx_resync). */
    if (!(status(rx->rd, rx->framenum) & TP_STATUS_USER))
        atomic_fetch_or(&rt__sh->pkt_unsure, 1u << q);
    if (n == 0)
        return;
    BASE_STAT_ADD(pkt_repairs, n);
    BASE_WARN("port",
              "%s queue %u: a process died in the middle of a burst; af_packet "
              "tx position moved over the %u frames it had written: "
              "repaired, nothing to do",
              rt__port.desc, q, n);
}

void
rt__pkt_rx_resync(uint16_t q)
{
    struct pkt_rxq *rx;
    struct pkt_txq *tx;
    unsigned d;

    if (!queues(q, &rx, &tx))
        return;
    if (status(rx->rd, rx->framenum) & TP_STATUS_USER) {
        atomic_fetch_and(&rt__sh->pkt_unsure, ~(1u << q)); /* not moved */
        return;
    }
    for (d = 1; d < rx->framecount; d++)
        if (status(rx->rd, (rx->framenum + d) % rx->framecount) &
            TP_STATUS_USER)
            break;
    if (d == rx->framecount)
        return; /* nothing waits: ask again at the next poll */
    /* The kernel fills a frame it has claimed in microseconds: frames
     * before the candidate that still read as the kernel's 20 us later
     * were handed back by the dead process. */
    rte_delay_us_block(20);
    for (unsigned i = 0; i < d; i++)
        if (status(rx->rd, (rx->framenum + i) % rx->framecount) &
            TP_STATUS_USER)
            return; /* one arrived meanwhile: look again next time */
    rx->framenum = (rx->framenum + d) % rx->framecount;
    atomic_fetch_and(&rt__sh->pkt_unsure, ~(1u << q));
    BASE_STAT_ADD(pkt_repairs, d);
    BASE_WARN("port",
              "%s queue %u: a process died in the middle of a burst; af_packet "
              "rx position found again, %u frames on: repaired, nothing to "
              "do",
              rt__port.desc, q, d);
}
