/*
 * Which segments are lost, and the tail loss probe.
 *
 * RACK (RFC 8985, as Linux's tcp_recovery.c): a segment is lost when a
 * segment sent after it has been delivered and more than the latest RTT
 * plus a reordering window has passed since it was sent. Time, not
 * counts: it sees a lost retransmission as readily as a lost original,
 * and reordering shorter than the window costs nothing. The window is
 * zero until reordering has been seen (then a quarter of the minimum RTT,
 * widened by D-SACKs, at most the smoothed RTT), and zero as soon as
 * three segments above a hole are SACKed, which is the classic dupack
 * threshold. A segment whose window has not run out yet arms the REO
 * timer for the moment it does.
 *
 * A peer without SACK gets NewReno (RFC 6582, Linux's
 * tcp_newreno_mark_lost): the oldest segment is lost after `reordering`
 * dupacks, and again at each partial ACK during recovery.
 *
 * The tail loss probe (RFC 8985 section 7): when the last segments of a
 * flight are lost no ACK comes back to tell; instead of waiting for the
 * RTO (200 ms or more), two RTTs after the last send one segment goes out
 * (new data if there is some, else the last segment again) so that the
 * peer's ACK or SACK starts fast recovery.
 */
#include "stats.h"
#include "stk_priv.h"
#include "tcp_snd.h"

/* t1/seq1 was sent after t2/seq2 (ties broken by sequence). */
static bool
sent_after(uint64_t t1, uint64_t t2, uint32_t seq1, uint32_t seq2)
{
    return t1 > t2 || (t1 == t2 && TCP_SEQ_GT(seq1, seq2));
}

void
stk__rack_advance(struct tcp_pcb *pcb, uint8_t flags, uint32_t end,
                  uint64_t xmit_ns, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t rtt_us = (uint32_t)stk__us_since(now, xmit_ns);

    /* A retransmitted segment acked sooner than the minimum RTT after its
     * retransmission: the original was delivered, not this copy. */
    if ((flags & STK_RTX_EVER) && rtt_us < stk__min_rtt_us(x))
        return;
    x->rack_advanced = true;
    x->rack_rtt_us = rtt_us;
    if (sent_after(xmit_ns, x->rack_xmit_ns, end, x->rack_end_seq)) {
        x->rack_xmit_ns = xmit_ns;
        x->rack_end_seq = end;
    }
}

static uint32_t
reo_wnd_us(const struct stk_tcp_ext *x)
{
    uint32_t w, srtt = x->srtt_us >> 3;

    if (x->reord_seen == 0) {
        /* No reordering seen: as aggressive as the dupack threshold. */
        if (x->ca_state >= STK_CA_RECOVERY)
            return 0;
        if (x->sacked_out >= x->reordering)
            return 0;
    }
    w = (stk__min_rtt_us(x) >> 2) * x->reo_wnd_steps;
    return w < srtt ? w : srtt;
}

STK_COLD void
stk__mark_lost(struct tcp_pcb *pcb, struct stk_rtx_ent *e)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (e->flags & STK_RTX_RETRANS) {
        /* The retransmission was lost too: send it again. */
        e->flags &= (uint8_t)~STK_RTX_RETRANS;
        x->retrans_out--;
        x->lost++;
        BASE_STAT_INC(tcp_lost_retrans);
    } else if (!(e->flags & STK_RTX_LOST)) {
        x->lost++;
    }
    if (!(e->flags & STK_RTX_LOST)) {
        e->flags |= STK_RTX_LOST;
        x->lost_out++;
    }
}

STK_COLD void
stk__rack_detect(struct tcp_pcb *pcb, uint64_t now, uint32_t *reo_us)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t n = stk__rtx_count(x), wnd = reo_wnd_us(x);

    *reo_us = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct stk_rtx_ent *e = stk__rtx_at(x, i);
        int64_t remaining;

        if (e->flags & STK_RTX_SACKED)
            continue;
        /* Marked lost and not resent yet: nothing to decide. */
        if ((e->flags & (STK_RTX_LOST | STK_RTX_RETRANS)) == STK_RTX_LOST)
            continue;
        if (!sent_after(x->rack_xmit_ns, e->xmit_ns, x->rack_end_seq, e->end)) {
            /* Sent after the latest delivered segment. Originals go out
             * in sequence order, so every later one was too. */
            if (!(e->flags & STK_RTX_EVER))
                break;
            continue;
        }
        remaining = (int64_t)x->rack_rtt_us + wnd -
                    (int64_t)stk__us_since(now, e->xmit_ns);
        if (remaining <= 0)
            stk__mark_lost(pcb, e);
        else if ((uint32_t)remaining > *reo_us)
            *reo_us = (uint32_t)remaining;
    }
}

