/*
 * The sender's state machine, as Linux's tcp_fastretrans_alert and its
 * helpers run it, over the scoreboard of tcp_rtx.c:
 *
 *   open      nothing in doubt; cwnd grows (slow start, then the
 *             congestion control's avoidance)
 *   disorder  SACKs or dupacks arrived, nothing is lost yet; new data
 *             still goes out as SACKed segments leave the pipe, which is
 *             Limited Transmit (RFC 3042)
 *   recovery  a loss was found (RACK, or NewReno's dupacks): ssthresh is
 *             set by the congestion control, the lost segments are
 *             retransmitted and cwnd follows Proportional Rate Reduction
 *             (RFC 6937) towards ssthresh; it ends when everything that
 *             was outstanding at its start is acknowledged
 *   loss      after a retransmission timeout: every segment not SACKed is
 *             lost, cwnd restarts at one segment
 *   CWR       a loss repaired without recovery (a tail loss probe):
 *             cwnd is reduced once
 *
 * A reduction that proves unnecessary is undone (RFC 3522 Eifel
 * detection with timestamps: the ACK echoes a timestamp older than the
 * first retransmission; or every retransmission was D-SACKed).
 *
 * tcp_output asks here first what to retransmit (stk_tcp_output_begin)
 * and then, segment by segment, whether new data may go
 * (stk_tcp_may_send): the pipe (RFC 6675: in flight = sent - SACKed -
 * lost + retransmitted) must stay below cwnd.
 */
#include "lwip/sys.h"

#include "log.h"
#include "stats.h"
#include "stk_hooks.h"
#include "stk_priv.h"
#include "tcp_snd.h"

/* Set while stk__retransmit sends, so stk_tcp_seg_sent knows the send is
 * ours (and already accounted). */
static bool in_rexmit;

static const struct stk_cc_ops *
cc_of(const struct stk_tcp_ext *x)
{
    return stk__cc[x->cc < STK_CC_COUNT ? x->cc : 0];
}

static bool
in_cwnd_reduction(const struct stk_tcp_ext *x)
{
    return x->ca_state == STK_CA_CWR || x->ca_state == STK_CA_RECOVERY;
}

static void
set_state(struct tcp_pcb *pcb, uint8_t st)
{
    if (st == STK_CA_LOSS)
        cc_of(&pcb->acc)->on_loss(pcb);
    pcb->acc.ca_state = st;
}

void
stk__snd_start(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;

    (void)now;
    if (x->started)
        return;
    x->started = true;
    if (!x->cc_chosen)
        x->cc = stk__tcp_cc_default;
    x->cwnd = STK_TCP_INIT_CWND_SEGS;
    x->ssthresh = STK_TCP_INFINITE_SSTHRESH;
    x->ca_state = STK_CA_OPEN;
    x->reordering = STK_TCP_REORDERING;
    x->reo_wnd_steps = 1;
    x->fack = pcb->lastack;
    x->high_seq = pcb->snd_nxt;
    stk__minmax_reset(&x->min_rtt, 0, 0xffffffffu);
    if (x->rto_us == 0)
        x->rto_us = STK_TCP_RTO_INIT_US;
    cc_of(x)->init(pcb);
    /* lwIP's own window check only keeps the receiver's window. */
    pcb->cwnd = STK_LWIP_CWND_OPEN;
}

/* ---- helpers of the state machine (Linux's names in comments) -----------*/

static uint32_t
current_ssthresh(const struct stk_tcp_ext *x) /* tcp_current_ssthresh */
{
    uint32_t c = (x->cwnd >> 1) + (x->cwnd >> 2);

    if (in_cwnd_reduction(x))
        return x->ssthresh;
    return x->ssthresh > c ? x->ssthresh : c;
}

static void
init_undo(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    x->undo_valid = true;
    x->undo_marker = pcb->lastack;
    /* Retransmissions still in flight may yet be D-SACKed. */
    x->undo_retrans = x->retrans_out ? (int32_t)x->retrans_out : -1;
}

static bool
any_retrans_done(struct stk_tcp_ext *x)
{
    return x->retrans_out != 0 ||
           (stk__rtx_count(x) > 0 && (stk__rtx_at(x, 0)->flags & STK_RTX_EVER));
}

/* The ACK echoes a timestamp from before the first retransmission: the
 * original was delivered (Eifel detection, RFC 3522). */
static bool
packet_delayed(const struct stk_tcp_ext *x)
{
    const struct stk_ack *a = &stk__ack;

    return x->retrans_stamp != 0 && a->ts && a->tsecr != 0 &&
           TCP_SEQ_LT(a->tsecr, x->retrans_stamp);
}

