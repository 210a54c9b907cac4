/*
 * SYN cookies (RFC 4987 3.6; Linux's net/ipv4/syncookies.c with
 * tcp_syncookies=1). lwIP keeps a SYN-RCVD pcb per handshake in progress
 * and counts it in the listener's backlog (stack/sock_tcp_listen.c makes
 * that the room left in the accept queues): a SYN flood fills it with
 * handshakes that never end, each living a minute, and every legitimate
 * client is refused meanwhile. So when a SYN finds the backlog full while
 * an accept queue still has room (patch 0032's LWIP_HOOK_TCP_LISTEN_SYN_FULL),
 * it is answered statelessly: the SYN-ACK's sequence number encodes the
 * connection, and the ACK that completes the handshake
 * (LWIP_HOOK_TCP_LISTEN_ACK) makes the pcb from it. Memory stays the
 * backlog's, whatever the flood.
 *
 * The cookie is Linux's: ISN = H1(4-tuple) + peer ISN + (minute << 24)
 * + ((H2(4-tuple, minute) + MSS index) mod 2^24), keyed with the ISN's
 * secret (shared by the accelerated processes of the host, so a cookie
 * made by one process of a family is valid in another); a cookie is
 * valid for two minutes. The MSS is one of four values per family
 * (Linux's tables). With timestamps, the SYN-ACK's TSval carries the
 * peer's window scale and SACK-permitted in its low 6 bits (Linux's
 * cookie_init_timestamp), echoed back in the ACK's TSecr; without them a
 * cookie connection has neither (Linux clears them too). A listener
 * checks ACKs for cookies only within two minutes of sending one (Linux's
 * tcp_synq_no_recent_overflow); otherwise, and for an invalid cookie,
 * lwIP answers with a RST as before.
 */
#include <string.h>

#include "lwip/ip.h"
#include "lwip/netif.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/tcp.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"

#include "stats.h"
#include "stk_hooks.h"
#include "stk_priv.h"
#include "stk_synck.h"
#include "tcp_snd.h"

#define COOKIE_AGE_MAX 2u /* minutes (MAX_SYNCOOKIE_AGE) */
#define COOKIE_RECENT_NS (120ull * 1000000000ull)
/* The port is asked to answer a flooded listener's SYNs (link op
 * syn_cookies) at most this often while SYNs still reach a full backlog
 * (it answers for a second after each ask; 50 ms until it knows its
 * answers reach the wire). */
#define XDP_ASK_NS 100000000ull

/* The last cookie any listener sent (0: none yet). */
static uint64_t last_cookie_ns;

static const uint16_t mss4[] = STK_SYNCK_MSS4;
static const uint16_t mss6[] = STK_SYNCK_MSS6;

/* A SYN's options. */
struct syn_opts {
    uint16_t mss;
    uint8_t wscale; /* 0xff: none */
    bool sack, ts;
    uint32_t tsval;
};

static void
syn_opts(const struct tcp_hdr *h, uint16_t optlen, uint16_t opt1len,
         const uint8_t *opt2, struct syn_opts *o)
{
    uint8_t copy[40];
    const uint8_t *b = stk__tcp_opt_bytes(h, &optlen, opt1len, opt2, copy);

    *o = (struct syn_opts){.mss = 536, .wscale = 0xff};
    for (uint16_t i = 0; i < optlen;) {
        uint8_t kind = b[i], len;

        if (kind == LWIP_TCP_OPT_EOL)
            break;
        if (kind == LWIP_TCP_OPT_NOP) {
            i++;
            continue;
        }
        if (i + 1 >= optlen || (len = b[i + 1]) < 2 || i + len > optlen)
            break;
        if (kind == LWIP_TCP_OPT_MSS && len == 4)
            o->mss = (uint16_t)(b[i + 2] << 8 | b[i + 3]);
        else if (kind == LWIP_TCP_OPT_WS && len == 3)
            o->wscale = b[i + 2] > 14 ? 14 : b[i + 2];
        else if (kind == LWIP_TCP_OPT_SACK_PERM && len == 2)
            o->sack = true;
        else if (kind == LWIP_TCP_OPT_TS && len == 10) {
            o->ts = true;
            o->tsval = (uint32_t)b[i + 2] << 24 | (uint32_t)b[i + 3] << 16 |
                       (uint32_t)b[i + 4] << 8 | b[i + 5];
        }
        i = (uint16_t)(i + len);
    }
}

