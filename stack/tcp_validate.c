/*
 * A segment for a connection, before lwIP's state machine sees it
 * (LWIP_HOOK_TCP_INPUT_VALIDATE, patch 0030). What Linux's
 * tcp_validate_incoming and tcp_ack check and lwIP does not, in Linux's
 * order:
 *
 *  1. PAWS (RFC 7323 section 5): a segment whose TSval is older than the
 *     one last recorded (ts_recent) by more than one tick is dropped,
 *     unless it is a RST, a pure duplicate ACK within an RTO's worth of
 *     ticks (Linux's tcp_disordered_ack), or ts_recent is 24 days old.
 *     Data gets a duplicate ACK at once, a pure ACK at most one per
 *     500 ms.
 *  2. RST (RFC 5961 section 3): only at rcv_nxt (or rcv_nxt - 1 after
 *     the peer's FIN, Linux's tcp_reset_check) does it reset; elsewhere
 *     in the window it gets a challenge ACK; outside it is dropped.
 *  3. SYN on a synchronized connection (section 4): a challenge ACK,
 *     never a reset.
 *  4. ACK (section 5): a segment without ACK is dropped; one that
 *     acknowledges data never sent (after snd_nxt) is dropped (silently
 *     in ESTABLISHED as Linux, with a challenge ACK in the other states);
 *     one older than snd_una by more than the largest window the peer
 *     offered (and the bytes acknowledged so far) is dropped with a
 *     challenge ACK. lwIP alone would take the data of all of these.
 *
 * Challenge and duplicate ACKs of a connection are rate limited as
 * Linux's tcp_invalid_ratelimit (500 ms); its global
 * tcp_challenge_ack_limit is unlimited by default since Linux 6.0 (a
 * global counter was a side channel, CVE-2016-5696), so there is none.
 * SYN-SENT and SYN-RCVD are lwIP's (its checks there are RFC 9293's).
 */
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "stats.h"
#include "stk_hooks.h"
#include "stk_priv.h"
#include "tcp_snd.h"

/* Linux's sysctl_tcp_invalid_ratelimit default (HZ / 2). */
#define INVALID_RATELIMIT_NS 500000000ull
/* Linux's TCP_PAWS_24DAYS: a ts_recent this old no longer rejects. */
#define PAWS_24DAYS_NS (60ull * 60 * 24 * 24 * 1000000000ull)
/* Linux's TCP_PAWS_WINDOW: TSval may be this many ticks behind. */
#define PAWS_WINDOW 1

/* May an ACK go out now, or did one go out less than 500 ms ago? */
static bool
oow_rate_ok(struct stk_tcp_ext *x, uint64_t now)
{
    if (x->oow_ack_ns != 0 && now - x->oow_ack_ns < INVALID_RATELIMIT_NS) {
        base_stats.tcp_ack_skipped++;
        return false;
    }
    x->oow_ack_ns = now;
    return true;
}

static int
challenge(struct stk_tcp_ext *x, uint64_t now)
{
    if (!oow_rate_ok(x, now))
        return LWIP_TCP_VALIDATE_DROP;
    base_stats.tcp_challenge_ack++;
    return LWIP_TCP_VALIDATE_DROP_ACK;
}

/* tcp_may_update_window: would this ACK move the send window? */
static bool
may_update_window(const struct tcp_pcb *pcb, uint32_t ackno, uint32_t seqno,
                  uint32_t nwin)
{
    return TCP_SEQ_GT(ackno, pcb->lastack) || TCP_SEQ_GT(seqno, pcb->snd_wl1) ||
           (seqno == pcb->snd_wl1 && (nwin > pcb->snd_wnd || nwin == 0));
}

/* Linux's tcp_disordered_ack: a pure duplicate ACK reordered behind a
 * later one, which PAWS lets through. */
static bool
disordered_ack(const struct tcp_pcb *pcb, const struct tcp_hdr *hdr,
               uint32_t seqno, uint32_t ackno, uint8_t flags, uint16_t tcplen,
               uint32_t tsval)
{
    const struct stk_tcp_ext *x = &pcb->acc;
    uint32_t nwin = (uint32_t)hdr->wnd << pcb->snd_scale; /* host order */
    uint32_t rto_ticks = (uint32_t)((uint64_t)x->rto_us * 1024 / 1000000);

    return (flags & TCP_ACK) && tcplen == 0 && seqno == pcb->rcv_nxt &&
           ackno == pcb->lastack &&
           !may_update_window(pcb, ackno, seqno, nwin) &&
           (int32_t)(pcb->ts_recent - tsval) <= (int32_t)rto_ticks;
}