static bool
may_undo(const struct stk_tcp_ext *x)
{
    return x->undo_valid && (x->undo_retrans == 0 || packet_delayed(x));
}

STK_COLD static void
undo_cwnd_reduction(struct tcp_pcb *pcb, bool unmark_loss)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (unmark_loss) {
        uint32_t n = stk__rtx_count(x);

        for (uint32_t i = 0; i < n; i++)
            stk__rtx_at(x, i)->flags &= (uint8_t)~STK_RTX_LOST;
        x->lost_out = 0;
    }
    if (x->prior_ssthresh != 0) {
        x->cwnd = cc_of(x)->undo_cwnd(pcb);
        if (x->prior_ssthresh > x->ssthresh)
            x->ssthresh = x->prior_ssthresh;
    }
    x->undo_valid = false;
    x->rack_advanced = true; /* look at the losses again */
}

static void
try_keep_open(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint8_t st = STK_CA_OPEN;

    if (x->sacked_out + x->lost_out != 0 || any_retrans_done(x))
        st = STK_CA_DISORDER;
    if (x->ca_state != st) {
        set_state(pcb, st);
        x->high_seq = pcb->snd_nxt;
    }
}

static void
try_to_open(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (!any_retrans_done(x))
        x->retrans_stamp = 0;
    if (x->ca_state != STK_CA_CWR)
        try_keep_open(pcb);
}

static void
init_cwnd_reduction(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    x->high_seq = pcb->snd_nxt;
    x->tlp_high_seq = 0;
    x->cwnd_cnt = 0;
    x->prior_cwnd = x->cwnd;
    x->prr_delivered = 0;
    x->prr_out = 0;
    x->ssthresh = cc_of(x)->ssthresh(pcb);
}

static void
end_cwnd_reduction(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (cc_of(x)->cong_control != NULL)
        return; /* it sets cwnd itself */
    if (x->ssthresh < STK_TCP_INFINITE_SSTHRESH &&
        (x->ca_state == STK_CA_CWR || x->undo_valid))
        x->cwnd = x->ssthresh;
}

/* RFC 6937: cwnd follows what the peer received, proportionally while
 * the pipe is above ssthresh, then slow start back up to it. */
static void
cwnd_reduction(struct tcp_pcb *pcb, uint32_t newly_acked, uint32_t newly_lost,
               bool advanced)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t in_flight = stk__in_flight(x);
    int64_t delta = (int64_t)x->ssthresh - in_flight, sndcnt;

    if (newly_acked == 0 || x->prior_cwnd == 0)
        return;
    x->prr_delivered += newly_acked;
    if (delta < 0) {
        uint64_t dividend =
            (uint64_t)x->ssthresh * x->prr_delivered + x->prior_cwnd - 1;
        sndcnt = (int64_t)(dividend / x->prior_cwnd) - x->prr_out;
    } else {
        sndcnt = (int64_t)x->prr_delivered - x->prr_out;
        if (sndcnt < newly_acked)
            sndcnt = newly_acked;
        if (advanced && newly_lost == 0)
            sndcnt++;
        if (sndcnt > delta)
            sndcnt = delta;
    }
    /* The first ACK of a recovery always lets the retransmission go. */
    if (sndcnt < (x->prr_out ? 0 : 1))
        sndcnt = x->prr_out ? 0 : 1;
    x->cwnd = in_flight + (uint32_t)sndcnt;
}

STK_COLD void
stk__enter_recovery(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (pcb->flags & TF_SACK)
        BASE_STAT_INC(tcp_recovery_sack);
    else
        BASE_STAT_INC(tcp_recovery_reno);
    x->prior_ssthresh = 0;
    init_undo(pcb);
    if (!in_cwnd_reduction(x)) {
        x->prior_ssthresh = current_ssthresh(x);
        init_cwnd_reduction(pcb);
    }
    set_state(pcb, STK_CA_RECOVERY);
}

STK_COLD void
stk__enter_cwr(struct tcp_pcb *pcb)
{
    init_cwnd_reduction(pcb);
    set_state(pcb, STK_CA_CWR);
    end_cwnd_reduction(pcb);
    try_keep_open(pcb);
}

/* ---- undo -----------------------------------------------------------------*/

