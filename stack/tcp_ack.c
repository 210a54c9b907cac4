/*
 * An ACK arrives (LWIP_HOOK_TCP_ACK_IN, before lwIP frees the segments it
 * acknowledges): its timestamp and SACK options are read, the segments it
 * acknowledges leave the retransmission queue, SACK blocks mark the
 * segments the peer holds (RFC 2018, RFC 6675's scoreboard) and D-SACK
 * blocks (RFC 2883) are told apart, RTT samples are taken (the oldest
 * newly acked segment never retransmitted, as Linux's tcp_clean_rtx_queue
 * does; SACKed ones next; the timestamp echo for retransmitted data), and
 * RACK learns the send time of the most recent delivered segment.
 * stk__ack keeps what the ACK did for tcp_recovery.c, which runs when
 * lwIP has freed the segments (LWIP_HOOK_TCP_ACK_DONE).
 */
#include <string.h>

#include "lwip/sys.h"

#include "stats.h"
#include "stk_hooks.h"
#include "stk_priv.h"
#include "tcp_snd.h"

struct stk_ack stk__ack;

uint32_t
stk__in_flight(const struct stk_tcp_ext *x)
{
    uint32_t left = x->sacked_out + x->lost_out;

    return (x->packets_out > left ? x->packets_out - left : 0) + x->retrans_out;
}

static uint32_t
get32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
           b[3];
}

const uint8_t *
stk__tcp_opt_bytes(const struct tcp_hdr *h, uint16_t *optlen, uint16_t opt1len,
                   const uint8_t *opt2, uint8_t copy[40])
{
    const uint8_t *b = (const uint8_t *)(h + 1);

    if (*optlen > 40)
        *optlen = 40;
    if (opt2 != NULL && opt1len < *optlen) {
        for (uint16_t k = 0; k < *optlen; k++)
            copy[k] = k < opt1len ? b[k] : opt2[k - opt1len];
        b = copy;
    }
    return b;
}

/* The options of the segment lwIP is processing, parsed once for the
 * validation (tcp_validate.c) and the ACK hook that follows it. Keyed by
 * the header's address and ACK number; forgotten when a segment's
 * validation starts and once the ACK hook used it, so a later segment in
 * the same buffer is never taken for it. */
static struct {
    const struct tcp_hdr *hdr;
    uint32_t ackno;
    struct stk_tcp_opts o;
} seg_opts;

const struct stk_tcp_opts *
stk__seg_opts(const struct tcp_hdr *h, uint16_t optlen, uint16_t opt1len,
              const uint8_t *opt2)
{
    uint32_t ackno = lwip_ntohl(h->ackno);

    if (seg_opts.hdr != h || seg_opts.ackno != ackno) {
        stk__tcp_opts(h, optlen, opt1len, opt2, &seg_opts.o);
        seg_opts.hdr = h;
        seg_opts.ackno = ackno;
    }
    return &seg_opts.o;
}

void
stk__seg_opts_forget(void)
{
    seg_opts.hdr = NULL;
}

