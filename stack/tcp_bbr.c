/*
 * BBR congestion control, version 1, as Linux's tcp_bbr.c runs it
 * (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue
 * 2016; draft-cardwell-iccrg-bbr-congestion-control-00).
 *
 * BBR models the path instead of reacting to loss: the bottleneck
 * bandwidth (the highest delivery rate of the last 10 round trips,
 * tcp_rate.c's samples) and the round-trip propagation delay (the lowest
 * RTT of the last 10 s). It paces at about that bandwidth and keeps about
 * two bandwidth-delay products in flight, so random loss does not shrink
 * its window as it shrinks Reno's and CUBIC's. Its phases:
 *
 *   STARTUP    pacing and cwnd gain 2.89: doubles the rate each round
 *              until the bandwidth stops growing by 25 % for 3 rounds
 *   DRAIN      pacing gain 1/2.89: empties the queue STARTUP built
 *   PROBE_BW   cycles the pacing gain through 1.25, 0.75 and six rounds
 *              of 1 (probe for more, drain what the probe queued, cruise);
 *              cwnd gain 2
 *   PROBE_RTT  when the minimum RTT is 10 s old: 4 packets in flight for
 *              200 ms and a round trip, to see the empty-queue RTT again
 *
 * In loss recovery cwnd follows packet conservation for a round, then the
 * model again; an RTO restarts it at one packet above what is in flight.
 * A long-term rate, measured over intervals with 20 % loss or more, is
 * used instead of the model when it is steady (a token-bucket policer).
 * Unlike Linux, the pacing rate is enforced with 1 ms of burst at most
 * (the stack's timers tick in milliseconds; tcp_recovery.c).
 */
#include <string.h>

#include "lwip/sys.h"

#include "stk_priv.h"
#include "tcp_snd.h"

#define BW_SCALE 24
#define BW_UNIT (1ull << BW_SCALE)
#define BBR_SCALE 8
#define BBR_UNIT (1u << BBR_SCALE)

enum { BBR_STARTUP, BBR_DRAIN, BBR_PROBE_BW, BBR_PROBE_RTT };

#define CYCLE_LEN 8
#define BW_RTTS (CYCLE_LEN + 2)                   /* bw filter window, rounds */
#define MIN_RTT_WIN_NS (10ull * 1000000000u)      /* min RTT filter window */
#define PROBE_RTT_NS (200ull * 1000000u)          /* time in PROBE_RTT */
#define HIGH_GAIN (BBR_UNIT * 2885u / 1000u + 1u) /* 2/ln(2) */
#define DRAIN_GAIN (BBR_UNIT * 1000u / 2885u)
#define CWND_GAIN (BBR_UNIT * 2u)
#define CYCLE_RAND 7u
#define CWND_MIN_TARGET 4u
#define FULL_BW_THRESH (BBR_UNIT * 5u / 4u)
#define FULL_BW_CNT 3u
#define LT_INTVL_MIN_RTTS 4u
#define LT_LOSS_THRESH 50u          /* 50/256: 20 % lost */
#define LT_BW_RATIO (BBR_UNIT / 8u) /* two intervals within 1/8 */
#define LT_BW_DIFF (4000u / 8u)     /* ... or within 4 kbit/s */
#define LT_BW_MAX_RTTS 48u
#define EXTRA_ACKED_GAIN BBR_UNIT
#define EXTRA_ACKED_WIN_RTTS 5u
#define EXTRA_ACKED_MAX_US (100u * 1000u)
#define ACK_EPOCH_RESET_THRESH (1u << 20)
#define PACING_MARGIN_PERCENT 1u
#define MIN_TSO_RATE 1200000u          /* bit/s */
#define PACING_SHIFT 10u               /* ~1 ms of data per burst */
#define GSO_BYTES (65536u - 1u - 320u) /* Linux's TSO burst ceiling */

static const uint16_t pacing_gain[CYCLE_LEN] = {
    BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT,
    BBR_UNIT,         BBR_UNIT,         BBR_UNIT, BBR_UNIT,
};

static struct stk_bbr *
bbr_of(struct tcp_pcb *pcb)
{
    return &pcb->acc.bbr;
}

static uint32_t
mss_of(const struct tcp_pcb *pcb)
{
    return pcb->mss ? pcb->mss : 536u;
}