STK_COLD static bool
try_undo_recovery(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (may_undo(x)) {
        undo_cwnd_reduction(pcb, false);
        if (x->ca_state == STK_CA_LOSS)
            BASE_STAT_INC(tcp_undo_rto);
        else
            BASE_STAT_INC(tcp_undo_recovery);
    } else if (x->reo_wnd_persist != 0) {
        x->reo_wnd_persist--;
    }
    if (pcb->lastack == x->high_seq && !(pcb->flags & TF_SACK)) {
        /* NewReno holds the state until something above high_seq is
         * acknowledged (RFC 6582: no false fast retransmit). */
        if (!any_retrans_done(x))
            x->retrans_stamp = 0;
        return true;
    }
    set_state(pcb, STK_CA_OPEN);
    return false;
}

STK_COLD static bool
try_undo_dsack(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (x->undo_valid && x->undo_retrans == 0) {
        if (x->reo_wnd_persist < STK_TCP_RACK_RECOVERY_THRESH)
            x->reo_wnd_persist++;
        undo_cwnd_reduction(pcb, false);
        BASE_STAT_INC(tcp_undo_recovery);
        return true;
    }
    return false;
}

STK_COLD static bool
try_undo_partial(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (x->undo_valid && packet_delayed(x)) {
        /* The hole was filled by the delayed original, not the
         * retransmission: reordering, not loss. */
        x->reord_seen++;
        if (x->retrans_out != 0)
            return true;
        if (!any_retrans_done(x))
            x->retrans_stamp = 0;
        undo_cwnd_reduction(pcb, true);
        BASE_STAT_INC(tcp_undo_recovery);
        try_keep_open(pcb);
    }
    return false;
}

STK_COLD static bool
try_undo_loss(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (!may_undo(x))
        return false;
    undo_cwnd_reduction(pcb, true);
    BASE_STAT_INC(tcp_undo_rto);
    x->retransmits = 0;
    if (pcb->flags & TF_SACK)
        set_state(pcb, STK_CA_OPEN);
    return true;
}

/* ---- NewReno's emulated SACKs ---------------------------------------------*/

STK_COLD static void
add_reno_sack(struct tcp_pcb *pcb, bool dupack)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t prior = x->sacked_out, holes;

    if (!dupack)
        return;
    x->sacked_out++;
    /* More dupacks than holes can explain: reordering. */
    holes = x->lost_out > 1 ? x->lost_out : 1;
    if (holes > x->packets_out)
        holes = x->packets_out;
    if (x->sacked_out + holes > x->packets_out) {
        x->sacked_out = x->packets_out - holes;
        x->reordering = x->packets_out < STK_TCP_MAX_REORDERING
                            ? x->packets_out
                            : STK_TCP_MAX_REORDERING;
        x->reord_seen++;
    }
    if (x->sacked_out > prior)
        x->delivered += x->sacked_out - prior;
}

/* ---- what the ACK means ---------------------------------------------------*/

STK_COLD static void
identify_loss(struct tcp_pcb *pcb, uint64_t now, bool *set_timer,
              bool *lost_retrans)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t prior_retrans = x->retrans_out, reo_us;

    if (stk__rtx_count(x) == 0)
        return;
    if (!(pcb->flags & TF_SACK)) {
        stk__newreno_mark_lost(pcb, stk__ack.advanced);
        return;
    }
    if (!x->rack_advanced)
        return;
    x->rack_advanced = false;
    stk__rack_detect(pcb, now, &reo_us);
    if (reo_us != 0) {
        uint64_t t = (uint64_t)reo_us + STK_TCP_TIMEOUT_MIN_US;

        if (t > x->rto_us)
            t = x->rto_us;
        stk__timer_arm(pcb, STK_T_REO, now + t * 1000u);
        *set_timer = false;
    }
    if (prior_retrans > x->retrans_out)
        *lost_retrans = true;
}

STK_COLD static void
process_loss(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_ack *a = &stk__ack;

    if (a->advanced && try_undo_loss(pcb))
        return;
    if (!TCP_SEQ_LT(pcb->lastack, x->high_seq)) {
        try_undo_recovery(pcb);
        return;
    }
    if (!(pcb->flags & TF_SACK)) {
        if (TCP_SEQ_GT(pcb->snd_nxt, x->high_seq) && a->dupack)
            add_reno_sack(pcb, true);
        else if (a->advanced)
            x->sacked_out = 0;
    }
}

/* Linux's tcp_fastretrans_alert, for an ACK that is not plain forward
 * progress in the open state. */