static uint32_t
minute(void)
{
    return (uint32_t)(stk__now_ns() / STK_SYNCK_MINUTE_NS);
}

/* The segment's 4-tuple from the stack's side. */
static uint32_t
hash(const struct tcp_hdr *h, uint64_t salt)
{
    return stk__tuple_hash(ip_current_dest_addr(), h->dest,
                           ip_current_src_addr(), h->src, salt);
}

static uint32_t
cookie_make(const struct tcp_hdr *h, uint32_t sseq, uint32_t mssind)
{
    uint32_t count = minute();

    return stk_synck_make(hash(h, STK_SYNCK_SALT_H1),
                          hash(h, STK_SYNCK_SALT_H2 | (count & 0xff)), sseq,
                          count, mssind);
}

/* The MSS index a cookie holds, or -1 when it is not one of ours or too
 * old. */
static int
cookie_check(const struct tcp_hdr *h, uint32_t cookie, uint32_t sseq)
{
    uint32_t count = minute(), diff, data;

    cookie -= hash(h, STK_SYNCK_SALT_H1) + sseq;
    diff =
        (count - (cookie >> STK_SYNCK_BITS)) & (0xffffffffu >> STK_SYNCK_BITS);
    if (diff >= COOKIE_AGE_MAX)
        return -1;
    data = (cookie - hash(h, STK_SYNCK_SALT_H2 | ((count - diff) & 0xff))) &
           STK_SYNCK_MASK;
    return data < 4 ? (int)data : -1;
}

static void
put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static void
put32(uint8_t *b, uint32_t v)
{
    put16(b, (uint16_t)(v >> 16));
    put16(b + 2, (uint16_t)v);
}

/* Linux's SYN-ACK options, in its order: MSS, SACK-permitted, timestamps,
 * window scale (NOPs where a field is absent). Returns their length. */
static uint16_t
synack_opts(uint8_t *o, uint16_t mss, const struct syn_opts *so, uint32_t tsval)
{
    uint16_t n = 0;

    o[n++] = LWIP_TCP_OPT_MSS;
    o[n++] = 4;
    put16(o + n, mss);
    n += 2;
    if (!so->ts)
        return n; /* nothing else survives a cookie without timestamps */
    if (so->sack) {
        o[n++] = LWIP_TCP_OPT_SACK_PERM;
        o[n++] = 2;
    } else {
        o[n++] = LWIP_TCP_OPT_NOP;
        o[n++] = LWIP_TCP_OPT_NOP;
    }
    o[n++] = LWIP_TCP_OPT_TS;
    o[n++] = 10;
    put32(o + n, tsval);
    put32(o + n + 4, so->tsval);
    n += 8;
    if (so->wscale != 0xff) {
        o[n++] = LWIP_TCP_OPT_NOP;
        o[n++] = LWIP_TCP_OPT_WS;
        o[n++] = 3;
        o[n++] = TCP_RCV_SCALE;
    }
    return n;
}

/* Cookies went out for port within two minutes: *last_ns (this
 * process's) says so, or the port does (link op syn_cookies_seen: another
 * process of a fork family had the XDP program answer the port, and this
 * one never saw the SYN); then *last_ns is set, so the port is asked once
 * per two minutes at most. */
static bool
recent(uint64_t *last_ns, uint16_t port)
{
    const struct stk_link_ops *l = stk__link();
    uint64_t now = stk__now_ns();

    if (*last_ns != 0 && now - *last_ns <= COOKIE_RECENT_NS)
        return true;
    if (l->syn_cookies_seen == NULL || !l->syn_cookies_seen(l->ctx, port))
        return false;
    *last_ns = now;
    return true;
}

/* Ask the port to answer lpcb's next SYNs itself (link op syn_cookies):
 * in the XDP program a flood costs neither a trip through the XSK nor the
 * stack. The SYN-ACK it sends is the one stk_tcp_syn_full would. */