static bool
full_bw_reached(struct tcp_pcb *pcb)
{
    return bbr_of(pcb)->full_bw_reached;
}

static uint32_t
max_bw(struct tcp_pcb *pcb)
{
    return bbr_of(pcb)->bw.s[0].v;
}

/* The bandwidth the model uses: the long-term (policed) rate when it
 * applies, else the windowed maximum. */
static uint32_t
bw_of(struct tcp_pcb *pcb)
{
    struct stk_bbr *b = bbr_of(pcb);

    return b->lt_use_bw ? b->lt_bw : max_bw(pcb);
}

/* bw (packets/us << 24) x gain -> bytes per second, less the margin. */
static uint64_t
rate_bytes_per_sec(struct tcp_pcb *pcb, uint64_t rate, uint32_t gain)
{
    rate *= mss_of(pcb);
    rate *= gain;
    rate >>= BBR_SCALE;
    rate *= 1000000u / 100u * (100u - PACING_MARGIN_PERCENT);
    return rate >> BW_SCALE;
}

static uint64_t
bw_to_pacing_rate(struct tcp_pcb *pcb, uint32_t bw, uint32_t gain)
{
    return rate_bytes_per_sec(pcb, bw, gain);
}

/* Before any bandwidth sample: cwnd over the smoothed RTT, at STARTUP's
 * gain. */
static void
init_pacing_rate_from_rtt(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    uint64_t bw;
    uint32_t rtt_us;

    if (x->srtt_us != 0) {
        rtt_us = x->srtt_us >> 3 ? x->srtt_us >> 3 : 1;
        b->has_seen_rtt = true;
    } else {
        rtt_us = 1000u;
    }
    bw = (uint64_t)x->cwnd * BW_UNIT / rtt_us;
    x->pacing_rate = bw_to_pacing_rate(pcb, (uint32_t)bw, HIGH_GAIN);
}

static void
set_pacing_rate(struct tcp_pcb *pcb, uint32_t bw, uint32_t gain)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    uint64_t rate = bw_to_pacing_rate(pcb, bw, gain);

    if (!b->has_seen_rtt && x->srtt_us != 0)
        init_pacing_rate_from_rtt(pcb);
    /* Never slower than the initial rate before the pipe is full. */
    if (full_bw_reached(pcb) || rate > x->pacing_rate)
        x->pacing_rate = rate;
}

/* Segments one burst takes at the pacing rate (Linux's TSO autosizing:
 * ~1 ms of data, at most one 64 KB burst, at least 2 above 1.2 Mbit/s). */
static uint32_t
tso_segs_goal(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint64_t bytes = x->pacing_rate >> PACING_SHIFT;
    uint32_t min_segs = x->pacing_rate < (MIN_TSO_RATE >> 3) ? 1u : 2u;
    uint32_t segs;

    if (bytes > GSO_BYTES)
        bytes = GSO_BYTES;
    segs = (uint32_t)(bytes / mss_of(pcb));
    if (segs < min_segs)
        segs = min_segs;
    return segs < 0x7fu ? segs : 0x7fu;
}

static void
save_cwnd(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);

    if (b->prev_ca_state < STK_CA_RECOVERY && b->mode != BBR_PROBE_RTT)
        b->prior_cwnd = x->cwnd;
    else if (x->cwnd > b->prior_cwnd)
        b->prior_cwnd = x->cwnd;
}

