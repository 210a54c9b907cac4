/*
 * CUBIC congestion control (RFC 9438), Linux's default, computed as
 * Linux's tcp_cubic.c does: cwnd follows W(t) = C (t - K)^3 + W_max with
 * C = 0.4 and beta = 0.7 (717/1024) after a loss, fast convergence, the
 * Reno-friendly region, a growth of at most one packet per two acked, and
 * HyStart (ACK trains and delay increase end slow start before the first
 * loss). Time is in milliseconds where Linux counts jiffies (HZ = 1000).
 */
#include <string.h>

#include "stk_priv.h"
#include "tcp_snd.h"

#define BETA_SCALE 1024u
#define BETA 717u     /* 0.7 */
#define BIC_SCALE 41u /* C = 0.4 in 1024ths of a second cubed */
#define CUBIC_HZ 10   /* time unit 2^-10 s */
#define FAST_CONVERGENCE 1
#define HYSTART_LOW_WINDOW 16u
#define HYSTART_ACK_DELTA_US 2000u
#define HYSTART_MIN_SAMPLES 8u
#define HYSTART_DELAY_MIN_US 4000u
#define HYSTART_DELAY_MAX_US 16000u

static const uint32_t cube_rtt_scale = BIC_SCALE * 10u;
/* 8 * (1024 + beta) / 3 / (1024 - beta): Reno-friendly slope */
static const uint32_t beta_scale =
    8u * (BETA_SCALE + BETA) / 3u / (BETA_SCALE - BETA);
/* 2^40 / (bic_scale * 10): K = cbrt(cube_factor * (W_max - cwnd)) */
static const uint64_t cube_factor = (1ull << (10 + 3 * CUBIC_HZ)) / (41u * 10u);

static uint32_t
cube_root(uint64_t a)
{
    uint64_t r = 0;

    for (int s = 63; s >= 0; s -= 3) {
        uint64_t b;

        r *= 2;
        b = 3 * r * (r + 1) + 1;
        if ((a >> s) >= b) {
            a -= b << s;
            r++;
        }
    }
    return (uint32_t)r;
}

static void
reset(struct stk_cubic *ca)
{
    memset(ca, 0, sizeof(*ca));
}

static void
hystart_reset(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_cubic *ca = &pcb->acc.cubic;

    ca->round_start_ns = ca->last_ack_ns = now;
    ca->end_seq = pcb->snd_nxt;
    ca->curr_rtt_us = 0xffffffffu;
    ca->sample_cnt = 0;
}

static void
cubic_init(struct tcp_pcb *pcb)
{
    reset(&pcb->acc.cubic);
    hystart_reset(pcb, stk__now_ns());
}

static uint32_t
cubic_ssthresh(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_cubic *ca = &x->cubic;
    uint32_t s;

    ca->epoch_start_ns = 0; /* the curve starts again */
    if (x->cwnd < ca->last_max_cwnd && FAST_CONVERGENCE)
        ca->last_max_cwnd = (uint32_t)((uint64_t)x->cwnd * (BETA_SCALE + BETA) /
                                       (2 * BETA_SCALE));
    else
        ca->last_max_cwnd = x->cwnd;
    s = (uint32_t)((uint64_t)x->cwnd * BETA / BETA_SCALE);
    return s > 2 ? s : 2;
}

static void
update(struct tcp_pcb *pcb, uint32_t cwnd, uint32_t acked, uint64_t now)
{
    struct stk_cubic *ca = &pcb->acc.cubic;
    uint32_t delta, target, max_cnt;
    uint64_t offs, t;

    ca->ack_cnt += acked;
    if (ca->last_cwnd == cwnd &&
        stk__ns_since(now, ca->last_time_ns) <= 31250000u)
        return; /* at most every 1/32 s at a stable cwnd */
    if (ca->epoch_start_ns != 0 &&
        now / 1000000u == ca->last_time_ns / 1000000u)
        goto friendliness; /* once per millisecond */
    ca->last_cwnd = cwnd;
    ca->last_time_ns = now;
    if (ca->epoch_start_ns == 0) {
        ca->epoch_start_ns = now;
        ca->ack_cnt = acked;
        ca->tcp_cwnd = cwnd;
        if (ca->last_max_cwnd <= cwnd) {
            ca->k = 0;
            ca->origin_point = cwnd;
        } else {
            ca->k = cube_root(cube_factor * (ca->last_max_cwnd - cwnd));
            ca->origin_point = ca->last_max_cwnd;
        }
    }
    /* t: time since the epoch began plus the minimum delay, 2^-10 s */
    t = stk__us_since(now, ca->epoch_start_ns) + ca->delay_min_us;
    t = (t << CUBIC_HZ) / 1000000u;
    offs = t < ca->k ? ca->k - t : t - ca->k;
    delta = (uint32_t)((cube_rtt_scale * offs * offs * offs) >>
                       (10 + 3 * CUBIC_HZ));
    target = t < ca->k ? ca->origin_point - delta : ca->origin_point + delta;
    if (target > cwnd)
        ca->cnt = cwnd / (target - cwnd);
    else
        ca->cnt = 100 * cwnd; /* very small increment */
    /* Before the first loss the bandwidth is unknown: at least 5 % an RTT. */
    if (ca->last_max_cwnd == 0 && ca->cnt > 20)
        ca->cnt = 20;
friendliness:
    /* Never slower than Reno would be. */
    delta = (cwnd * beta_scale) >> 3;
    if (delta == 0)
        delta = 1;
    while (ca->ack_cnt > delta) {
        ca->ack_cnt -= delta;
        ca->tcp_cwnd++;
    }
    if (ca->tcp_cwnd > cwnd) {
        delta = ca->tcp_cwnd - cwnd;
        max_cnt = cwnd / delta;
        if (ca->cnt > max_cnt)
            ca->cnt = max_cnt;
    }
    if (ca->cnt < 2)
        ca->cnt = 2; /* at most 1.5x an RTT */
}