STK_COLD static void
fastretrans_alert(struct tcp_pcb *pcb, uint64_t now, bool *set_timer)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_ack *a = &stk__ack;
    bool sack = (pcb->flags & TF_SACK) != 0, lost_retrans = false;

    if (x->packets_out == 0 && x->sacked_out != 0)
        x->sacked_out = 0;
    /* State exits: everything outstanding at its start is acked. */
    if (x->ca_state == STK_CA_OPEN) {
        x->retrans_stamp = 0;
    } else if (!TCP_SEQ_LT(pcb->lastack, x->high_seq)) {
        if (x->ca_state == STK_CA_CWR) {
            if (pcb->lastack != x->high_seq) {
                end_cwnd_reduction(pcb);
                set_state(pcb, STK_CA_OPEN);
            }
        } else if (x->ca_state == STK_CA_RECOVERY) {
            if (!sack)
                x->sacked_out = 0;
            if (try_undo_recovery(pcb))
                return;
            end_cwnd_reduction(pcb);
        }
    }
    switch (x->ca_state) {
    case STK_CA_RECOVERY:
        if (!a->advanced) {
            if (!sack)
                add_reno_sack(pcb, a->dupack);
        } else if (try_undo_partial(pcb)) {
            return;
        }
        if (try_undo_dsack(pcb))
            try_to_open(pcb);
        identify_loss(pcb, now, set_timer, &lost_retrans);
        if (x->ca_state != STK_CA_RECOVERY) {
            if (x->lost_out == 0)
                return;
            stk__enter_recovery(pcb);
        }
        return;
    case STK_CA_LOSS:
        process_loss(pcb);
        identify_loss(pcb, now, set_timer, &lost_retrans);
        if (!(x->ca_state == STK_CA_OPEN || lost_retrans))
            return;
        /* undone, or retransmissions lost: as in the other states */
        /* fallthrough */
    default:
        if (!sack) {
            if (a->advanced)
                x->sacked_out = 0;
            add_reno_sack(pcb, a->dupack);
        }
        if (x->ca_state <= STK_CA_DISORDER)
            try_undo_dsack(pcb);
        identify_loss(pcb, now, set_timer, &lost_retrans);
        if (x->lost_out == 0) {
            try_to_open(pcb);
            return;
        }
        stk__enter_recovery(pcb);
    }
}

static bool
cwnd_limited(const struct stk_tcp_ext *x)
{
    if (x->cwnd_limited)
        return true;
    /* In slow start, cwnd may grow to twice what was in flight. */
    return x->cwnd < x->ssthresh && x->cwnd < 2 * x->max_packets_out;
}

static void
cwnd_validate(struct tcp_pcb *pcb, bool limited)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (!TCP_SEQ_LT(pcb->lastack, x->max_packets_seq) || limited ||
        (!x->cwnd_limited && x->packets_out > x->max_packets_out)) {
        x->cwnd_limited = limited;
        x->max_packets_out = x->packets_out;
        x->max_packets_seq = pcb->snd_nxt;
    }
}

static void
cong_control(struct tcp_pcb *pcb, uint32_t newly_lost, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_ack *a = &stk__ack;
    uint32_t acked = x->delivered - a->prior_delivered;
    bool raise;

    stk__rate_gen(pcb, acked, newly_lost, now);
    if (cc_of(x)->cong_control != NULL) {
        cc_of(x)->cong_control(pcb, &a->rs, now);
        return;
    }
    if (in_cwnd_reduction(x)) {
        cwnd_reduction(pcb, acked, newly_lost, a->advanced);
        return;
    }
    /* Grow on forward progress only, unless reordering is high. */
    raise = x->reordering > STK_TCP_REORDERING ? a->advanced || a->sacked_new
                                               : a->advanced;
    if (raise && acked > 0 && cwnd_limited(x))
        cc_of(x)->cong_avoid(pcb, acked, now);
}

void
stk_tcp_ack_done(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_ack *a = &stk__ack;
    uint64_t now = stk__now_ns();
    uint32_t lost_before = x->lost;
    bool set_timer, dubious;

    if (!x->started)
        return;
    if (a->advanced) {
        x->retransmits = 0;
        x->rexmit_start_ns = 0;
    }
    if (x->tlp_high_seq != 0)
        stk__tlp_ack(pcb);
    stk__rack_update_reo_wnd(pcb);
    set_timer = a->advanced;
    dubious =
        a->dupack || a->sacked_new || a->dsack || x->ca_state != STK_CA_OPEN;
    if (dubious)
        fastretrans_alert(pcb, now, &set_timer);
    if (set_timer)
        stk__set_xmit_timer(pcb, now);
    cong_control(pcb, x->lost - lost_before, now);
}

/* ---- sending --------------------------------------------------------------*/

/* A segment's send time: the clock, but later than any earlier send of the
 * connection. The clock is read once per poll turn, and a turn may send
 * new data and then retransmit an older segment; RACK orders sends by
 * time, and a tie broken by sequence number would put that retransmission
 * before the new data it followed (and call it lost when the new data is
 * SACKed first). One nanosecond apart keeps the order they went out in. */
