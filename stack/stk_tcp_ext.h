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

struct stk_tcp_ext {
    /* ---- the connection's one timer (tcp_timer.c) ---------------------- */
    struct stk_tcp_ext *t_next, *t_prev; /* wheel slot list */
    uint64_t t_when;                     /* deadline, 0: not armed */
    uint16_t t_slot;                     /* the slot it is linked into */
    uint8_t t_kind;                      /* STK_T_RTO/TLP/REO */
    bool t_linked;

    /* ---- state ---------------------------------------------------------- */
    bool started;     /* established and initialised (cwnd etc.) */
    uint8_t ca_state; /* STK_CA_OPEN ... STK_CA_LOSS */
    uint8_t cc;       /* STK_CC_CUBIC / STK_CC_RENO */
    bool cc_chosen;   /* by TCP_CONGESTION (else ACCEL_TCP_CC's) */

    /* ---- retransmission queue: the segments of pcb->unacked ------------ */
    struct stk_rtx *q;
    uint32_t packets_out;      /* segments in q */
    uint32_t sacked_out;       /* SACKed (or dupacks, without SACK) */
    uint32_t lost_out;         /* marked lost */
    uint32_t retrans_out;      /* retransmitted, not yet (s)acked or lost */
    uint32_t fack;             /* highest end of a SACKed segment */
    uint32_t delivered;        /* packets delivered (acked or SACKed), ever */
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
    struct stk_cubic cubic;

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
    uint32_t rto_us;        /* current RTO (backed off) */
    uint32_t min_rtt[3][2]; /* windowed min: {rtt_us, time_ms} */
    uint8_t backoff;
    uint8_t retransmits;      /* consecutive timeouts */
    uint32_t total_retrans;   /* segments retransmitted, ever */
    uint64_t rexmit_start_ns; /* first timeout of this stall (abort) */
    uint64_t syn_xmit_ns;     /* SYN / SYN-ACK sent (handshake RTT) */
    bool syn_retrans;

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
};

#endif /* ACCEL_STK_TCP_EXT_H */