static void
xdp_ask(struct tcp_pcb_listen *lpcb, struct stk_lgroup *g)
{
    const struct stk_link_ops *l = stk__link();
    struct netif *nif = ip_current_netif();
    struct stk_synck_arm a = {.port = lpcb->local_port,
                              .wnd = TCPWND_MIN16(TCP_WND),
                              .wscale = TCP_RCV_SCALE};
    uint64_t now = stk__now_ns();
    uint16_t m4 = TCP_MSS, m6 = TCP_MSS;

    if (l->syn_cookies == NULL || nif == NULL ||
        (g->xdp_ask_ns != 0 && now - g->xdp_ask_ns < XDP_ASK_NS))
        return;
    g->xdp_ask_ns = now;
    /* The program answers the port whatever the address and family: every
     * listener on it takes the ACKs of those cookies. */
    for (struct tcp_pcb_listen *o = tcp_listen_pcbs.listen_pcbs; o != NULL;
         o = o->next)
        if (o->local_port == lpcb->local_port && o->callback_arg != NULL)
            ((struct stk_lgroup *)o->callback_arg)->cookie_ns = now;
    if (nif->mtu > 40 && nif->mtu - 40 < m4)
        m4 = (uint16_t)(nif->mtu - 40);
    if (netif_mtu6(nif) > 60 && netif_mtu6(nif) - 60 < m6)
        m6 = (uint16_t)(netif_mtu6(nif) - 60);
    a.mss4 = TCP_MSS_CLAMP_USER(lpcb, m4);
    a.mss6 = TCP_MSS_CLAMP_USER(lpcb, m6);
    stk__isn_key(a.key);
    l->syn_cookies(l->ctx, &a);
}

int
stk_tcp_syn_full(struct tcp_pcb_listen *lpcb, const struct tcp_hdr *hdr,
                 uint16_t optlen, uint16_t opt1len, const uint8_t *opt2,
                 uint32_t seqno)
{
    struct stk_lgroup *g = lpcb->callback_arg;
    const uint16_t *tab = ip_current_is_v6() ? mss6 : mss4;
    struct syn_opts so;
    uint8_t opts[40];
    uint16_t olen, mss;
    uint32_t mssind, iss, tsval = 0;
    struct pbuf *p;
    struct tcp_hdr *t;

    /* Every accept queue full: refused, as Linux (sk_acceptq_is_full). */
    if (g == NULL || !stk__group_has_room(g))
        return 0;
    syn_opts(hdr, optlen, opt1len, opt2, &so);
    for (mssind = 3; mssind > 0; mssind--)
        if (so.mss >= tab[mssind])
            break;
    iss = cookie_make(hdr, seqno, mssind);
    if (so.ts)
        tsval = stk_synck_tsval(sys_now(), so.wscale, so.sack);
    mss = TCP_MSS_CLAMP_USER(lpcb,
                             tcp_eff_send_mss(TCP_MSS, ip_current_dest_addr(),
                                              ip_current_src_addr()));
    olen = synack_opts(opts, mss, &so, tsval);
    p = pbuf_alloc(PBUF_IP, (u16_t)(TCP_HLEN + olen), PBUF_RAM);
    if (p == NULL)
        return 1; /* the client sends its SYN again */
    t = p->payload;
    t->src = lwip_htons(lpcb->local_port);
    t->dest = lwip_htons(hdr->src);
    t->seqno = lwip_htonl(iss);
    t->ackno = lwip_htonl(seqno + 1);
    TCPH_HDRLEN_FLAGS_SET(t, (TCP_HLEN + olen) / 4, TCP_SYN | TCP_ACK);
    t->wnd = lwip_htons(TCPWND_MIN16(TCP_WND));
    t->chksum = 0;
    t->urgp = 0;
    memcpy(t + 1, opts, olen);
    tcp_output_stateless(p, ip_current_dest_addr(), ip_current_src_addr());
    g->cookie_ns = last_cookie_ns = stk__now_ns();
    BASE_STAT_INC(tcp_syncookies_sent);
    xdp_ask(lpcb, g);
    return 1;
}