/* The bandwidth-delay product at gain, in packets. */
static uint32_t
bdp(struct tcp_pcb *pcb, uint32_t bw, uint32_t gain)
{
    struct stk_bbr *b = bbr_of(pcb);
    uint64_t w;

    if (b->min_rtt_us == UINT32_MAX)
        return STK_TCP_INIT_CWND_SEGS; /* no RTT yet */
    w = (uint64_t)bw * b->min_rtt_us;
    return (uint32_t)((((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT);
}

/* Room for the bursts the sender and the receiver's delayed ACKs make,
 * and an even cwnd; PROBE_BW's probing phase gets 2 more. */
static uint32_t
quantization_budget(struct tcp_pcb *pcb, uint32_t cwnd)
{
    struct stk_bbr *b = bbr_of(pcb);

    cwnd += 3u * tso_segs_goal(pcb);
    cwnd = (cwnd + 1u) & ~1u;
    if (b->mode == BBR_PROBE_BW && b->cycle_idx == 0)
        cwnd += 2u;
    return cwnd;
}

static uint32_t
inflight(struct tcp_pcb *pcb, uint32_t bw, uint32_t gain)
{
    return quantization_budget(pcb, bdp(pcb, bw, gain));
}

/* What will be in the network when the next paced segment leaves. */
static uint32_t
packets_in_net_at_edt(struct tcp_pcb *pcb, uint32_t inflight_now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    uint64_t now = stk__now_ns(), edt = x->wstamp_ns > now ? x->wstamp_ns : now;
    uint64_t interval_us = (edt - now) / 1000u;
    uint64_t delivered = (uint64_t)bw_of(pcb) * interval_us >> BW_SCALE;
    uint64_t at_edt = inflight_now;

    if (b->pacing_gain > BBR_UNIT)
        at_edt += tso_segs_goal(pcb);
    return delivered >= at_edt ? 0 : (uint32_t)(at_edt - delivered);
}

/* ---- ACK aggregation -----------------------------------------------------*/

static uint32_t
ack_aggregation_cwnd(struct tcp_pcb *pcb)
{
    struct stk_bbr *b = bbr_of(pcb);
    uint64_t aggr = 0, max_aggr;

    if (full_bw_reached(pcb)) {
        uint32_t e = b->extra_acked[0] > b->extra_acked[1] ? b->extra_acked[0]
                                                           : b->extra_acked[1];

        max_aggr = (uint64_t)bw_of(pcb) * EXTRA_ACKED_MAX_US / BW_UNIT;
        aggr = ((uint64_t)EXTRA_ACKED_GAIN * e) >> BBR_SCALE;
        if (aggr > max_aggr)
            aggr = max_aggr;
    }
    return (uint32_t)aggr;
}

/* How many more packets were acked in this epoch than the bandwidth
 * explains: receivers and links that batch ACKs need that much more cwnd
 * to keep sending while they hold them. Max of the last 5-10 rounds. */
static void
update_ack_aggregation(struct tcp_pcb *pcb, const struct stk_rate_sample *rs)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    uint64_t now = x->delivered_ns, expected, epoch_us;
    uint32_t extra;

    if (rs->acked_sacked == 0 || rs->delivered < 0 || rs->interval_us <= 0)
        return;
    if (b->round_start) {
        b->extra_acked_win_rtts = (uint8_t)(b->extra_acked_win_rtts < 0x1f
                                                ? b->extra_acked_win_rtts + 1
                                                : 0x1f);
        if (b->extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS) {
            b->extra_acked_win_rtts = 0;
            b->extra_acked_win_idx = b->extra_acked_win_idx ? 0 : 1;
            b->extra_acked[b->extra_acked_win_idx] = 0;
        }
    }
    epoch_us = stk__us_since(now, b->ack_epoch_ns);
    expected = (uint64_t)bw_of(pcb) * epoch_us / BW_UNIT;
    /* A new epoch when the ACKs fell behind the rate, or after 1M. */
    if (b->ack_epoch_acked <= expected ||
        b->ack_epoch_acked + rs->acked_sacked >= ACK_EPOCH_RESET_THRESH) {
        b->ack_epoch_acked = 0;
        b->ack_epoch_ns = now;
        expected = 0;
    }
    b->ack_epoch_acked += rs->acked_sacked;
    if (b->ack_epoch_acked > 0xfffffu)
        b->ack_epoch_acked = 0xfffffu;
    extra = b->ack_epoch_acked > expected
                ? (uint32_t)(b->ack_epoch_acked - expected)
                : 0;
    if (extra > x->cwnd)
        extra = x->cwnd;
    if (extra > b->extra_acked[b->extra_acked_win_idx])
        b->extra_acked[b->extra_acked_win_idx] = extra;
}

/* ---- modes ----------------------------------------------------------------*/

static void
advance_cycle_phase(struct tcp_pcb *pcb)
{
    struct stk_bbr *b = bbr_of(pcb);

    b->cycle_idx = (uint8_t)((b->cycle_idx + 1) & (CYCLE_LEN - 1));
    b->cycle_ns = pcb->acc.delivered_ns;
}

static void
reset_startup_mode(struct tcp_pcb *pcb)
{
    bbr_of(pcb)->mode = BBR_STARTUP;
}

/* Start the gain cycle at a random phase other than the probing one, so
 * flows sharing a bottleneck do not probe in step. */
static void
reset_probe_bw_mode(struct tcp_pcb *pcb)
{
    struct stk_bbr *b = bbr_of(pcb);

    b->mode = BBR_PROBE_BW;
    b->cycle_idx = (uint8_t)(CYCLE_LEN - 1 - (LWIP_RAND() % CYCLE_RAND));
    advance_cycle_phase(pcb);
}

static void
reset_mode(struct tcp_pcb *pcb)
{
    if (!full_bw_reached(pcb))
        reset_startup_mode(pcb);
    else
        reset_probe_bw_mode(pcb);
}

static bool
is_next_cycle_phase(struct tcp_pcb *pcb, const struct stk_rate_sample *rs)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    bool full_length =
        stk__us_since(x->delivered_ns, b->cycle_ns) > b->min_rtt_us;
    uint32_t in_net, bw;

    if (b->pacing_gain == BBR_UNIT)
        return full_length; /* cruise: one min RTT per phase */
    in_net = packets_in_net_at_edt(pcb, rs->prior_in_flight);
    bw = max_bw(pcb);
    /* Probing: until the queue is built (or loss says it is full). */
    if (b->pacing_gain > BBR_UNIT)
        return full_length &&
               (rs->losses != 0 || in_net >= inflight(pcb, bw, b->pacing_gain));
    /* Draining: until the queue is gone, or a min RTT at most. */
    return full_length || in_net <= inflight(pcb, bw, BBR_UNIT);
}

static void
update_cycle_phase(struct tcp_pcb *pcb, const struct stk_rate_sample *rs)
{
    if (bbr_of(pcb)->mode == BBR_PROBE_BW && is_next_cycle_phase(pcb, rs))
        advance_cycle_phase(pcb);
}

/* ---- long-term (policer) bandwidth ----------------------------------------*/

static void
reset_lt_interval(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);

    b->lt_last_ms = (uint32_t)(x->delivered_ns / 1000000u);
    b->lt_last_delivered = x->delivered;
    b->lt_last_lost = x->lost;
    b->lt_rtt_cnt = 0;
}