static uint64_t
xmit_stamp(struct stk_tcp_ext *x, uint64_t now)
{
    x->last_xmit_ns = now > x->last_xmit_ns ? now : x->last_xmit_ns + 1;
    return x->last_xmit_ns;
}

/* ---- pacing (BBR sets pacing_rate) ----------------------------------------
 * Linux's earliest-departure-time model: every segment moves the next
 * one's departure time on by its length at the pacing rate. Linux's
 * high-resolution timer sends each burst (~1 ms of data) when it is due;
 * the stack's timers tick in milliseconds, so a connection may run up to
 * one tick ahead of its schedule, and one held back goes at the next
 * tick. */
#define PACE_LEAD_NS 1000000u

static bool
pace_blocked(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (x->pacing_rate == 0 || x->wstamp_ns <= now + PACE_LEAD_NS)
        return false;
    stk__pace_wait(pcb);
    return true;
}

static void
pace_sent(struct stk_tcp_ext *x, uint32_t len, uint64_t now)
{
    if (x->pacing_rate == 0)
        return;
    if (x->wstamp_ns < now)
        x->wstamp_ns = now;
    x->wstamp_ns += (uint64_t)len * 1000000000u / x->pacing_rate;
}

STK_COLD bool
stk__retransmit(struct tcp_pcb *pcb, uint32_t i, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_rtx_ent *e = stk__rtx_at(x, i);
    err_t err;

    in_rexmit = true;
    err = tcp_rexmit_inplace(pcb, e->seg);
    in_rexmit = false;
    if (err != ERR_OK)
        return false;
    e->xmit_ns = xmit_stamp(x, now);
    stk__rate_sent(pcb, e);
    pace_sent(x, e->end - e->seq, now);
    if (!(e->flags & STK_RTX_RETRANS)) {
        e->flags |= STK_RTX_RETRANS;
        x->retrans_out++;
    }
    e->flags |= STK_RTX_EVER;
    if (x->retrans_stamp == 0)
        x->retrans_stamp = sys_now() ? sys_now() : 1; /* its TSval */
    if (x->undo_valid) {
        if (x->undo_retrans < 0)
            x->undo_retrans = 0;
        x->undo_retrans++;
    }
    if (in_cwnd_reduction(x))
        x->prr_out++;
    x->total_retrans++;
    BASE_STAT_INC(tcp_retrans_segs);
    return true;
}

STK_COLD void
stk__xmit_lost(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t n = stk__rtx_count(x);
    bool rearm = false;

    for (uint32_t i = 0; i < n; i++) {
        struct stk_rtx_ent *e;

        if (stk__in_flight(x) >= x->cwnd || x->retrans_out >= x->lost_out ||
            pace_blocked(pcb, now))
            break;
        e = stk__rtx_at(x, i);
        if (!(e->flags & STK_RTX_LOST) ||
            (e->flags & (STK_RTX_SACKED | STK_RTX_RETRANS)))
            continue;
        if (!stk__retransmit(pcb, i, now))
            break;
        if (x->ca_state == STK_CA_LOSS)
            BASE_STAT_INC(tcp_slowstart_retrans);
        else
            BASE_STAT_INC(tcp_fast_retrans);
        if (i == 0 && x->t_kind != STK_T_REO)
            rearm = true;
    }
    if (rearm)
        stk__timer_arm(pcb, STK_T_RTO, now + (uint64_t)x->rto_us * 1000u);
}

void
stk_tcp_output_begin(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    stk__tick_touch(pcb);
    if (x->started && x->lost_out > x->retrans_out && pcb->state >= ESTABLISHED)
        stk__xmit_lost(pcb, stk__now_ns());
}

/* RFC 5681 section 4.1 as Linux does it (tcp_slow_start_after_idle): after
 * an idle period longer than the RTO, cwnd falls back toward the initial
 * window, halving per RTO idle. */
STK_COLD static void
cwnd_restart(struct tcp_pcb *pcb, uint64_t idle_ns)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t restart = STK_TCP_INIT_CWND_SEGS, cwnd = x->cwnd;
    int64_t delta = (int64_t)(idle_ns / 1000u);

    x->ssthresh = current_ssthresh(x);
    if (restart > cwnd)
        restart = cwnd;
    while ((delta -= x->rto_us) > 0 && cwnd > restart)
        cwnd >>= 1;
    x->cwnd = cwnd > restart ? cwnd : restart;
}