void
stk__rack_update_reo_wnd(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_ack *a = &stk__ack;

    if (a->prior_delivered == 0)
        return;
    /* One widening per round trip: a D-SACK from before the last one
     * does not count. */
    if (TCP_SEQ_LT(a->prior_delivered, x->rack_last_delivered))
        x->rack_dsack_seen = false;
    if (x->rack_dsack_seen) {
        if (x->reo_wnd_steps < 0xff)
            x->reo_wnd_steps++;
        x->rack_dsack_seen = false;
        x->rack_last_delivered = x->delivered;
        x->reo_wnd_persist = STK_TCP_RACK_RECOVERY_THRESH;
    } else if (x->reo_wnd_persist == 0) {
        x->reo_wnd_steps = 1;
    }
}

STK_COLD void
stk__newreno_mark_lost(struct tcp_pcb *pcb, bool advanced)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_rtx_ent *e;

    if (stk__rtx_count(x) == 0)
        return;
    if (!((x->ca_state < STK_CA_RECOVERY && x->sacked_out >= x->reordering) ||
          (x->ca_state == STK_CA_RECOVERY && advanced)))
        return;
    e = stk__rtx_at(x, 0);
    if (!(e->flags & STK_RTX_LOST))
        stk__mark_lost(pcb, e);
}

/* ---- tail loss probe ----------------------------------------------------*/

bool
stk__tlp_schedule(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint64_t pto_us, rto_left_us;
    const struct stk_rtx_ent *head;

    if (x->packets_out == 0 || !(pcb->flags & TF_SACK) ||
        (x->ca_state != STK_CA_OPEN && x->ca_state != STK_CA_CWR) ||
        x->tlp_high_seq != 0 || pcb->state < ESTABLISHED)
        return false;
    if (x->srtt_us != 0) {
        pto_us = x->srtt_us >> 2; /* 2 * srtt */
        /* One segment out: the peer may be delaying its ACK. */
        pto_us +=
            x->packets_out == 1 ? stk__tcp_rto_min_us : STK_TCP_TIMEOUT_MIN_US;
    } else {
        pto_us = STK_TCP_RTO_INIT_US;
    }
    /* Never later than the RTO would fire. */
    head = stk__rtx_at(x, 0);
    rto_left_us = head->xmit_ns / 1000u + x->rto_us > now / 1000u
                      ? head->xmit_ns / 1000u + x->rto_us - now / 1000u
                      : 1;
    if (rto_left_us < pto_us)
        pto_us = rto_left_us;
    stk__timer_arm(pcb, STK_T_TLP, now + pto_us * 1000u);
    return true;
}

STK_COLD void
stk__tlp_fire(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t before = x->packets_out, n;

    if (x->tlp_high_seq != 0 || x->packets_out == 0)
        goto rearm; /* one probe per tail loss episode */
    x->tlp_retrans = false;
    /* New data, if the receiver's window takes a segment of it. */
    if (pcb->unsent != NULL && lwip_ntohl(pcb->unsent->tcphdr->seqno) -
                                       pcb->lastack + pcb->unsent->len <=
                                   pcb->snd_wnd) {
        x->tlp_send_new = true;
        tcp_output(pcb);
        x->tlp_send_new = false;
        if (x->packets_out > before)
            goto sent;
    }
    n = stk__rtx_count(x);
    if (n == 0 || !stk__retransmit(pcb, n - 1, now))
        goto rearm;
    x->tlp_retrans = true;
sent:
    x->tlp_high_seq = pcb->snd_nxt;
    BASE_STAT_INC(tcp_tlp);
    stk__timer_cancel(pcb);
rearm:
    stk__rearm_rto(pcb, now);
}

STK_COLD void
stk__tlp_ack(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_ack *a = &stk__ack;
    uint32_t ack = pcb->lastack;

    if (TCP_SEQ_LT(ack, x->tlp_high_seq))
        return;
    if (!x->tlp_retrans || a->dsack_tlp) {
        /* New data was the probe, or the original and the probe both
         * arrived: nothing was lost. */
        x->tlp_high_seq = 0;
    } else if (TCP_SEQ_GT(ack, x->tlp_high_seq)) {
        /* The probe repaired a loss: reduce cwnd as a recovery would. */
        stk__enter_cwr(pcb);
        BASE_STAT_INC(tcp_tlp_recovered);
    } else if (!a->advanced && !a->sacked_new && a->dupack) {
        x->tlp_high_seq = 0;
    }
}