static void
reset_lt(struct tcp_pcb *pcb)
{
    struct stk_bbr *b = bbr_of(pcb);

    b->lt_bw = 0;
    b->lt_use_bw = false;
    b->lt_is_sampling = false;
    reset_lt_interval(pcb);
}

static void
lt_interval_done(struct tcp_pcb *pcb, uint32_t bw)
{
    struct stk_bbr *b = bbr_of(pcb);

    if (b->lt_bw != 0) {
        uint32_t diff = bw > b->lt_bw ? bw - b->lt_bw : b->lt_bw - bw;

        /* Two intervals at the same rate: a policer. */
        if ((uint64_t)diff * BBR_UNIT <= (uint64_t)LT_BW_RATIO * b->lt_bw ||
            rate_bytes_per_sec(pcb, diff, BBR_UNIT) <= LT_BW_DIFF) {
            b->lt_bw = (bw + b->lt_bw) >> 1;
            b->lt_use_bw = true;
            b->pacing_gain = BBR_UNIT; /* try to avoid drops */
            b->lt_rtt_cnt = 0;
            return;
        }
    }
    b->lt_bw = bw;
    reset_lt_interval(pcb);
}

static void
lt_bw_sampling(struct tcp_pcb *pcb, const struct stk_rate_sample *rs)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    uint32_t lost, delivered, t;
    uint64_t bw;

    if (b->lt_use_bw) {
        /* Policed long enough: look for a better rate again. */
        if (b->mode == BBR_PROBE_BW && b->round_start &&
            ++b->lt_rtt_cnt >= LT_BW_MAX_RTTS) {
            reset_lt(pcb);
            reset_probe_bw_mode(pcb);
        }
        return;
    }
    /* Sample from the first loss: a policer's tokens are spent by then. */
    if (!b->lt_is_sampling) {
        if (rs->losses == 0)
            return;
        reset_lt_interval(pcb);
        b->lt_is_sampling = true;
    }
    if (rs->is_app_limited) {
        reset_lt(pcb); /* out of data: the rate would be too low */
        return;
    }
    if (b->round_start)
        b->lt_rtt_cnt++;
    if (b->lt_rtt_cnt < LT_INTVL_MIN_RTTS)
        return;
    if (b->lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS) {
        reset_lt(pcb);
        return;
    }
    /* The interval ends at a loss (the policer's tokens ran out). */
    if (rs->losses == 0)
        return;
    lost = x->lost - b->lt_last_lost;
    delivered = x->delivered - b->lt_last_delivered;
    if (delivered == 0 ||
        ((uint64_t)lost << BBR_SCALE) < (uint64_t)LT_LOSS_THRESH * delivered)
        return;
    t = (uint32_t)(x->delivered_ns / 1000000u) - b->lt_last_ms;
    if ((int32_t)t < 1)
        return; /* under a millisecond: wait */
    if (t >= UINT32_MAX / 1000u) {
        reset_lt(pcb);
        return;
    }
    bw = (uint64_t)delivered * BW_UNIT / ((uint64_t)t * 1000u);
    lt_interval_done(pcb, bw > UINT32_MAX ? UINT32_MAX : (uint32_t)bw);
}