/* TCP_CORK (and a write with MSG_MORE): the last segment queued, while
 * shorter than the MSS and without FIN, waits for more data, for the
 * cork's removal or a write without MSG_MORE, and at most CORK_MAX_NS
 * (Linux's 200 ms ceiling on TCP_CORK; the pacing list's tick looks
 * again). */
#define CORK_MAX_NS 200000000ull

static bool
cork_holds(struct tcp_pcb *pcb, const struct tcp_seg *seg)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint64_t now;

    if (seg->next != NULL || seg->len >= tcp_mss(pcb) ||
        (TCPH_FLAGS(seg->tcphdr) & TCP_FIN))
        return false;
    now = stk__now_ns();
    if (x->hold_ns == 0)
        x->hold_ns = now;
    if (now - x->hold_ns >= CORK_MAX_NS) {
        x->hold_ns = 0;
        return false;
    }
    stk__pace_wait(pcb);
    return true;
}

int
stk_tcp_may_send(struct tcp_pcb *pcb, struct tcp_seg *seg)
{
    struct stk_tcp_ext *x = &pcb->acc;

    /* Also before the sender's state starts (at the first ACK of data). */
    if ((x->corked || x->more) && pcb->state >= ESTABLISHED &&
        cork_holds(pcb, seg))
        return 0;
    if (!x->started || pcb->state < ESTABLISHED)
        return 1;
    if (x->tlp_send_new) {
        x->tlp_send_new = false; /* the probe: one segment past cwnd */
        return 1;
    }
    if (x->packets_out == 0 && x->last_send_ns != 0) {
        uint64_t now = stk__now_ns(),
                 idle = stk__ns_since(now, x->last_send_ns);

        if (cc_of(x)->tx_start != NULL)
            cc_of(x)->tx_start(pcb, idle);
        /* As Linux, not for an algorithm that sets cwnd itself. */
        if (idle / 1000u > x->rto_us && cc_of(x)->cong_control == NULL)
            cwnd_restart(pcb, idle);
        x->last_send_ns = now; /* once per idle period */
    }
    if (pace_blocked(pcb, stk__now_ns()))
        return 0;
    if (stk__in_flight(x) >= x->cwnd) {
        cwnd_validate(pcb, true);
        return 0;
    }
    return 1;
}

void
stk_tcp_seg_sent(struct tcp_pcb *pcb, struct tcp_seg *seg)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint64_t now = stk__now_ns();
    uint32_t seq = lwip_ntohl(seg->tcphdr->seqno), n;
    uint32_t end = seq + TCP_TCPLEN(seg);

    if (TCPH_FLAGS(seg->tcphdr) & TCP_SYN) {
        if (x->syn_xmit_ns != 0)
            x->syn_retrans = true;
        x->syn_xmit_ns = now;
        x->syn_out = true;
        if (x->rto_us == 0)
            x->rto_us = STK_TCP_RTO_INIT_US;
        if (x->t_when == 0)
            stk__timer_arm(pcb, STK_T_RTO, now + (uint64_t)x->rto_us * 1000u);
        return;
    }
    if (in_rexmit || end == seq)
        return;
    if (!x->started)
        stk__snd_start(pcb, now);
    n = stk__rtx_count(x);
    if (n != 0 && TCP_SEQ_LT(seq, stk__rtx_at(x, n - 1)->end))
        return; /* sent again by lwIP itself: already queued */
    if (!stk__rtx_push(x, seg, seq, end, xmit_stamp(x, now))) {
        /* Out of memory for the queue: the connection cannot recover
         * losses any more; lwIP ends it at its next tick (ETIMEDOUT). */
        BASE_ERR("tcp", "no memory for a retransmission queue entry: the "
                        "connection is ended (ETIMEDOUT); the process is out "
                        "of memory, free some or lower its load");
        pcb->nrtx = TCP_MAXRTX;
        stk__tick_touch(pcb);
        return;
    }
    stk__rate_sent(pcb, stk__rtx_at(x, n));
    pace_sent(x, end - seq, now);
    x->packets_out++;
    x->last_send_ns = now;
    if (in_cwnd_reduction(x))
        x->prr_out++;
    /* The probe, when it applies, takes the connection's one timer; else
     * the RTO runs from the first segment out (or again after a probe). */
    if (!stk__tlp_schedule(pcb, now) &&
        (x->packets_out == 1 || x->t_kind == STK_T_TLP || x->t_when == 0))
        stk__rearm_rto(pcb, now);
    cwnd_validate(pcb, stk__in_flight(x) >= x->cwnd);
}

/* ---- timers ---------------------------------------------------------------*/