/* RFC 7323 section 5.3's test, with Linux's exceptions. */
static bool
paws_reject(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, uint32_t seqno,
            uint32_t ackno, uint8_t flags, uint16_t tcplen,
            const struct stk_tcp_opts *o, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (pcb->ts_recent != x->ts_recent || x->ts_recent_ns == 0) {
        x->ts_recent = pcb->ts_recent;
        x->ts_recent_ns = now;
    }
    if (!o->ts || !(pcb->flags & TF_TIMESTAMP) || pcb->ts_recent == 0)
        return false;
    if ((int32_t)(pcb->ts_recent - o->tsval) <= PAWS_WINDOW)
        return false;
    if (now - x->ts_recent_ns >= PAWS_24DAYS_NS)
        return false;
    return !disordered_ack(pcb, hdr, seqno, ackno, flags, tcplen, o->tsval);
}

static bool
in_window(const struct tcp_pcb *pcb, uint32_t seqno)
{
    return TCP_SEQ_BETWEEN(seqno, pcb->rcv_nxt, pcb->rcv_nxt + pcb->rcv_wnd);
}

static int
validate_rst(struct tcp_pcb *pcb, uint32_t seqno, uint64_t now)
{
    if (seqno == pcb->rcv_nxt)
        return LWIP_TCP_VALIDATE_PASS;
    /* Linux's tcp_reset_check: the peer's FIN moved rcv_nxt past the
     * sequence number its RST carries. */
    if (seqno == pcb->rcv_nxt - 1 &&
        (pcb->state == CLOSE_WAIT || pcb->state == LAST_ACK ||
         pcb->state == CLOSING)) {
        return LWIP_TCP_VALIDATE_PASS;
    }
    base_stats.tcp_rst_ignored++;
    if (!in_window(pcb, seqno))
        return LWIP_TCP_VALIDATE_DROP;
    return challenge(&pcb->acc, now);
}

static int
validate_ack(struct tcp_pcb *pcb, uint32_t ackno, uint64_t now)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t acked = pcb->lastack - x->snd_base;
    uint32_t max_window = pcb->snd_wnd_max < acked ? pcb->snd_wnd_max : acked;

    if (TCP_SEQ_GT(ackno, pcb->snd_nxt)) {
        base_stats.tcp_bad_ack++;
        if (pcb->state == ESTABLISHED)
            return LWIP_TCP_VALIDATE_DROP;
        return challenge(x, now);
    }
    if (TCP_SEQ_LT(ackno, pcb->lastack - max_window)) {
        base_stats.tcp_bad_ack++;
        return challenge(x, now);
    }
    return LWIP_TCP_VALIDATE_PASS;
}

int
stk_tcp_validate(struct tcp_pcb *pcb, const struct tcp_hdr *hdr,
                 uint16_t optlen, uint16_t opt1len, const uint8_t *opt2,
                 uint32_t seqno, uint32_t ackno, uint8_t flags, uint16_t tcplen)
{
    struct stk_tcp_ext *x = &pcb->acc;
    const struct stk_tcp_opts *o;
    uint64_t now;

    stk__seg_opts_forget();
    if (!x->snd_base_set) {
        x->snd_base = pcb->lastack;
        x->snd_base_set = true;
    }
    if (pcb->state == SYN_SENT || pcb->state == SYN_RCVD)
        return LWIP_TCP_VALIDATE_PASS;
    now = stk__now_ns();
    o = stk__seg_opts(hdr, optlen, opt1len, opt2);

    if (!(flags & TCP_RST) &&
        paws_reject(pcb, hdr, seqno, ackno, flags, tcplen, o, now)) {
        base_stats.tcp_paws_reject++;
        if (flags & TCP_SYN)
            return challenge(x, now);
        /* Data: a duplicate ACK each time (Linux's tcp_oow_rate_limited
         * limits only segments without data, which could be an ACK loop). */
        if (tcplen > 0) {
            x->oow_ack_ns = now;
            return LWIP_TCP_VALIDATE_DROP_ACK;
        }
        return oow_rate_ok(x, now) ? LWIP_TCP_VALIDATE_DROP_ACK
                                   : LWIP_TCP_VALIDATE_DROP;
    }
    if (flags & TCP_RST)
        return validate_rst(pcb, seqno, now);
    if (flags & TCP_SYN) {
        base_stats.tcp_syn_challenge++;
        return challenge(x, now);
    }
    if (!(flags & TCP_ACK))
        return LWIP_TCP_VALIDATE_DROP;
    return validate_ack(pcb, ackno, now);
}