void
stk__tcp_opts(const struct tcp_hdr *h, uint16_t optlen, uint16_t opt1len,
              const uint8_t *opt2, struct stk_tcp_opts *o)
{
    uint8_t copy[40];
    const uint8_t *b = stk__tcp_opt_bytes(h, &optlen, opt1len, opt2, copy);
    uint16_t i = 0;

    o->ts = false;
    o->tsval = o->tsecr = 0;
    o->nsack = 0;
    /* What nearly every segment of an established connection carries:
     * NOP, NOP, timestamps (RFC 7323's appendix A layout, Linux's). */
    if (optlen == 12 && b[0] == LWIP_TCP_OPT_NOP && b[1] == LWIP_TCP_OPT_NOP &&
        b[2] == LWIP_TCP_OPT_TS && b[3] == 10) {
        o->ts = true;
        o->tsval = get32(&b[4]);
        o->tsecr = get32(&b[8]);
        return;
    }
    while (i < optlen) {
        uint8_t kind = b[i], len;

        if (kind == LWIP_TCP_OPT_EOL)
            break;
        if (kind == LWIP_TCP_OPT_NOP) {
            i++;
            continue;
        }
        if (i + 1 >= optlen)
            break;
        len = b[i + 1];
        if (len < 2 || i + len > optlen)
            break;
        if (kind == LWIP_TCP_OPT_TS && len == 10) {
            o->ts = true;
            o->tsval = get32(&b[i + 2]);
            o->tsecr = get32(&b[i + 6]);
        } else if (kind == 5 && (len - 2) % 8 == 0) { /* SACK */
            for (int k = 0; k < (len - 2) / 8 && o->nsack < 4; k++) {
                o->sack[o->nsack][0] = get32(&b[i + 2 + 8 * k]);
                o->sack[o->nsack][1] = get32(&b[i + 6 + 8 * k]);
                o->nsack++;
            }
        }
        i = (uint16_t)(i + len);
    }
}

/* A never-retransmitted segment delivered below the highest SACKed
 * sequence: the network reordered it (Linux's tcp_check_sack_reordering). */
STK_COLD static void
note_reordering(struct tcp_pcb *pcb, uint32_t low_seq)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t fack = x->fack, mss = pcb->mss ? pcb->mss : 536;

    if (!TCP_SEQ_LT(low_seq, fack))
        return;
    if (fack - low_seq > x->reordering * mss) {
        uint32_t r = (fack - low_seq + mss - 1) / mss;
        x->reordering = r < STK_TCP_MAX_REORDERING ? r : STK_TCP_MAX_REORDERING;
    }
    x->reord_seen++;
    BASE_STAT_INC(tcp_reorder_seen);
}

/* Segments the cumulative ACK covers leave the queue. */
static void
clean_rtx(struct tcp_pcb *pcb, uint32_t ackno, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_ack *a = &stk__ack;
    bool sack = (pcb->flags & TF_SACK) != 0;
    uint64_t first_ackt = 0, last_ackt = 0;
    uint32_t reord = pcb->snd_nxt;

    while (stk__rtx_count(x) > 0) {
        struct stk_rtx_ent *e = stk__rtx_at(x, 0);

        if (TCP_SEQ_GT(e->end, ackno))
            break;
        if (e->flags & STK_RTX_EVER) {
            a->retrans_acked = true;
        } else if (!(e->flags & STK_RTX_SACKED)) {
            last_ackt = e->xmit_ns;
            if (first_ackt == 0)
                first_ackt = last_ackt;
            if (TCP_SEQ_LT(e->seq, reord))
                reord = e->seq;
        }
        stk__rate_delivered(pcb, e);
        if (e->flags & STK_RTX_RETRANS)
            x->retrans_out--;
        if (e->flags & STK_RTX_LOST)
            x->lost_out--;
        if (e->flags & STK_RTX_SACKED) {
            x->sacked_out--;
        } else if (sack) {
            x->delivered++;
            a->newly_acked++;
            stk__rack_advance(pcb, e->flags, e->end, e->xmit_ns, now);
        }
        x->packets_out--;
        a->acked_pkts++;
        stk__rtx_pop(x);
    }
    if (first_ackt != 0) {
        a->seq_rtt_us = (int64_t)stk__us_since(now, first_ackt);
        a->ca_rtt_us = (int64_t)stk__us_since(now, last_ackt);
    }
    if (sack && TCP_SEQ_LT(reord, a->prior_fack))
        note_reordering(pcb, reord);
    if (!sack && a->acked_pkts > 0) {
        /* Without SACK the dupacks stood for delivered segments: one ACK
         * fills the hole, the rest of what it acks was counted already
         * (Linux's tcp_remove_reno_sacks). */
        uint32_t acked = a->acked_pkts;
        uint32_t d = acked > x->sacked_out ? acked - x->sacked_out : 1;

        x->delivered += d;
        a->newly_acked += d;
        x->sacked_out =
            acked - 1 >= x->sacked_out ? 0 : x->sacked_out - (acked - 1);
    }
    if (x->packets_out == 0)
        x->sacked_out = 0;
    if (TCP_SEQ_LT(x->fack, ackno))
        x->fack = ackno;
}

