/*
 * Round-trip time and the retransmission timeout, as Linux computes them
 * (tcp_rtt_estimator, tcp_set_rto): RFC 6298's smoothed RTT and variance
 * in microseconds, with Linux's two refinements: the variance does not
 * grow when the RTT falls, and its floor per window is the minimum RTO,
 * so RTO = SRTT + max(4 * RTTVAR, RTO_min), at most 120 s. RTO_min is
 * 200 ms (Linux's TCP_RTO_MIN) unless ACCEL_TCP_RTO_MIN_MS says otherwise.
 * Samples come from tcp_ack.c (Karn's rule: never from a retransmitted
 * segment, except through the timestamp echo, which says which copy was
 * acked).
 *
 * The minimum RTT over the last 5 minutes (minmax.c, Linux's tcp_min_rtt)
 * feeds RACK's reordering window and the delivery rate's sanity check.
 */
#include "stk_priv.h"
#include "tcp_snd.h"

uint32_t
stk__min_rtt_us(const struct stk_tcp_ext *x)
{
    return x->min_rtt.s[0].v;
}

uint32_t
stk__rto_base_us(const struct stk_tcp_ext *x)
{
    uint64_t rto;

    if (x->srtt_us == 0)
        return STK_TCP_RTO_INIT_US;
    rto = (uint64_t)(x->srtt_us >> 3) + x->rttvar_us;
    return rto > STK_TCP_RTO_MAX_US ? STK_TCP_RTO_MAX_US : (uint32_t)rto;
}

void
stk__rtt_sample(struct tcp_pcb *pcb, uint32_t rtt_us, uint32_t ca_rtt_us,
                uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    int64_t m = rtt_us ? rtt_us : 1;
    uint32_t srtt = x->srtt_us, rto_min = stk__tcp_rto_min_us;

    /* A zero sample says the clock was stale, not that the path is
     * instantaneous: it would pin the minimum (and RACK's reordering
     * window) at nothing for minutes. Linux files it as one jiffy. */
    if (ca_rtt_us != 0)
        stk__minmax_running_min(&x->min_rtt, STK_TCP_MIN_RTT_WLEN_MS,
                                (uint32_t)(now / 1000000u), ca_rtt_us);
    if (srtt != 0) {
        m -= srtt >> 3; /* the error of the estimate */
        srtt = (uint32_t)((int64_t)srtt + m);
        if (m < 0) {
            m = -m;
            m -= x->mdev_us >> 2;
            /* A falling RTT moves the variance with a finer gain (one of
             * Eifel's findings). */
            if (m > 0)
                m >>= 3;
        } else {
            m -= x->mdev_us >> 2;
        }
        x->mdev_us = (uint32_t)((int64_t)x->mdev_us + m);
        if (x->mdev_us > x->mdev_max_us) {
            x->mdev_max_us = x->mdev_us;
            if (x->mdev_max_us > x->rttvar_us)
                x->rttvar_us = x->mdev_max_us;
        }
        if (TCP_SEQ_GT(pcb->lastack, x->rtt_seq)) {
            if (x->mdev_max_us < x->rttvar_us)
                x->rttvar_us -= (x->rttvar_us - x->mdev_max_us) >> 2;
            x->rtt_seq = pcb->snd_nxt;
            x->mdev_max_us = rto_min;
        }
    } else {
        srtt = (uint32_t)m << 3;
        x->mdev_us = (uint32_t)m << 1;
        x->rttvar_us = x->mdev_us > rto_min ? x->mdev_us : rto_min;
        x->mdev_max_us = x->rttvar_us;
        x->rtt_seq = pcb->snd_nxt;
    }
    x->srtt_us = srtt ? srtt : 1;
    x->rto_us = stk__rto_base_us(x);
    x->backoff = 0;
}