void
stk__rearm_rto(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    int64_t rto = x->rto_us;

    if (x->packets_out == 0) {
        stk__timer_cancel(pcb);
        return;
    }
    /* After a probe or a reordering timer, the RTO counts from when the
     * oldest segment was sent. */
    if (x->t_kind == STK_T_REO || x->t_kind == STK_T_TLP) {
        uint64_t head = stk__rtx_at(x, 0)->xmit_ns;

        rto = (int64_t)((head + (uint64_t)x->rto_us * 1000u) / 1000u) -
              (int64_t)(now / 1000u);
        if (rto < 1)
            rto = 1;
    }
    stk__timer_arm(pcb, STK_T_RTO, now + (uint64_t)rto * 1000u);
}

void
stk__set_xmit_timer(struct tcp_pcb *pcb, uint64_t now)
{
    if (!stk__tlp_schedule(pcb, now))
        stk__rearm_rto(pcb, now);
}

/* Linux's tcp_model_timeout: how long retries timeouts take when the RTO
 * starts at base and doubles up to the maximum. */
STK_COLD static uint64_t
model_timeout_us(uint32_t retries, uint64_t base_us)
{
    uint32_t thresh = 0;

    while ((base_us << (thresh + 1)) <= STK_TCP_RTO_MAX_US)
        thresh++;
    if (retries <= thresh)
        return ((2ull << retries) - 1) * base_us;
    return ((2ull << thresh) - 1) * base_us +
           (uint64_t)(retries - thresh) * STK_TCP_RTO_MAX_US;
}

/* Every segment not SACKed is lost (those sent less than an RTT ago
 * excepted: their ACKs may still come). */
STK_COLD static void
timeout_mark_lost(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t n = stk__rtx_count(x);
    bool reneg = n > 0 && (stk__rtx_at(x, 0)->flags & STK_RTX_SACKED);

    if (reneg || !(pcb->flags & TF_SACK))
        x->sacked_out = 0; /* the peer dropped what it SACKed */
    for (uint32_t i = 0; i < n; i++) {
        struct stk_rtx_ent *e = stk__rtx_at(x, i);

        if (reneg) {
            e->flags &= (uint8_t)~STK_RTX_SACKED;
        } else if (e->flags & STK_RTX_SACKED) {
            continue;
        } else if (i > 0 && (int64_t)x->rack_rtt_us -
                                    (int64_t)stk__us_since(now, e->xmit_ns) >
                                0) {
            continue;
        }
        stk__mark_lost(pcb, e);
    }
}

STK_COLD static void
enter_loss(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;

    timeout_mark_lost(pcb, now);
    /* ssthresh once per window of data. */
    if (x->ca_state <= STK_CA_DISORDER ||
        !TCP_SEQ_GT(x->high_seq, pcb->lastack) ||
        (x->ca_state == STK_CA_LOSS && x->retransmits == 0)) {
        x->prior_ssthresh = current_ssthresh(x);
        x->prior_cwnd = x->cwnd;
        x->ssthresh = cc_of(x)->ssthresh(pcb);
        init_undo(pcb);
    }
    x->cwnd = stk__in_flight(x) + 1;
    x->cwnd_cnt = 0;
    if (x->ca_state <= STK_CA_DISORDER && x->sacked_out >= STK_TCP_REORDERING &&
        x->reordering > STK_TCP_REORDERING)
        x->reordering = STK_TCP_REORDERING;
    set_state(pcb, STK_CA_LOSS);
    x->high_seq = pcb->snd_nxt;
    x->tlp_high_seq = 0;
}

/* After a timeout the RTO doubles (up to 120 s) and runs again. */
STK_COLD static void
backoff(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;

    x->rto_us =
        x->rto_us * 2 < STK_TCP_RTO_MAX_US ? x->rto_us * 2 : STK_TCP_RTO_MAX_US;
    stk__timer_arm(pcb, STK_T_RTO, now + (uint64_t)x->rto_us * 1000u);
}

/* The handshake: SYN (SYN-SENT) or SYN-ACK (SYN-RCVD) again, as often as
 * Linux's tcp_syn_retries / tcp_synack_retries. */
STK_COLD static void
syn_timeout(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    bool active = pcb->state == SYN_SENT;

    if (x->retransmits >=
        (active ? STK_TCP_SYN_RETRIES : STK_TCP_SYNACK_RETRIES)) {
        /* tcp_slowtmr ends it at its next tick (ETIMEDOUT). */
        pcb->nrtx = active ? TCP_SYNMAXRTX : TCP_MAXRTX;
        stk__tick_touch(pcb);
        return;
    }
    x->retransmits++;
    if (tcp_rexmit_rto_prepare(pcb) == ERR_OK ||
        (pcb->unacked == NULL && pcb->unsent != NULL)) {
        tcp_rexmit_rto_commit(pcb);
        pcb->nrtx = 0; /* our count decides, not lwIP's */
    }
    backoff(pcb, now);
}