/* Mark the segments wholly inside [l, r) as held by the peer. */
STK_COLD static void
sack_range(struct tcp_pcb *pcb, uint32_t l, uint32_t r, uint64_t now,
           uint64_t *first_sackt, uint32_t *reord)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_ack *a = &stk__ack;
    uint32_t n = stk__rtx_count(x);
    int32_t i = stk__rtx_find(x, l);

    if (i < 0) {
        if (n == 0 || !TCP_SEQ_LT(l, stk__rtx_at(x, 0)->seq))
            return;
        i = 0; /* the block starts below the queue (acked since) */
    }
    for (; (uint32_t)i < n; i++) {
        struct stk_rtx_ent *e = stk__rtx_at(x, (uint32_t)i);

        if (TCP_SEQ_LT(e->seq, l))
            continue; /* only partly covered */
        if (TCP_SEQ_GT(e->end, r))
            break;
        if (e->flags & STK_RTX_SACKED)
            continue;
        e->flags |= STK_RTX_SACKED;
        stk__rate_delivered(pcb, e);
        x->sacked_out++;
        x->delivered++;
        a->newly_acked++;
        a->sacked_new = true;
        BASE_STAT_INC(tcp_sacked_segs);
        if (e->flags & STK_RTX_RETRANS) {
            e->flags &= (uint8_t)~STK_RTX_RETRANS;
            x->retrans_out--;
        }
        if (e->flags & STK_RTX_LOST) {
            e->flags &= (uint8_t)~STK_RTX_LOST;
            x->lost_out--;
        }
        if (!(e->flags & STK_RTX_EVER)) {
            if (TCP_SEQ_LT(e->seq, a->prior_fack) && TCP_SEQ_LT(e->seq, *reord))
                *reord = e->seq;
            if (*first_sackt == 0 || e->xmit_ns < *first_sackt)
                *first_sackt = e->xmit_ns;
        }
        stk__rack_advance(pcb, e->flags, e->end, e->xmit_ns, now);
        if (TCP_SEQ_GT(e->end, x->fack))
            x->fack = e->end;
    }
}

/* [l, r) minus what the previous ACK's blocks already covered: SACK
 * blocks repeat from ACK to ACK and mostly grow at one edge, so only the
 * new part of each is walked (Linux's recv_sack_cache). */
STK_COLD static void
sack_block(struct tcp_pcb *pcb, uint32_t l, uint32_t r, uint64_t now,
           uint64_t *first_sackt, uint32_t *reord)
{
    struct stk_tcp_ext *x = &pcb->acc;

    for (int k = 0; k < 4; k++) {
        uint32_t cl = x->sack_cache[k][0], cr = x->sack_cache[k][1];

        if (cl == cr || !TCP_SEQ_LT(cl, r) || !TCP_SEQ_LT(l, cr))
            continue; /* empty, or no overlap */
        if (TCP_SEQ_LT(l, cl))
            sack_block(pcb, l, cl, now, first_sackt, reord);
        if (TCP_SEQ_LT(cr, r))
            sack_block(pcb, cr, r, now, first_sackt, reord);
        return;
    }
    sack_range(pcb, l, r, now, first_sackt, reord);
}

