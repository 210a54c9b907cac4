/*
 * Delivery rate samples, as Linux's tcp_rate.c takes them (the IETF draft
 * "Delivery Rate Estimation", Cheng et al.): every transmission records
 * how much had been delivered and when; the ACK that delivers it (the
 * newest such segment, by send time) gives a sample: the packets
 * delivered since, over the longer of the send phase and the ACK phase of
 * that interval. BBR builds its bandwidth model from them; TCP_INFO shows
 * the latest.
 *
 * A sample is app-limited when the application had nothing more to send
 * while it was being taken (the pipe was not full): its rate measures the
 * application, not the path, and BBR does not let it lower the estimate.
 */
#include "stk_priv.h"
#include "tcp_snd.h"

static uint32_t
us_delta(uint64_t later_ns, uint64_t earlier_ns)
{
    uint64_t us = stk__us_since(later_ns, earlier_ns);

    return us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

void
stk__rate_sent(struct tcp_pcb *pcb, struct stk_rtx_ent *e)
{
    struct stk_tcp_ext *x = &pcb->acc;

    /* Nothing in flight: the next ACK's interval starts now (not at an
     * old delivery, which would stretch it over the idle time). */
    if (x->packets_out == 0)
        x->first_tx_ns = x->delivered_ns = e->xmit_ns;
    e->tx_delivered = x->delivered;
    e->tx_first_us = us_delta(e->xmit_ns, x->first_tx_ns);
    e->tx_delivered_us = us_delta(e->xmit_ns, x->delivered_ns);
    if (x->app_limited != 0)
        e->flags |= STK_RTX_APP_LIMITED;
    else
        e->flags &= (uint8_t)~STK_RTX_APP_LIMITED;
    e->flags &= (uint8_t)~STK_RTX_RATE_DONE;
}

void
stk__rate_delivered(struct tcp_pcb *pcb, struct stk_rtx_ent *e)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_rate_sample *rs = &stk__ack.rs;

    if (e->flags & STK_RTX_RATE_DONE)
        return;
    /* The newest segment delivered by this ACK (by send time, then
     * sequence) gives the sample's starting point. */
    if (!rs->has_prior || e->xmit_ns > x->first_tx_ns ||
        (e->xmit_ns == x->first_tx_ns &&
         TCP_SEQ_GT(e->end, rs->last_end_seq))) {
        rs->has_prior = true;
        rs->prior_delivered = e->tx_delivered;
        rs->prior_ns = e->xmit_ns - (uint64_t)e->tx_delivered_us * 1000u;
        rs->is_app_limited = (e->flags & STK_RTX_APP_LIMITED) != 0;
        rs->is_retrans = (e->flags & STK_RTX_EVER) != 0;
        rs->last_end_seq = e->end;
        x->first_tx_ns = e->xmit_ns;
        rs->interval_us = e->tx_first_us; /* the send phase */
    }
    /* SACKed now, acked later: counted once. */
    if (e->flags & STK_RTX_SACKED)
        e->flags |= STK_RTX_RATE_DONE;
}

void
stk__rate_gen(struct tcp_pcb *pcb, uint32_t delivered, uint32_t lost,
              uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_rate_sample *rs = &stk__ack.rs;
    int64_t snd_us, ack_us;

    /* The app-limited bubble is acked and gone. */
    if (x->app_limited != 0 && TCP_SEQ_GT(x->delivered, x->app_limited))
        x->app_limited = 0;
    if (delivered != 0)
        x->delivered_ns = now;
    rs->acked_sacked = delivered;
    rs->losses = lost;
    if (!rs->has_prior) {
        rs->delivered = -1;
        rs->interval_us = -1;
        return;
    }
    rs->delivered = (int32_t)(x->delivered - rs->prior_delivered);
    /* Sending and acking are two phases of the same window; ACK
     * compression can make either the longer: take the longer. */
    snd_us = rs->interval_us;
    ack_us = (int64_t)stk__us_since(now, rs->prior_ns);
    rs->interval_us = snd_us > ack_us ? snd_us : ack_us;
    /* Shorter than the path's minimum RTT: a sample from a spurious
     * retransmission, or otherwise too short to mean anything. */
    if (rs->interval_us < (int64_t)stk__min_rtt_us(x)) {
        rs->interval_us = -1;
        return;
    }
    /* TCP_INFO's delivery rate: the latest sample that is not
     * app-limited, or one faster than the one kept. */
    if (!rs->is_app_limited ||
        (uint64_t)rs->delivered * x->rate_interval_us >=
            (uint64_t)x->rate_delivered * (uint64_t)rs->interval_us) {
        x->rate_delivered = (uint32_t)rs->delivered;
        x->rate_interval_us = (uint32_t)rs->interval_us;
        x->rate_app_limited = rs->is_app_limited;
    }
}

/* Linux's tcp_rate_check_app_limited, when the application writes: less
 * than a segment waits to go, cwnd is not what holds it back, nothing lost
 * waits for its retransmission. The samples until what is in flight now
 * is delivered measure the application. */
void
stk__tcp_check_app_limited(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t in_flight;

    if (!x->started)
        return;
    in_flight = stk__in_flight(x);
    if (pcb->snd_lbb - pcb->snd_nxt < pcb->mss && in_flight < x->cwnd &&
        x->lost_out <= x->retrans_out)
        x->app_limited =
            x->delivered + in_flight ? x->delivered + in_flight : 1;
}
