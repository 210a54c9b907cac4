/*
 * The receiver's side of loss recovery (patch 0009).
 *
 * D-SACK (RFC 2883), as Linux sends it: data that arrives twice (a
 * segment below rcv_nxt, the already received start of a partly new
 * segment, an out-of-order segment already queued) is reported as the
 * first block of the next ACK's SACK option, once. It tells the sender
 * that its retransmission was not needed, so it can undo the reduction
 * and widen its reordering window.
 *
 * Out-of-order memory is bounded: lwIP keeps out-of-order segments, each
 * holding the whole received frame, within the receive window, but a
 * peer sending tiny segments could make a window of them cost a thousand
 * times its size. Per connection at most STK_OOSEQ_SEGS_PER_CONN
 * segments (a full 1 MB window of 1460-byte segments is ~720), and per
 * process STK_OOSEQ_SEGS_MAX in all (~110 MB of frames): past that, a
 * connection that queues one more loses its whole out-of-order queue, as
 * Linux prunes it under memory pressure (the sender retransmits it). Every
 * segment dropped so is counted (tcp_ofo_drop).
 */
#include "stats.h"
#include "stk_test.h"
#include "stk_hooks.h"
#include "stk_priv.h"
#include "tcp_snd.h"

static uint32_t ooseq_segs; /* out-of-order segments held, process-wide */

void
stk_tcp_dsack_set(struct tcp_pcb *pcb, uint32_t left, uint32_t right)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (!(pcb->flags & TF_SACK))
        return;
    /* Only what lies below rcv_nxt was received before. */
    if (TCP_SEQ_LT(left, pcb->rcv_nxt) && TCP_SEQ_GT(right, pcb->rcv_nxt))
        right = pcb->rcv_nxt;
    if (!TCP_SEQ_LT(left, right))
        return;
    x->dsack = true;
    x->dsack_left = left;
    x->dsack_right = right;
}

int
stk_tcp_dsack_pending(const struct tcp_pcb *pcb)
{
    return pcb->acc.dsack;
}

void
stk_tcp_dsack_get(const struct tcp_pcb *pcb, uint32_t *left, uint32_t *right)
{
    *left = pcb->acc.dsack_left;
    *right = pcb->acc.dsack_right;
}

void
stk_tcp_dsack_sent(struct tcp_pcb *pcb)
{
    if (pcb->acc.dsack) {
        pcb->acc.dsack = false;
        BASE_STAT_INC(tcp_dsack_sent);
    }
}

void
stk_tcp_ooseq_add(struct tcp_seg *seg)
{
    (void)seg;
    ooseq_segs++;
    BASE_STAT_INC(tcp_ofo_queued);
}

void
stk_tcp_ooseq_del(struct tcp_seg *seg)
{
    (void)seg;
    ooseq_segs--;
}

void
stk_tcp_ooseq_dropped(struct tcp_pcb *pcb, struct tcp_seg *seg)
{
    (void)pcb;
    for (; seg != NULL; seg = seg->next)
        BASE_STAT_INC(tcp_ofo_drop);
}

uint16_t
stk_tcp_ooseq_limit(const struct tcp_pcb *pcb)
{
    (void)pcb;
    return ooseq_segs > STK_OOSEQ_SEGS_MAX ? 0 : STK_OOSEQ_SEGS_PER_CONN;
}

long
stk_test_ooseq_segs(void)
{
    return (long)ooseq_segs;
}
