/*
 * accel's own fields in every lwIP tcp_pcb (LWIP_TCP_PCB_EXT_FIELDS, patch
 * 0008): the sender's loss recovery, congestion control, RTT estimator and
 * timer (stack/tcp_*.c), and the receiver's pending D-SACK block. lwIP's
 * tcp_alloc() zeroes them with the rest of the pcb, and zero means "not
 * started": the fields are filled in when the connection first needs them.
 *
 * Included by lwipopts.h, so by every lwIP source: plain C types only.
 * Sequence numbers are host order; times are the stack clock's (ns).
 */
#ifndef ACCEL_STK_TCP_EXT_H
#define ACCEL_STK_TCP_EXT_H

#include <stdbool.h>
#include <stdint.h>

struct stk_rtx;

/** A windowed min or max filter's three best samples (minmax.c). */
struct stk_minmax {
    struct {
        uint32_t t, v;
    } s[3];
};

/** CUBIC's state (RFC 9438 with Linux's HyStart; stack/tcp_cubic.c). */
struct stk_cubic {
    uint32_t cnt;            /* ACKs for cwnd to grow by one */
    uint32_t last_max_cwnd;  /* W_max, packets */
    uint32_t last_cwnd;      /* cwnd at the last update */
    uint32_t origin_point;   /* W_max or cwnd where the curve starts */
    uint32_t k;              /* time to reach origin_point, 2^-10 s */
    uint32_t tcp_cwnd;       /* Reno-friendly estimate, packets */
    uint32_t ack_cnt;        /* packets acked in this epoch */
    uint32_t loss_cwnd;      /* cwnd before the last reduction (undo) */
    uint32_t delay_min_us;   /* smallest RTT seen (HyStart, the curve) */
    uint32_t curr_rtt_us;    /* HyStart: smallest RTT of this round */
    uint32_t end_seq;        /* HyStart: snd_nxt when the round began */
    uint64_t epoch_start_ns; /* 0: no epoch (after a loss) */
    uint64_t last_time_ns;   /* last update of cnt */
    uint64_t round_start_ns; /* HyStart: this round's start */
    uint64_t last_ack_ns;    /* HyStart: last ACK of the train */
    uint8_t sample_cnt;      /* HyStart: RTT samples this round */
    bool found;              /* HyStart ended slow start */
};

/** BBR's state (stack/tcp_bbr.c, Linux's tcp_bbr.c: BBR v1). Rates are
 *  packets per microsecond << 24 (Linux's BW_UNIT), gains 1/256ths. */
struct stk_bbr {
    struct stk_minmax bw;        /* max delivery rate over 10 rounds */
    uint32_t min_rtt_us;         /* over 10 s */
    uint64_t min_rtt_stamp_ns;   /* when min_rtt_us was taken */
    uint64_t probe_rtt_done_ns;  /* PROBE_RTT ends; 0: not timed yet */
    uint32_t rtt_cnt;            /* round trips so far */
    uint32_t next_rtt_delivered; /* delivered at which the round ends */
    uint64_t cycle_ns;           /* this gain cycle phase's start */
    uint32_t prior_cwnd;         /* before recovery or PROBE_RTT */
    uint32_t full_bw;            /* STARTUP: bw to beat by 25 % */
    uint16_t pacing_gain, cwnd_gain;
    uint8_t mode; /* BBR_STARTUP ... BBR_PROBE_RTT */
    uint8_t prev_ca_state;
    uint8_t cycle_idx;   /* PROBE_BW's phase */
    uint8_t full_bw_cnt; /* rounds without 25 % growth */
    bool packet_conservation, round_start, idle_restart;
    bool probe_rtt_round_done, full_bw_reached, has_seen_rtt;
    /* long-term (policed) rate sampling */
    bool lt_is_sampling, lt_use_bw;
    uint8_t lt_rtt_cnt;
    uint32_t lt_bw, lt_last_delivered, lt_last_lost;
    uint32_t lt_last_ms;
    /* ACK aggregation: packets acked beyond what the rate explains */
    uint64_t ack_epoch_ns;
    uint32_t ack_epoch_acked;
    uint32_t extra_acked[2];
    uint8_t extra_acked_win_rtts, extra_acked_win_idx;
};

struct stk_tcp_ext {
    /* ---- the connection's one timer (tcp_timer.c) ---------------------- */
    struct stk_tcp_ext *t_next, *t_prev; /* wheel slot list */
    uint64_t t_when;                     /* deadline, 0: not armed */
    uint64_t t_tick; /* the tick of the slot it is linked into */
    uint8_t t_kind;  /* STK_T_RTO/TLP/REO */
    bool t_linked;   /* on the wheel (armed, or cancelled lazily) */
    /* the shared-address steering has an entry of its own for this
     * connection (netif.c stk__steer_flow): removed when the pcb goes */
    bool steered;
    /* held back by pacing until the next tick (tcp_timer.c) */
    struct stk_tcp_ext *p_next, *p_prev;
    bool p_linked;
    /* lwIP's 100 ms and 200 ms timers look at this connection (tcp_tick.c:
     * touched lately or has a timed duty), or it is parked until its
     * keepalive is due */
    struct stk_tcp_ext *k_next, *k_prev;
    struct stk_tcp_ext *ka_next, *ka_prev;
    uint32_t ka_due; /* tcp_ticks at which the keepalive is due */
    bool k_linked, ka_linked;
    bool k_active; /* on lwIP's active list (not frozen, closed, TIME-WAIT) */

