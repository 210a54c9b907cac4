/*
 * The TCP sender accel runs in place of lwIP's (patch 0008,
 * LWIP_TCP_SENDER_HOOKS): internals shared by stack/tcp_*.c only.
 *
 *   tcp_rtx.c       the retransmission queue: one entry per segment of
 *                   pcb->unacked, with its send time and scoreboard bits
 *   tcp_ack.c       an ACK arrives: timestamps, cumulative ACK, SACK and
 *                   D-SACK blocks (RFC 2018, 2883, 6675), RTT samples
 *   tcp_loss.c      which segments are lost: RACK (RFC 8985), NewReno
 *                   (RFC 6582) for peers without SACK; tail loss probes
 *   tcp_recovery.c  the state machine (open, disorder, CWR, recovery,
 *                   loss), PRR (RFC 6937), undo (RFC 3522, D-SACK), what
 *                   tcp_output retransmits and may send, the timeouts
 *   tcp_rtt.c       RTT estimator and RTO (RFC 6298 as Linux computes it)
 *   tcp_cc.c        congestion control: Reno, the algorithm table;
 *   tcp_cubic.c     CUBIC (RFC 9438) with HyStart
 *   tcp_timer.c     one timer per connection on a millisecond wheel
 *   tcp_rx.c        the receiver's D-SACK blocks and out-of-order bounds
 *
 * The model is Linux's (net/ipv4/tcp_input.c, tcp_recovery.c,
 * tcp_timer.c, tcp_cubic.c): the same states, counters and defaults, so
 * that an accelerated program sees the retransmission behaviour of the
 * kernel it replaces. Everything runs under the stack lock.
 */
#ifndef ACCEL_TCP_SND_H
#define ACCEL_TCP_SND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "stk_tcp_ext.h"

/* Congestion avoidance states (Linux's TCP_CA_*). */
enum {
    STK_CA_OPEN = 0, /* nothing outstanding is in doubt */
    STK_CA_DISORDER, /* SACKs or dupacks, nothing lost yet */
    STK_CA_CWR,      /* cwnd reduced without a loss to repair (TLP) */
    STK_CA_RECOVERY, /* fast recovery */
    STK_CA_LOSS,     /* after a retransmission timeout */
};

/* What the connection's timer is armed for. */
enum {
    STK_T_RTO = 1, /* retransmission timeout */
    STK_T_TLP,     /* tail loss probe */
    STK_T_REO,     /* RACK's reordering window ends */
};

/* Scoreboard bits of a queued segment. */
#define STK_RTX_SACKED 0x01u      /* the peer holds it (SACK) */
#define STK_RTX_LOST 0x02u        /* marked lost, to retransmit */
#define STK_RTX_RETRANS 0x04u     /* retransmitted, that copy in flight */
#define STK_RTX_EVER 0x08u        /* retransmitted at least once */
#define STK_RTX_APP_LIMITED 0x10u /* rate: sent while app-limited */
#define STK_RTX_RATE_DONE 0x20u   /* rate: its delivery counted (SACKed) */

/** One segment of pcb->unacked. */
struct stk_rtx_ent {
    uint32_t seq, end; /* end: seq + TCP length (FIN counts) */
    uint64_t xmit_ns;  /* last (re)transmission */
    struct tcp_seg *seg;
    /* The delivery rate's snapshot at that transmission (tcp_rate.c). */
    uint32_t tx_delivered;    /* x->delivered */
    uint32_t tx_first_us;     /* xmit_ns - x->first_tx_ns */
    uint32_t tx_delivered_us; /* xmit_ns - x->delivered_ns */
    uint8_t flags;            /* STK_RTX_* */
};

/* Linux's defaults (include/net/tcp.h, sysctls). */
#define STK_TCP_RTO_MAX_US (120u * 1000u * 1000u) /* TCP_RTO_MAX */
#define STK_TCP_RTO_INIT_US (1000u * 1000u)       /* TCP_TIMEOUT_INIT */
#define STK_TCP_TIMEOUT_MIN_US 2000u              /* TCP_TIMEOUT_MIN */
#define STK_TCP_REORDERING 3u                     /* tcp_reordering */
#define STK_TCP_MAX_REORDERING 300u               /* tcp_max_reordering */
#define STK_TCP_RETRIES2 15u                      /* tcp_retries2 */
#define STK_TCP_ORPHAN_RETRIES                                                 \
    8u                         /* tcp_orphan_retries 0: 8 for a closed socket */