/* ---- the model
 * --------------------------------------------------------------*/

static void
update_bw(struct tcp_pcb *pcb, const struct stk_rate_sample *rs)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    uint64_t bw;

    b->round_start = false;
    if (rs->delivered < 0 || rs->interval_us <= 0)
        return;
    /* A round trip ends when a segment sent after its start is acked. */
    if (!TCP_SEQ_LT(rs->prior_delivered, b->next_rtt_delivered)) {
        b->next_rtt_delivered = x->delivered;
        b->rtt_cnt++;
        b->round_start = true;
        b->packet_conservation = false;
    }
    lt_bw_sampling(pcb, rs);
    bw = (uint64_t)rs->delivered * BW_UNIT / (uint64_t)rs->interval_us;
    if (bw > UINT32_MAX)
        bw = UINT32_MAX;
    /* An app-limited sample only counts when it beats the estimate. */
    if (!rs->is_app_limited || bw >= max_bw(pcb))
        stk__minmax_running_max(&b->bw, BW_RTTS, b->rtt_cnt, (uint32_t)bw);
}

/* STARTUP ends after 3 rounds without 25 % more bandwidth. */
static void
check_full_bw_reached(struct tcp_pcb *pcb, const struct stk_rate_sample *rs)
{
    struct stk_bbr *b = bbr_of(pcb);
    uint64_t thresh;

    if (b->full_bw_reached || !b->round_start || rs->is_app_limited)
        return;
    thresh = (uint64_t)b->full_bw * FULL_BW_THRESH >> BBR_SCALE;
    if (max_bw(pcb) >= thresh) {
        b->full_bw = max_bw(pcb);
        b->full_bw_cnt = 0;
        return;
    }
    b->full_bw_cnt++;
    b->full_bw_reached = b->full_bw_cnt >= FULL_BW_CNT;
}

static void
check_drain(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);

    if (b->mode == BBR_STARTUP && full_bw_reached(pcb)) {
        b->mode = BBR_DRAIN; /* slow down until the queue is gone */
        x->ssthresh = inflight(pcb, max_bw(pcb), BBR_UNIT);
    }
    if (b->mode == BBR_DRAIN && packets_in_net_at_edt(pcb, stk__in_flight(x)) <=
                                    inflight(pcb, max_bw(pcb), BBR_UNIT))
        reset_probe_bw_mode(pcb);
}

static void
check_probe_rtt_done(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);

    if (b->probe_rtt_done_ns == 0 || now <= b->probe_rtt_done_ns)
        return;
    b->min_rtt_stamp_ns = now; /* the next PROBE_RTT in 10 s */
    if (b->prior_cwnd > x->cwnd)
        x->cwnd = b->prior_cwnd;
    reset_mode(pcb);
}

/* The min RTT filter, and PROBE_RTT when it expires: 4 packets in flight
 * for 200 ms and at least a round trip. */