static void
cubic_cong_avoid(struct tcp_pcb *pcb, uint32_t acked, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (x->cwnd < x->ssthresh) {
        acked = stk__slow_start(x, acked);
        if (acked == 0)
            return;
    }
    update(pcb, x->cwnd, acked, now);
    stk__cong_avoid_ai(x, x->cubic.cnt, acked);
}

static uint32_t
cubic_undo_cwnd(struct tcp_pcb *pcb)
{
    return stk__cc_reno.undo_cwnd(pcb);
}

static void
cubic_on_loss(struct tcp_pcb *pcb)
{
    reset(&pcb->acc.cubic);
    hystart_reset(pcb, stk__now_ns());
}

static void
hystart_update(struct tcp_pcb *pcb, uint32_t delay_us, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_cubic *ca = &x->cubic;

    if (TCP_SEQ_GT(pcb->lastack, ca->end_seq))
        hystart_reset(pcb, now); /* a new round */
    /* ACK train: ACKs keep coming closely spaced for more than half the
     * minimum RTT after the round began. */
    if (stk__ns_since(now, ca->last_ack_ns) <=
        (uint64_t)HYSTART_ACK_DELTA_US * 1000u) {
        ca->last_ack_ns = now;
        if (stk__ns_since(now, ca->round_start_ns) >
            (uint64_t)(ca->delay_min_us >> 1) * 1000u) {
            ca->found = true;
            x->ssthresh = x->cwnd;
        }
    }
    /* Delay increase: this round's minimum RTT grew by an eighth. */
    if (ca->curr_rtt_us > delay_us)
        ca->curr_rtt_us = delay_us;
    if (ca->sample_cnt < HYSTART_MIN_SAMPLES) {
        ca->sample_cnt++;
    } else {
        uint32_t th = ca->delay_min_us >> 3;

        th = th < HYSTART_DELAY_MIN_US   ? HYSTART_DELAY_MIN_US
             : th > HYSTART_DELAY_MAX_US ? HYSTART_DELAY_MAX_US
                                         : th;
        if (ca->curr_rtt_us > ca->delay_min_us + th) {
            ca->found = true;
            x->ssthresh = x->cwnd;
        }
    }
}

static void
cubic_pkts_acked(struct tcp_pcb *pcb, uint32_t acked, int64_t rtt_us,
                 uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_cubic *ca = &x->cubic;
    uint32_t delay;

    (void)acked;
    if (rtt_us < 0)
        return;
    /* Delay samples right after a loss say little. */
    if (ca->epoch_start_ns != 0 &&
        stk__ns_since(now, ca->epoch_start_ns) < 1000000000u)
        return;
    delay = rtt_us > 0 ? (uint32_t)rtt_us : 1;
    if (ca->delay_min_us == 0 || ca->delay_min_us > delay)
        ca->delay_min_us = delay;
    if (!ca->found && x->cwnd < x->ssthresh && x->cwnd >= HYSTART_LOW_WINDOW)
        hystart_update(pcb, delay, now);
}

static void
cubic_tx_start(struct tcp_pcb *pcb, uint64_t idle_ns)
{
    struct stk_cubic *ca = &pcb->acc.cubic;
    uint64_t now = stk__now_ns();

    /* Idle, application limited: shift the epoch so the curve resumes
     * where it was instead of jumping. */
    if (ca->epoch_start_ns != 0 && idle_ns > 0) {
        ca->epoch_start_ns += idle_ns;
        if (ca->epoch_start_ns > now)
            ca->epoch_start_ns = now;
    }
}

const struct stk_cc_ops stk__cc_cubic = {
    .name = "cubic",
    .init = cubic_init,
    .ssthresh = cubic_ssthresh,
    .cong_avoid = cubic_cong_avoid,
    .undo_cwnd = cubic_undo_cwnd,
    .on_loss = cubic_on_loss,
    .pkts_acked = cubic_pkts_acked,
    .tx_start = cubic_tx_start,
};