#define STK_TCP_SYN_RETRIES 6u /* tcp_syn_retries */
#define STK_TCP_SYNACK_RETRIES 5u /* tcp_synack_retries */
#define STK_TCP_INFINITE_SSTHRESH 0x7fffffffu
#define STK_TCP_RACK_RECOVERY_THRESH 16u
#define STK_TCP_MIN_RTT_WLEN_MS (300u * 1000u) /* tcp_min_rtt_wlen */
/* lwIP's own window check gets out of the way of ours (tcp_output takes
 * min(snd_wnd, cwnd)): pcb->cwnd holds this once established. */
#define STK_LWIP_CWND_OPEN 0x7fffffffu

/* The pcb a set of our fields belongs to. */
#define STK_PCB_OF(x)                                                          \
    ((struct tcp_pcb *)(void *)((char *)(x)-offsetof(struct tcp_pcb, acc)))

/** Microseconds from t to now, 0 when t is later: send times run a few
 *  ns ahead of the turn's clock (xmit_stamp), and two threads' turn clocks
 *  need not agree to the nanosecond. */
static inline uint64_t
stk__us_since(uint64_t now, uint64_t t)
{
    return now > t ? (now - t) / 1000u : 0;
}
/** The same in nanoseconds. */
static inline uint64_t
stk__ns_since(uint64_t now, uint64_t t)
{
    return now > t ? now - t : 0;
}

/* ---- configuration (tcp_cc.c) ------------------------------------------ */
extern uint32_t stk__tcp_rto_min_us;
extern uint8_t stk__tcp_cc_default;

/* ---- tcp_rtx.c ----------------------------------------------------------*/
uint32_t stk__rtx_count(const struct stk_tcp_ext *x);
/** Entry i (0: the oldest). */
struct stk_rtx_ent *stk__rtx_at(struct stk_tcp_ext *x, uint32_t i);
/** Index of the entry holding seq, or -1. */
int32_t stk__rtx_find(struct stk_tcp_ext *x, uint32_t seq);
/** Append a segment just sent for the first time; false: no memory. */
bool stk__rtx_push(struct stk_tcp_ext *x, struct tcp_seg *seg, uint32_t seq,
                   uint32_t end, uint64_t now);
void stk__rtx_pop(struct stk_tcp_ext *x);
void stk__rtx_free(struct stk_tcp_ext *x);

/* ---- tcp_rate.c ---------------------------------------------------------*/
/** One ACK's delivery rate sample (Linux's struct rate_sample). */
struct stk_rate_sample {
    uint64_t prior_ns;        /* delivered_ns when the newest acked went */
    uint32_t prior_delivered; /* delivered then */
    uint32_t last_end_seq;    /* the newest acked segment's end */
    int32_t delivered;        /* packets delivered over the interval; -1 */
    int64_t interval_us;      /* the interval; -1: no valid sample */
    uint32_t acked_sacked;    /* packets this ACK acked or SACKed */
    uint32_t losses;          /* packets this ACK's processing marked lost */
    uint32_t prior_in_flight;
    int64_t rtt_us; /* RTT of the newest (S)ACKed segment; -1 */
    bool has_prior, is_app_limited, is_retrans;
};
/** Snapshot the rate state into e, sent (or resent) now. */
void stk__rate_sent(struct tcp_pcb *pcb, struct stk_rtx_ent *e);
/** e was delivered (cumulatively acked, or SACKed: flag set first). */
void stk__rate_delivered(struct tcp_pcb *pcb, struct stk_rtx_ent *e);
/** The ACK's sample, once its deliveries and losses are known. */
void stk__rate_gen(struct tcp_pcb *pcb, uint32_t delivered, uint32_t lost,
                   uint64_t now);

/* ---- minmax.c -----------------------------------------------------------*/
uint32_t stk__minmax_reset(struct stk_minmax *m, uint32_t t, uint32_t v);
uint32_t stk__minmax_running_max(struct stk_minmax *m, uint32_t win, uint32_t t,
                                 uint32_t v);