static void
update_min_rtt(struct tcp_pcb *pcb, const struct stk_rate_sample *rs,
               uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    bool expired = now > b->min_rtt_stamp_ns + MIN_RTT_WIN_NS;

    if (rs->rtt_us >= 0 && ((uint64_t)rs->rtt_us < b->min_rtt_us || expired)) {
        b->min_rtt_us = (uint32_t)rs->rtt_us;
        b->min_rtt_stamp_ns = now;
    }
    if (expired && !b->idle_restart && b->mode != BBR_PROBE_RTT) {
        b->mode = BBR_PROBE_RTT;
        save_cwnd(pcb);
        b->probe_rtt_done_ns = 0;
    }
    if (b->mode == BBR_PROBE_RTT) {
        uint32_t in_flight = stk__in_flight(x);

        /* Its low-rate samples say nothing about the path. */
        x->app_limited =
            x->delivered + in_flight ? x->delivered + in_flight : 1;
        if (b->probe_rtt_done_ns == 0 && in_flight <= CWND_MIN_TARGET) {
            b->probe_rtt_done_ns = now + PROBE_RTT_NS;
            b->probe_rtt_round_done = false;
            b->next_rtt_delivered = x->delivered;
        } else if (b->probe_rtt_done_ns != 0) {
            if (b->round_start)
                b->probe_rtt_round_done = true;
            if (b->probe_rtt_round_done)
                check_probe_rtt_done(pcb, now);
        }
    }
    if (rs->delivered > 0)
        b->idle_restart = false;
}

static void
update_gains(struct tcp_pcb *pcb)
{
    struct stk_bbr *b = bbr_of(pcb);

    switch (b->mode) {
    case BBR_STARTUP:
        b->pacing_gain = HIGH_GAIN;
        b->cwnd_gain = HIGH_GAIN;
        break;
    case BBR_DRAIN:
        b->pacing_gain = DRAIN_GAIN;
        b->cwnd_gain = HIGH_GAIN;
        break;
    case BBR_PROBE_BW:
        b->pacing_gain = b->lt_use_bw ? BBR_UNIT : pacing_gain[b->cycle_idx];
        b->cwnd_gain = CWND_GAIN;
        break;
    default: /* PROBE_RTT */
        b->pacing_gain = BBR_UNIT;
        b->cwnd_gain = BBR_UNIT;
        break;
    }
}

/* ---- cwnd
 * -------------------------------------------------------------------*/

/* Recovery: packet conservation for its first round (send one for each
 * one delivered), then the model; leaving recovery restores the cwnd from
 * before it. */
static bool
recover_or_restore(struct tcp_pcb *pcb, const struct stk_rate_sample *rs,
                   uint32_t acked, uint32_t *new_cwnd)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    uint8_t prev = b->prev_ca_state, st = x->ca_state;
    uint32_t cwnd = x->cwnd, in_flight = stk__in_flight(x);

    if (rs->losses > 0)
        cwnd = cwnd > rs->losses + 1 ? cwnd - rs->losses : 1;
    if (st == STK_CA_RECOVERY && prev != STK_CA_RECOVERY) {
        b->packet_conservation = true;
        b->next_rtt_delivered = x->delivered; /* a round from now */
        cwnd = in_flight + acked;
    } else if (prev >= STK_CA_RECOVERY && st < STK_CA_RECOVERY) {
        if (b->prior_cwnd > cwnd)
            cwnd = b->prior_cwnd;
        b->packet_conservation = false;
    }
    b->prev_ca_state = st;
    if (b->packet_conservation) {
        *new_cwnd = cwnd > in_flight + acked ? cwnd : in_flight + acked;
        return true;
    }
    *new_cwnd = cwnd;
    return false;
}

static void
set_cwnd(struct tcp_pcb *pcb, const struct stk_rate_sample *rs, uint32_t acked,
         uint32_t bw, uint32_t gain)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    uint32_t cwnd = x->cwnd, target;

    if (acked == 0)
        goto done;
    if (recover_or_restore(pcb, rs, acked, &cwnd))
        goto done;
    target = bdp(pcb, bw, gain);
    target += ack_aggregation_cwnd(pcb);
    target = quantization_budget(pcb, target);
    /* Grow toward the target as fast as the ACKs allow (slow start's pace
     * while the pipe is not yet full), never past it once it is. */
    if (full_bw_reached(pcb)) {
        cwnd = cwnd + acked < target ? cwnd + acked : target;
    } else if (cwnd < target || x->delivered < STK_TCP_INIT_CWND_SEGS) {
        cwnd += acked;
    }
    if (cwnd < CWND_MIN_TARGET)
        cwnd = CWND_MIN_TARGET;