/* D-SACK (RFC 2883): the first block reports data received twice. */
STK_COLD static void
dsack(struct tcp_pcb *pcb, uint32_t l, uint32_t r)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_ack *a = &stk__ack;
    uint32_t mss = pcb->mss ? pcb->mss : 536;
    int32_t segs = (int32_t)((r - l + mss - 1) / mss);

    a->dsack = true;
    BASE_STAT_INC(tcp_dsack_rcvd);
    x->rack_dsack_seen = true;
    /* A retransmission the peer did not need: one less to explain
     * before the reduction can be undone (Linux's tcp_check_dsack). */
    if (x->undo_valid && x->undo_retrans > 0 && TCP_SEQ_GT(r, x->undo_marker)) {
        x->undo_retrans = x->undo_retrans > segs ? x->undo_retrans - segs : 0;
        /* The original of a retransmission arrived after all: the path
         * reorders (beyond RFC 8985, which waits for a never-retransmitted
         * segment to show it; on a path that reorders by more than three
         * segments that would cost a spurious retransmission each time). */
        if (!(x->tlp_high_seq != 0 && r == x->tlp_high_seq)) {
            x->reord_seen++;
            BASE_STAT_INC(tcp_reorder_seen);
        }
    }
    if (x->tlp_high_seq != 0 && x->tlp_retrans && r == x->tlp_high_seq)
        a->dsack_tlp = true;
}

static void
sacktag(struct tcp_pcb *pcb, struct stk_tcp_opts *o, uint32_t ackno,
        uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t blk[4][2];
    int n = 0, first = 0;
    uint64_t first_sackt = 0;
    uint32_t reord = pcb->snd_nxt;

    if (o->nsack > 0) {
        uint32_t l0 = o->sack[0][0], r0 = o->sack[0][1];

        if (TCP_SEQ_LT(l0, ackno) ||
            (o->nsack > 1 && TCP_SEQ_LEQ(r0, o->sack[1][1]) &&
             TCP_SEQ_GEQ(l0, o->sack[1][0]))) {
            if (TCP_SEQ_LT(l0, r0))
                dsack(pcb, l0, r0);
            first = 1;
        }
    }
    /* The valid blocks, in sequence order (as Linux sorts them). */
    for (int k = first; k < o->nsack; k++) {
        uint32_t l = o->sack[k][0], r = o->sack[k][1];

        if (!TCP_SEQ_LT(l, r) || TCP_SEQ_LEQ(r, ackno) ||
            TCP_SEQ_GT(r, pcb->snd_nxt))
            continue;
        if (TCP_SEQ_LT(l, ackno))
            l = ackno;
        int j = n++;
        while (j > 0 && TCP_SEQ_LT(l, blk[j - 1][0])) {
            blk[j][0] = blk[j - 1][0];
            blk[j][1] = blk[j - 1][1];
            j--;
        }
        blk[j][0] = l;
        blk[j][1] = r;
    }
    for (int k = 0; k < n; k++)
        sack_block(pcb, blk[k][0], blk[k][1], now, &first_sackt, &reord);
    memset(x->sack_cache, 0, sizeof(x->sack_cache));
    memcpy(x->sack_cache, blk, (size_t)n * sizeof(blk[0]));
    if (first_sackt != 0)
        stk__ack.sack_rtt_us = (int64_t)stk__us_since(now, first_sackt);
    if (TCP_SEQ_LT(reord, stk__ack.prior_fack))
        note_reordering(pcb, reord);
}

/* The RTT the ACK measured, best source first (Linux's
 * tcp_ack_update_rtt). */
static void
take_rtt(struct tcp_pcb *pcb, uint64_t now)
{
    struct stk_ack *a = &stk__ack;
    int64_t rtt = a->seq_rtt_us, ca = a->ca_rtt_us;

    if (rtt < 0) {
        rtt = a->sack_rtt_us;
        if (ca < 0)
            ca = rtt;
    }
    if (rtt < 0 && a->ts && a->tsecr != 0 && a->advanced) {
        int32_t ms = (int32_t)(sys_now() - a->tsecr);

        /* Millisecond timestamps: at least one tick, as Linux counts. */
        if (ms >= 0 && ms < 3600000)
            rtt = ca = (int64_t)(ms ? ms : 1) * 1000;
    }
    if (rtt < 0)
        return;
    stk__rtt_sample(pcb, (uint32_t)rtt, (uint32_t)ca, now);
}