uint32_t stk__minmax_running_min(struct stk_minmax *m, uint32_t win, uint32_t t,
                                 uint32_t v);

/* ---- tcp_ack.c ----------------------------------------------------------*/
/** What one ACK did, from stk_tcp_ack_in to stk_tcp_ack_done. */
struct stk_ack {
    uint32_t prior_snd_una, prior_fack, prior_delivered, prior_in_flight;
    uint32_t newly_acked; /* packets newly acked or SACKed */
    uint32_t acked_pkts;  /* packets cumulatively acked */
    bool advanced;        /* snd_una moved */
    bool sacked_new;      /* a SACK block covered new segments */
    bool dupack;          /* no data, no window change, snd_una unmoved */
    bool dsack;           /* the first block was a D-SACK */
    bool dsack_tlp;       /* the D-SACK covered the tail loss probe */
    bool retrans_acked;   /* a retransmitted segment was acked */
    bool ts;              /* the ACK carried a timestamp */
    uint32_t tsecr;
    int64_t seq_rtt_us, sack_rtt_us, ca_rtt_us; /* -1: no sample */
    struct stk_rate_sample rs;
};
extern struct stk_ack stk__ack;
uint32_t stk__in_flight(const struct stk_tcp_ext *x);
/** A segment's timestamp and SACK options. */
struct stk_tcp_opts {
    bool ts;
    uint32_t tsval, tsecr;
    int nsack;
    uint32_t sack[4][2]; /* host order */
};
/** The option bytes of the segment lwIP is processing, in one piece
 *  (copied into copy when tcp_input split them); *optlen at most 40. */
const uint8_t *stk__tcp_opt_bytes(const struct tcp_hdr *h, uint16_t *optlen,
                                  uint16_t opt1len, const uint8_t *opt2,
                                  uint8_t copy[40]);
/** Read the options of the segment lwIP is processing: optlen bytes, the
 *  first opt1len right after h, the rest at opt2 (tcp_input's split). */
void stk__tcp_opts(const struct tcp_hdr *h, uint16_t optlen, uint16_t opt1len,
                   const uint8_t *opt2, struct stk_tcp_opts *o);
/** The same, parsed once per segment for the validation and the ACK hook
 *  (valid until the next call). */
const struct stk_tcp_opts *stk__seg_opts(const struct tcp_hdr *h,
                                         uint16_t optlen, uint16_t opt1len,
                                         const uint8_t *opt2);
/** A new segment: what stk__seg_opts parsed before is not its. */
void stk__seg_opts_forget(void);

/* ---- tcp_loss.c ---------------------------------------------------------*/
/** RACK: a segment sent at xmit_ns ending at end was delivered. */
void stk__rack_advance(struct tcp_pcb *pcb, uint8_t flags, uint32_t end,
                       uint64_t xmit_ns, uint64_t now);
/** Mark what RACK finds lost; *reo_us: how long until the next segment's
 *  reordering window ends (0: none). */
void stk__rack_detect(struct tcp_pcb *pcb, uint64_t now, uint32_t *reo_us);
/** RACK's reordering window adapts to D-SACKs (once per round trip). */
void stk__rack_update_reo_wnd(struct tcp_pcb *pcb);
/** Peer without SACK: the head is lost after dupthresh dupacks, and at
 *  each partial ACK in recovery (RFC 6582). */
void stk__newreno_mark_lost(struct tcp_pcb *pcb, bool advanced);
/** Mark entry e lost (a lost retransmission goes back to be resent). */
void stk__mark_lost(struct tcp_pcb *pcb, struct stk_rtx_ent *e);
/** Arm the tail loss probe instead of the RTO when it applies. */
bool stk__tlp_schedule(struct tcp_pcb *pcb, uint64_t now);
void stk__tlp_fire(struct tcp_pcb *pcb, uint64_t now);
/** An ACK at or past the probe: did it repair a loss? */
void stk__tlp_ack(struct tcp_pcb *pcb);