    /* ---- state ---------------------------------------------------------- */
    bool started;     /* established and initialised (cwnd etc.) */
    uint8_t ca_state; /* STK_CA_OPEN ... STK_CA_LOSS */
    uint8_t cc;       /* STK_CC_CUBIC / STK_CC_RENO / STK_CC_BBR */
    bool cc_chosen;   /* by TCP_CONGESTION (else ACCEL_TCP_CC's) */

    /* ---- retransmission queue: the segments of pcb->unacked ------------ */
    struct stk_rtx *q;
    uint32_t packets_out;      /* segments in q */
    uint32_t sacked_out;       /* SACKed (or dupacks, without SACK) */
    uint32_t lost_out;         /* marked lost */
    uint32_t retrans_out;      /* retransmitted, not yet (s)acked or lost */
    uint32_t fack;             /* highest end of a SACKed segment */
    uint32_t delivered;        /* packets delivered (acked or SACKed), ever */
    uint32_t lost;             /* packets marked lost, ever */
    uint32_t sack_cache[4][2]; /* the last ACK's SACK blocks */

    /* ---- congestion window, packets -------------------------------------*/
    uint32_t cwnd, ssthresh, cwnd_cnt;
    uint32_t prior_cwnd, prior_ssthresh; /* before the reduction (undo) */
    uint32_t high_seq;                   /* snd_nxt when recovery began */
    uint32_t prr_delivered, prr_out;     /* RFC 6937 */
    uint32_t max_packets_out;            /* this window's, for cwnd_limited */
    uint32_t max_packets_seq;
    bool cwnd_limited;
    uint64_t last_send_ns; /* idle restart */
    uint64_t last_xmit_ns; /* the latest send time given to a segment */
    union {                /* the congestion control's own state */
        struct stk_cubic cubic;
        struct stk_bbr bbr;
    };

    /* ---- delivery rate (tcp_rate.c) and pacing --------------------------*/
    uint64_t delivered_ns;   /* when delivered last grew */
    uint64_t first_tx_ns;    /* send time of the latest delivered segment */
    uint32_t app_limited;    /* delivered at which app-limited ends; 0 */
    uint32_t rate_delivered; /* the last sample kept for TCP_INFO */
    uint32_t rate_interval_us;
    bool rate_app_limited;
    uint64_t pacing_rate; /* bytes/s; 0: no pacing */
    uint64_t wstamp_ns;   /* pacing: the next segment's departure */

    /* ---- undo (RFC 3522 with timestamps, D-SACK) -------------------------*/
    uint32_t undo_marker; /* snd_una when the reduction began; 0: none */
    bool undo_valid;
    int32_t undo_retrans;   /* retransmissions not yet D-SACKed */
    uint32_t retrans_stamp; /* TSval (ms) of the first retransmission */

    /* ---- RTT and RTO (RFC 6298 as Linux computes it), microseconds ----- */
    uint32_t srtt_us;     /* x8 */
    uint32_t mdev_us;     /* x4 */
    uint32_t mdev_max_us; /* this window's largest mdev */
    uint32_t rttvar_us;
    uint32_t rtt_seq;
    uint32_t rto_us;           /* current RTO (backed off) */
    struct stk_minmax min_rtt; /* windowed min: rtt_us over time_ms */
    uint8_t backoff;
    uint8_t retransmits;      /* consecutive timeouts */
    uint32_t total_retrans;   /* segments retransmitted, ever */
    uint64_t rexmit_start_ns; /* first timeout of this stall (abort) */
    uint64_t syn_xmit_ns;     /* SYN / SYN-ACK sent (handshake RTT) */
    bool syn_retrans;
    bool syn_out; /* the SYN (SYN-ACK) sent and not yet acked */

    /* ---- RACK (RFC 8985) ------------------------------------------------*/
    uint64_t rack_xmit_ns; /* send time of the most recent delivered */
    uint32_t rack_end_seq;
    uint32_t rack_rtt_us;
    uint32_t rack_last_delivered;
    uint32_t reord_seen; /* reordering events seen */
    uint32_t reordering; /* dupack threshold, packets */
    uint8_t reo_wnd_steps, reo_wnd_persist;
    bool rack_advanced, rack_dsack_seen;

    /* ---- tail loss probe ------------------------------------------------*/
    uint32_t tlp_high_seq; /* snd_nxt when the probe went; 0: none */
    bool tlp_retrans;      /* the probe was a retransmission */
    bool tlp_send_new;     /* tcp_output may send one segment past cwnd */

    /* ---- receiver -------------------------------------------------------*/
    uint32_t dsack_left, dsack_right; /* pending D-SACK block */
    bool dsack;

    /* ---- TCP_INFO's byte counts (tcp_ack.c) ------------------------------*/
    uint64_t bytes_acked;    /* snd_una's progress, the SYN and FIN included */
    uint64_t bytes_received; /* rcv_nxt's up to rcv_seen, the FIN included */
    uint32_t rcv_seen;       /* rcv_nxt at the last ACK in */
    bool rcv_counting;       /* rcv_seen is set */

    /* ---- corking (TCP_CORK, MSG_MORE; tcp_recovery.c) -------------------*/
    bool corked;      /* TCP_CORK set */
    bool more;        /* the last write had MSG_MORE */
    uint64_t hold_ns; /* when the partial tail was first held; 0: none */

    /* ---- input validation (tcp_validate.c) -------------------------------*/
    uint64_t oow_ack_ns; /* last challenge or duplicate ACK; 0: none */
    uint32_t snd_base;   /* lastack when first seen (the ISS) */
    bool snd_base_set;
    uint32_t ts_recent;    /* pcb->ts_recent when last seen ... */
    uint64_t ts_recent_ns; /* ... and when it was first seen */
};

#endif /* ACCEL_STK_TCP_EXT_H */