uint64_t
stk__tcp_bytes_received(const struct tcp_pcb *pcb)
{
    const struct stk_tcp_ext *x = &pcb->acc;

    if (!x->rcv_counting)
        return 0;
    /* what came since the last ACK in */
    return x->bytes_received + (uint32_t)(pcb->rcv_nxt - x->rcv_seen);
}

void
stk_tcp_ack_in(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, uint16_t optlen,
               uint16_t opt1len, const uint8_t *opt2, uint32_t ackno,
               uint16_t tcplen, uint32_t old_right_edge)
{
    struct stk_tcp_ext *x = &pcb->acc;
    struct stk_ack *a = &stk__ack;
    struct stk_tcp_opts o;
    uint64_t now = stk__now_ns();

    *a = (struct stk_ack){.seq_rtt_us = -1, .sack_rtt_us = -1, .ca_rtt_us = -1};
    /* Every segment past the handshake carries an ACK and comes here
     * before its data is taken: what rcv_nxt gained since the last one
     * (less than a window) is data received. The first one, in SYN-RCVD
     * or after the SYN-ACK, finds rcv_nxt at the peer's ISN + 1. */
    if (x->rcv_counting)
        x->bytes_received += (uint32_t)(pcb->rcv_nxt - x->rcv_seen);
    x->rcv_seen = pcb->rcv_nxt;
    x->rcv_counting = true;
    if (!x->started)
        stk__snd_start(pcb, now);
    o = *stk__seg_opts(hdr, optlen, opt1len, opt2);
    stk__seg_opts_forget();
    a->ts = o.ts;
    a->tsecr = o.tsecr;
    a->prior_snd_una = pcb->lastack;
    a->prior_fack = TCP_SEQ_GT(x->fack, pcb->lastack) ? x->fack : pcb->lastack;
    a->prior_delivered = x->delivered;
    a->prior_in_flight = stk__in_flight(x);
    a->rs.prior_in_flight = a->prior_in_flight;

    if (TCP_SEQ_BETWEEN(ackno, pcb->lastack + 1, pcb->snd_nxt)) {
        a->advanced = true;
        x->bytes_acked += (uint32_t)(ackno - pcb->lastack);
        if (x->syn_out) {
            /* The handshake's SYN-ACK (SYN-RCVD): the SYN is the first
             * sequence number, so any ACK that moves snd_una acks it. Its
             * RTT, if sent once. */
            x->syn_out = false;
            if (!x->syn_retrans && x->syn_xmit_ns != 0)
                a->seq_rtt_us = (int64_t)stk__us_since(now, x->syn_xmit_ns);
        }
        clean_rtx(pcb, ackno, now);
    }
    /* Nothing new: no data, no window change, snd_una where it was. */
    a->dupack = ackno == pcb->lastack && tcplen == 0 &&
                pcb->snd_wl2 + pcb->snd_wnd == old_right_edge &&
                x->packets_out > 0;
    if (pcb->flags & TF_SACK)
        sacktag(pcb, &o, ackno, now);
    take_rtt(pcb, now);
    a->rs.rtt_us = a->ca_rtt_us >= 0 ? a->ca_rtt_us : a->sack_rtt_us;
    if (stk__cc[x->cc]->pkts_acked != NULL && a->acked_pkts > 0)
        stk__cc[x->cc]->pkts_acked(pcb, a->acked_pkts, a->ca_rtt_us, now);
}

void
stk_tcp_syn_acked(struct tcp_pcb *pcb, struct tcp_seg *seg)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint64_t now = stk__now_ns();

    (void)seg;
    x->syn_out = false;
    x->bytes_acked++; /* the SYN, as Linux's tcp_snd_una_update */
    stk__timer_cancel(pcb);
    stk__snd_start(pcb, now);
    if (!x->syn_retrans && x->syn_xmit_ns != 0) {
        uint32_t rtt = (uint32_t)stk__us_since(now, x->syn_xmit_ns);

        stk__rtt_sample(pcb, rtt, rtt, now);
    }
    x->retransmits = 0;
    x->backoff = 0;
}