/* ---- tcp_recovery.c -----------------------------------------------------*/
/** Set up a connection's sender state (once established). */
void stk__snd_start(struct tcp_pcb *pcb, uint64_t now);
void stk__enter_recovery(struct tcp_pcb *pcb);
/** A loss was repaired without a recovery (a tail loss probe): reduce
 *  cwnd once, as Linux's CWR state does. */
void stk__enter_cwr(struct tcp_pcb *pcb);
/** Retransmit marked segments while cwnd allows (tcp_output's start). */
void stk__xmit_lost(struct tcp_pcb *pcb, uint64_t now);
/** Retransmit entry i now; false when it could not go out. */
bool stk__retransmit(struct tcp_pcb *pcb, uint32_t i, uint64_t now);
/** The timer after an ACK or a send: TLP if it applies, else the RTO. */
void stk__set_xmit_timer(struct tcp_pcb *pcb, uint64_t now);
/** RTO counted from the oldest segment's send time (Linux's rearm). */
void stk__rearm_rto(struct tcp_pcb *pcb, uint64_t now);
void stk__rto_fire(struct tcp_pcb *pcb, uint64_t now);
void stk__reo_fire(struct tcp_pcb *pcb, uint64_t now);

/* ---- tcp_rtt.c ----------------------------------------------------------*/
void stk__rtt_sample(struct tcp_pcb *pcb, uint32_t rtt_us, uint32_t ca_rtt_us,
                     uint64_t now);
uint32_t stk__min_rtt_us(const struct stk_tcp_ext *x);
/** srtt + rttvar, bounded by Linux's limits (no backoff). */
uint32_t stk__rto_base_us(const struct stk_tcp_ext *x);

/* ---- tcp_cc.c / tcp_cubic.c ---------------------------------------------*/
enum { STK_CC_CUBIC = 0, STK_CC_RENO, STK_CC_BBR, STK_CC_COUNT };
struct stk_cc_ops {
    const char *name;
    void (*init)(struct tcp_pcb *pcb);
    /** ssthresh after a loss (packets). */
    uint32_t (*ssthresh)(struct tcp_pcb *pcb);
    /** Grow cwnd for acked packets (the flow is cwnd-limited). */
    void (*cong_avoid)(struct tcp_pcb *pcb, uint32_t acked, uint64_t now);
    /** cwnd after an undo. */
    uint32_t (*undo_cwnd)(struct tcp_pcb *pcb);
    /** The connection entered the loss state (RTO). */
    void (*on_loss)(struct tcp_pcb *pcb);
    /** A packet was acked with an RTT sample (may be NULL). */
    void (*pkts_acked)(struct tcp_pcb *pcb, uint32_t acked, int64_t rtt_us,
                       uint64_t now);
    /** Sending resumes after the connection was idle (may be NULL). */
    void (*tx_start)(struct tcp_pcb *pcb, uint64_t idle_ns);
    /** Set: the algorithm controls cwnd (and pacing) on every ACK itself,
     *  recovery included, instead of cong_avoid and PRR (Linux's
     *  cong_control; BBR). */
    void (*cong_control)(struct tcp_pcb *pcb, const struct stk_rate_sample *rs,
                         uint64_t now);
};
extern const struct stk_cc_ops *const stk__cc[STK_CC_COUNT];
extern const struct stk_cc_ops stk__cc_cubic, stk__cc_reno, stk__cc_bbr;
/** Slow start: grow cwnd up to ssthresh; the packets left over. */
uint32_t stk__slow_start(struct stk_tcp_ext *x, uint32_t acked);
/** Additive increase: one packet per w packets acked. */
void stk__cong_avoid_ai(struct stk_tcp_ext *x, uint32_t w, uint32_t acked);

/* ---- tcp_timer.c --------------------------------------------------------*/
void stk__timer_arm(struct tcp_pcb *pcb, uint8_t kind, uint64_t when);
void stk__timer_cancel(struct tcp_pcb *pcb);
/** Off the wheel now (the pcb leaves the active list or memory). */
void stk__timer_unlink(struct tcp_pcb *pcb);
/** Pacing holds pcb back: tcp_output it at the next tick. */
void stk__pace_wait(struct tcp_pcb *pcb);
void stk__pace_cancel(struct tcp_pcb *pcb);

#endif /* ACCEL_TCP_SND_H */
