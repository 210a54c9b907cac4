/*
 * Congestion control: the table of algorithms a connection can use
 * (ACCEL_TCP_CC picks the default, setsockopt TCP_CONGESTION one
 * connection's), the slow start and additive increase both share, and
 * Reno (RFC 5681 with RFC 3465's byte counting in packets, Linux's
 * tcp_cong.c). CUBIC, Linux's default, is in tcp_cubic.c, BBR in
 * tcp_bbr.c. cwnd and ssthresh count packets (segments), as Linux's do.
 */
#include <string.h>

#include "stk.h"
#include "stk_priv.h"
#include "tcp_snd.h"

#define CWND_CLAMP (1u << 20)

uint32_t stk__tcp_rto_min_us = 200u * 1000u; /* Linux's TCP_RTO_MIN */
uint8_t stk__tcp_cc_default = STK_CC_CUBIC;

const struct stk_cc_ops *const stk__cc[STK_CC_COUNT] = {
    [STK_CC_CUBIC] = &stk__cc_cubic,
    [STK_CC_RENO] = &stk__cc_reno,
    [STK_CC_BBR] = &stk__cc_bbr,
};

int
stk_tcp_cc_find(const char *name)
{
    for (int i = 0; i < STK_CC_COUNT; i++)
        if (strcmp(stk__cc[i]->name, name) == 0)
            return i;
    return -1;
}

int
stk_tcp_cc_default(void)
{
    return stk__tcp_cc_default;
}

const char *
stk_tcp_cc_name(int cc)
{
    return cc >= 0 && cc < STK_CC_COUNT ? stk__cc[cc]->name : NULL;
}

int
stk_tcp_configure(const struct stk_tcp_cfg *cfg)
{
    if (cfg->rto_min_ms == 0 || cfg->rto_min_ms > STK_TCP_RTO_MAX_US / 1000u ||
        cfg->cc < 0 || cfg->cc >= STK_CC_COUNT)
        return -1;
    stk__tcp_rto_min_us = cfg->rto_min_ms * 1000u;
    stk__tcp_cc_default = (uint8_t)cfg->cc;
    return 0;
}

uint32_t
stk__slow_start(struct stk_tcp_ext *x, uint32_t acked)
{
    uint32_t cwnd = x->cwnd + acked;

    if (cwnd > x->ssthresh)
        cwnd = x->ssthresh;
    acked -= cwnd - x->cwnd;
    x->cwnd = cwnd < CWND_CLAMP ? cwnd : CWND_CLAMP;
    return acked;
}

void
stk__cong_avoid_ai(struct stk_tcp_ext *x, uint32_t w, uint32_t acked)
{
    if (w == 0)
        w = 1;
    if (x->cwnd_cnt >= w) {
        x->cwnd_cnt = 0;
        x->cwnd++;
    }
    x->cwnd_cnt += acked;
    if (x->cwnd_cnt >= w) {
        uint32_t delta = x->cwnd_cnt / w;

        x->cwnd_cnt -= delta * w;
        x->cwnd += delta;
    }
    if (x->cwnd > CWND_CLAMP)
        x->cwnd = CWND_CLAMP;
}

/* ---- Reno ---------------------------------------------------------------*/

static void
reno_init(struct tcp_pcb *pcb)
{
    (void)pcb;
}

static uint32_t
reno_ssthresh(struct tcp_pcb *pcb)
{
    uint32_t half = pcb->acc.cwnd >> 1;

    return half > 2 ? half : 2;
}

static void
reno_cong_avoid(struct tcp_pcb *pcb, uint32_t acked, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;

    (void)now;
    if (x->cwnd < x->ssthresh) {
        acked = stk__slow_start(x, acked);
        if (acked == 0)
            return;
    }
    stk__cong_avoid_ai(x, x->cwnd, acked);
}

static uint32_t
reno_undo_cwnd(struct tcp_pcb *pcb)
{
    const struct stk_tcp_ext *x = &pcb->acc;

    return x->cwnd > x->prior_cwnd ? x->cwnd : x->prior_cwnd;
}

static void
reno_on_loss(struct tcp_pcb *pcb)
{
    (void)pcb;
}

const struct stk_cc_ops stk__cc_reno = {
    .name = "reno",
    .init = reno_init,
    .ssthresh = reno_ssthresh,
    .cong_avoid = reno_cong_avoid,
    .undo_cwnd = reno_undo_cwnd,
    .on_loss = reno_on_loss,
    .pkts_acked = NULL,
    .tx_start = NULL,
};