STK_COLD void
stk__rto_fire(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (pcb->state == SYN_SENT || pcb->state == SYN_RCVD) {
        syn_timeout(pcb, now);
        return;
    }
    if (!x->started || x->packets_out == 0)
        return;
    if (x->rexmit_start_ns == 0) {
        x->rexmit_start_ns = now;
    } else if (stk__us_since(now, x->rexmit_start_ns) >=
               model_timeout_us(pcb->callback_arg != NULL
                                    ? STK_TCP_RETRIES2
                                    : STK_TCP_ORPHAN_RETRIES,
                                200000u)) {
        /* tcp_retries2 (tcp_orphan_retries once the application closed
         * the socket): tcp_slowtmr ends it at its next tick
         * (ETIMEDOUT). */
        pcb->nrtx = TCP_MAXRTX;
        stk__tick_touch(pcb);
        BASE_STAT_INC(tcp_rto_abort);
        return;
    }
    BASE_DBG("tcp",
             "RTO %u:%u: state %u, %u out, %u sacked, %u lost, %u retrans, "
             "cwnd %u, srtt %u us, rto %u us",
             pcb->local_port, pcb->remote_port, x->ca_state, x->packets_out,
             x->sacked_out, x->lost_out, x->retrans_out, x->cwnd,
             x->srtt_us >> 3, x->rto_us);
    enter_loss(pcb, now);
    x->retransmits++;
    if (x->backoff < 0xff)
        x->backoff++;
    BASE_STAT_INC(tcp_rto);
    tcp_output(pcb); /* the oldest segment goes again (cwnd is 1) */
    backoff(pcb, now);
}

STK_COLD void
stk__reo_fire(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t prior = stk__in_flight(x), reo_us;

    if (!x->started)
        return;
    stk__rack_detect(pcb, now, &reo_us);
    if (stk__in_flight(x) != prior) {
        if (x->ca_state != STK_CA_RECOVERY) {
            stk__enter_recovery(pcb);
            cwnd_reduction(pcb, 1, 0, false);
        }
        tcp_output(pcb);
    }
    if (x->t_when == 0 || x->t_kind != STK_T_RTO)
        stk__rearm_rto(pcb, now);
}

/* ---- the pcb's life -------------------------------------------------------*/

void
stk_tcp_pcb_free(struct tcp_pcb *pcb)
{
    stk__timer_unlink(pcb);
    stk__pace_cancel(pcb);
    stk__tick_listed(pcb, false);
    stk__rtx_free(&pcb->acc);
    if (pcb->acc.steered)
        stk__steer_pcb(pcb, false);
}

STK_COLD void
stk__tcp_set_cc(struct tcp_pcb *pcb, int cc)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (cc < 0 || cc >= STK_CC_COUNT || (x->cc_chosen && x->cc == cc))
        return;
    x->cc = (uint8_t)cc;
    x->cc_chosen = true;
    x->pacing_rate = 0; /* the new algorithm paces if it wants to */
    if (x->started)
        cc_of(x)->init(pcb);
}

STK_COLD void
stk__tcp_ext_imported(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    /* Only idle connections move (nothing unacked, no timer): keep the
     * estimates, drop the other process's pointers. */
    x->q = NULL;
    x->t_next = x->t_prev = NULL;
    x->t_linked = false;
    x->t_when = 0;
    x->p_next = x->p_prev = NULL;
    x->p_linked = false;
    x->k_next = x->k_prev = x->ka_next = x->ka_prev = NULL;
    x->k_linked = x->ka_linked = x->k_active = false;
    x->packets_out = x->sacked_out = x->lost_out = x->retrans_out = 0;
}

STK_COLD void
stk__tcp_pcb_listed(struct tcp_pcb *pcb, bool active)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (!active) {
        stk__timer_unlink(pcb);
        stk__pace_cancel(pcb);
        stk__tick_listed(pcb, false);
        return;
    }
    stk__tick_listed(pcb, true);
    /* Back on the active list (thawed after fork): the timer again. */
    if (x->started && x->packets_out > 0 && x->t_when == 0)
        stk__timer_arm(pcb, STK_T_RTO,
                       stk__now_ns() + (uint64_t)x->rto_us * 1000u);
}