done:
    x->cwnd = cwnd < (1u << 20) ? cwnd : (1u << 20);
    if (b->mode == BBR_PROBE_RTT && x->cwnd > CWND_MIN_TARGET)
        x->cwnd = CWND_MIN_TARGET;
}

/* ---- the congestion control's operations
 * -----------------------------------*/

static void
bbr_main(struct tcp_pcb *pcb, const struct stk_rate_sample *rs, uint64_t now)
{
    struct stk_bbr *b = bbr_of(pcb);
    uint32_t bw;

    update_bw(pcb, rs);
    update_ack_aggregation(pcb, rs);
    update_cycle_phase(pcb, rs);
    check_full_bw_reached(pcb, rs);
    check_drain(pcb);
    update_min_rtt(pcb, rs, now);
    update_gains(pcb);
    bw = bw_of(pcb);
    set_pacing_rate(pcb, bw, b->pacing_gain);
    set_cwnd(pcb, rs, rs->acked_sacked, bw, b->cwnd_gain);
}

static void
bbr_init(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    uint64_t now = stk__now_ns();

    memset(b, 0, sizeof(*b));
    b->next_rtt_delivered = x->delivered;
    b->prev_ca_state = STK_CA_OPEN;
    b->min_rtt_us = stk__min_rtt_us(x);
    b->min_rtt_stamp_ns = now;
    stk__minmax_reset(&b->bw, 0, 0);
    init_pacing_rate_from_rtt(pcb);
    reset_lt(pcb);
    reset_startup_mode(pcb);
    update_gains(pcb);
    b->ack_epoch_ns = now;
}

static uint32_t
bbr_ssthresh(struct tcp_pcb *pcb)
{
    save_cwnd(pcb);
    return pcb->acc.ssthresh; /* unchanged: BBR sets cwnd itself */
}

static uint32_t
bbr_undo_cwnd(struct tcp_pcb *pcb)
{
    struct stk_bbr *b = bbr_of(pcb);

    b->full_bw = 0; /* spurious: probe the pipe again */
    b->full_bw_cnt = 0;
    reset_lt(pcb);
    return pcb->acc.cwnd;
}

/* An RTO: treat it as a round's end; the long-term sampler sees a loss. */
static void
bbr_on_loss(struct tcp_pcb *pcb)
{
    struct stk_bbr *b = bbr_of(pcb);
    struct stk_rate_sample rs;

    memset(&rs, 0, sizeof(rs));
    rs.losses = 1;
    rs.delivered = -1;
    rs.interval_us = -1;
    rs.rtt_us = -1;
    b->prev_ca_state = STK_CA_LOSS;
    b->full_bw = 0;
    b->round_start = true;
    lt_bw_sampling(pcb, &rs);
}

/* Sending after the application paused: the rate model stays; PROBE_BW
 * resumes at the estimated rate (not a probing or draining gain). */
static void
bbr_tx_start(struct tcp_pcb *pcb, uint64_t idle_ns)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_bbr *b = bbr_of(pcb);
    uint64_t now = stk__now_ns();

    (void)idle_ns;
    if (x->app_limited == 0)
        return;
    b->idle_restart = true;
    b->ack_epoch_ns = now;
    b->ack_epoch_acked = 0;
    if (b->mode == BBR_PROBE_BW)
        set_pacing_rate(pcb, bw_of(pcb), BBR_UNIT);
    else if (b->mode == BBR_PROBE_RTT)
        check_probe_rtt_done(pcb, now);
}

const struct stk_cc_ops stk__cc_bbr = {
    .name = "bbr",
    .init = bbr_init,
    .ssthresh = bbr_ssthresh,
    .undo_cwnd = bbr_undo_cwnd,
    .on_loss = bbr_on_loss,
    .tx_start = bbr_tx_start,
    .cong_control = bbr_main,
};