int
stk_tcp_listen_ack(struct tcp_pcb_listen *lpcb, const struct tcp_hdr *hdr,
                   uint16_t optlen, uint16_t opt1len, const uint8_t *opt2,
                   uint32_t seqno, uint32_t ackno, struct tcp_pcb **out)
{
    struct stk_lgroup *g = lpcb->callback_arg;
    const uint16_t *tab = ip_current_is_v6() ? mss6 : mss4;
    struct stk_tcp_opts o;
    struct tcp_pcb *npcb;
    uint32_t iss = ackno - 1, opt = STK_SYNCK_TS_WSCALE_NONE;
    int mssind;

    stk__seg_opts_forget(); /* not validated: a new segment for the hook */
    if (g == NULL || !recent(&g->cookie_ns, lpcb->local_port))
        return 0;
    mssind = cookie_check(hdr, iss, seqno - 1);
    if (mssind < 0) {
        BASE_STAT_INC(tcp_syncookies_failed);
        return 0;
    }
    if (!stk__group_has_room(g)) {
        BASE_STAT_INC(tcp_listen_overflow);
        return 1; /* dropped: the client sends its ACK again */
    }
    stk__tcp_opts(hdr, optlen, opt1len, opt2, &o);
    if (o.ts)
        opt = o.tsecr & ((1u << STK_SYNCK_TSBITS) - 1);
    if (lpcb->accepts_pending == 0xffff) {
        BASE_STAT_INC(tcp_listen_overflow);
        return 1; /* the count is 16-bit (patch 0037): as a full queue */
    }
    npcb = tcp_alloc(lpcb->prio);
    if (npcb == NULL)
        return 1;
    lpcb->accepts_pending++;
    tcp_set_flags(npcb, TF_BACKLOGPEND);
    ip_addr_copy(npcb->local_ip, *ip_current_dest_addr());
    ip_addr_copy(npcb->remote_ip, *ip_current_src_addr());
    npcb->local_port = lpcb->local_port;
    npcb->remote_port = hdr->src;
    npcb->state = SYN_RCVD;
    npcb->rcv_nxt = seqno;
    npcb->rcv_ann_right_edge = npcb->rcv_nxt;
    npcb->lastack = iss;
    npcb->snd_wl2 = iss;
    npcb->snd_nxt = iss + 1;
    npcb->snd_lbb = iss + 1;
    npcb->snd_wl1 = seqno - 2; /* before this ACK: it updates the window */
    npcb->callback_arg = lpcb->callback_arg;
    npcb->listener = lpcb;
    npcb->so_options = lpcb->so_options & SOF_INHERITED;
    npcb->netif_idx = lpcb->netif_idx;
    if (o.ts) {
        tcp_set_flags(npcb, TF_TIMESTAMP);
        npcb->ts_recent = o.tsval;
        npcb->ts_lastacksent = npcb->rcv_nxt;
        if ((opt & 0xf) != STK_SYNCK_TS_WSCALE_NONE) {
            npcb->snd_scale = (u8_t)(opt & 0xf);
            npcb->rcv_scale = TCP_RCV_SCALE;
            tcp_set_flags(npcb, TF_WND_SCALE);
            npcb->rcv_wnd = npcb->rcv_ann_wnd = TCP_WND;
        }
        if (opt & STK_SYNCK_TS_SACK)
            tcp_set_flags(npcb, TF_SACK);
    }
    npcb->snd_wnd = SND_WND_SCALE(npcb, hdr->wnd);
    npcb->snd_wnd_max = npcb->snd_wnd;
    npcb->user_mss = lpcb->user_mss;
    npcb->mss = TCP_MSS_CLAMP_USER(
        npcb, tcp_eff_send_mss(tab[mssind], &npcb->local_ip, &npcb->remote_ip));
    TCP_REG_ACTIVE(npcb);
    if (tcp_ext_arg_invoke_callbacks_passive_open(lpcb, npcb) != ERR_OK) {
        tcp_abandon(npcb, 0);
        return 1;
    }
    BASE_STAT_INC(tcp_syncookies_recv);
    *out = npcb;
    return 2;
}

int
stk_tcp_tw_cookie(const struct tcp_hdr *hdr, uint32_t seqno, uint32_t ackno)
{
    if (!recent(&last_cookie_ns, lwip_ntohs(hdr->dest)))
        return 0;
    return cookie_check(hdr, ackno - 1, seqno - 1) >= 0;
}
