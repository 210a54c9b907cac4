/*
 * SYN cookies answered in the XDP program while a listener is flooded.
 *
 * The stack answers SYNs with cookies once a listener's backlog is full
 * (stack/syncookie.c), but each SYN of a flood still crosses the XSK into
 * the process and each SYN-ACK the XSK back: at a few hundred thousand
 * frames a second that copy work, not the stack, is what the server's CPU
 * spends its time on, and the SYNs of legitimate clients are lost among
 * the flood's in the full receive ring. So when the stack sends a cookie
 * it also asks for this (link op syn_cookies, runtime/xdpsynck.c): the
 * listener's port goes into accel_synck for a second, and meanwhile every
 * SYN to it is answered here, in the driver's receive path, with the very
 * SYN-ACK the stack would have sent (the same SipHash-2-4 cookie keyed
 * with the ISN's secret, the same MSS index, the same TSval encoding of
 * window scale and SACK, the same options in Linux's order: the
 * arithmetic is stack/stk_synck.h, the hash base/siphash.h). The flood
 * never reaches the process; the ACK a legitimate client sends back does,
 * and the stack makes the connection from its cookie as from its own. A
 * SYN the stack should see (options it needs that a cookie cannot hold
 * are dropped by Linux's cookies too) gets the same treatment; anything
 * that is not a plain SYN goes on as before. When the deadline passes the
 * SYNs reach the stack again: if the backlog is still full, the stack asks
 * again.
 *
 * Included by steer.bpf.c only.
 */
#ifndef ACCEL_XDP_SYNCK_BPF_H
#define ACCEL_XDP_SYNCK_BPF_H

#include "siphash.h"
#include "stk_synck.h"
#include "turn.bpf.h"

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, ACCEL_SYNCK_MAX);
    __type(key, __u16);
    __type(value, struct accel_synck);
} accel_synck SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} accel_synck_n SEC(".maps");

/* TCP option kinds (netinet/tcp.h is libc's) */
#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MSS 2
#define TCPOPT_WINDOW 3
#define TCPOPT_SACK_PERM 4
#define TCPOPT_TIMESTAMP 8

/* The stack's clock (base_now_ns) follows CLOCK_MONOTONIC through the TSC
 * and may lag it by a little: a cookie made a moment after a minute turned
 * would look one from the future to it. This much earlier, never. */
#define SYNCK_CLOCK_LAG_NS 1000000ull

/* The options of a SYN that a cookie keeps. */
struct synck_opts {
    __u32 tsval;
    __u16 mss;
    __u8 wscale; /* 0xff: none */
    __u8 sack, ts;
};

/* One option per call of synck_opt (bpf_loop: the verifier checks the
 * callback, not 40 unrolled steps). The bytes are fetched with
 * bpf_xdp_load_bytes at an offset the verifier need not follow, so its
 * states of successive calls merge. */
struct synck_walk {
    struct xdp_md *ctx;
    __u32 off, len, i; /* the options' offset and length; the cursor */
    struct synck_opts *o;
};

static long
synck_opt(__u32 k, void *arg)
{
    struct synck_walk *w = arg;
    struct synck_opts *o = w->o;
    __u32 i = w->i;
    __u8 h[2], v[8];

    (void)k;
    if (i >= w->len || bpf_xdp_load_bytes(w->ctx, w->off + i, h, 1) != 0 ||
        h[0] == TCPOPT_EOL)
        return 1;
    if (h[0] == TCPOPT_NOP) {
        w->i = i + 1;
        return 0;
    }
    if (i + 1 >= w->len || bpf_xdp_load_bytes(w->ctx, w->off + i, h, 2) != 0 ||
        h[1] < 2 || i + h[1] > w->len)
        return 1;
    if (h[0] == TCPOPT_MSS && h[1] == 4) {
        if (bpf_xdp_load_bytes(w->ctx, w->off + i + 2, v, 2) == 0)
            o->mss = (__u16)(v[0] << 8 | v[1]);
    } else if (h[0] == TCPOPT_WINDOW && h[1] == 3) {
        if (bpf_xdp_load_bytes(w->ctx, w->off + i + 2, v, 1) == 0)
            o->wscale = v[0] > 14 ? 14 : v[0];
    } else if (h[0] == TCPOPT_SACK_PERM && h[1] == 2) {
        o->sack = 1;
    } else if (h[0] == TCPOPT_TIMESTAMP && h[1] == 10) {
        if (bpf_xdp_load_bytes(w->ctx, w->off + i + 2, v, 4) == 0) {
            o->ts = 1;
            o->tsval =
                (__u32)v[0] << 24 | (__u32)v[1] << 16 | (__u32)v[2] << 8 | v[3];
        }
    }
    w->i = i + h[1];
    return 0;
}

/* The SYN's options (optlen bytes at off), as stack/syncookie.c reads
 * them: the first of each kind with the right length. */
static __always_inline void
synck_opts(struct xdp_md *ctx, __u32 off, __u32 optlen, struct synck_opts *o)
{
    struct synck_walk w = {.ctx = ctx, .off = off, .len = optlen, .o = o};

    o->tsval = 0;
    o->mss = 536;
    o->wscale = 0xff;
    o->sack = o->ts = 0;
    if (optlen != 0 && optlen <= 40)
        bpf_loop(40, synck_opt, &w, 0);
}

/* The index of the largest table MSS the peer's allows (0 at least). */
static __always_inline __u32
synck_mssind(__u16 mss, int v6)
{
    const __u16 t4[] = STK_SYNCK_MSS4, t6[] = STK_SYNCK_MSS6;
    const __u16 *t = v6 ? t6 : t4;

    if (mss >= t[3])
        return 3;
    if (mss >= t[2])
        return 2;
    return mss >= t[1] ? 1 : 0;
}

/* The SYN-ACK's options at o (olen bytes: 4, 16 or 20), as
 * stack/syncookie.c's synack_opts writes them. */
static __always_inline void
synck_put_opts(__u8 *o, __u32 olen, __u16 mss, const struct synck_opts *so,
               __u32 tsval, __u8 wscale)
{
    o[0] = TCPOPT_MSS;
    o[1] = 4;
    o[2] = (__u8)(mss >> 8);
    o[3] = (__u8)mss;
    if (olen == 4)
        return;
    o[4] = so->sack ? TCPOPT_SACK_PERM : TCPOPT_NOP;
    o[5] = so->sack ? 2 : TCPOPT_NOP;
    o[6] = TCPOPT_TIMESTAMP;
    o[7] = 10;
    *(__be32 *)(o + 8) = bpf_htonl(tsval);
    *(__be32 *)(o + 12) = bpf_htonl(so->tsval);
    if (olen == 16)
        return;
    o[16] = TCPOPT_NOP;
    o[17] = TCPOPT_WINDOW;
    o[18] = 3;
    o[19] = wscale;
}

/* What the SYN-ACK is made of, gathered before the frame is resized. */
struct synck_in {
    __u32 seq; /* the SYN's, host order */
    __u16 sport, dport;
    struct synck_opts so;
    const struct accel_synck *c;
    __u64 now;
};

/* The cookie for the SYN in s; m holds the 4-tuple's words, its last
 * left for the salt (n words in all). */
static __always_inline __u32
synck_cookie(struct synck_in *s, uint64_t *m, __u32 n, int v6)
{
    __u32 minute = (__u32)((s->now - SYNCK_CLOCK_LAG_NS) / STK_SYNCK_MINUTE_NS);
    __u32 h1, h2;

    m[n - 1] = STK_SYNCK_SALT_H1;
    h1 = (__u32)base_siphash((const uint64_t *)s->c->key, m, n, 2, 4);
    m[n - 1] = STK_SYNCK_SALT_H2 | (minute & 0xff);
    h2 = (__u32)base_siphash((const uint64_t *)s->c->key, m, n, 2, 4);
    return stk_synck_make(h1, h2, s->seq, minute, synck_mssind(s->so.mss, v6));
}

/* tcp (olen bytes of options after it) as the SYN-ACK for s with
 * sequence number iss; the checksum is left 0. */
static __always_inline void
synck_header(struct tcphdr *tcp, __u32 olen, const struct synck_in *s,
             __u32 iss, int v6)
{
    __u32 tsval = 0;

    if (s->so.ts)
        tsval = stk_synck_tsval((__u32)(s->now / 1000000u), s->so.wscale,
                                s->so.sack);
    tcp->source = bpf_htons(s->dport);
    tcp->dest = bpf_htons(s->sport);
    tcp->seq = bpf_htonl(iss);
    tcp->ack_seq = bpf_htonl(s->seq + 1);
    *((__u8 *)tcp + 12) = (__u8)(((sizeof(*tcp) + olen) / 4) << 4);
    *((__u8 *)tcp + 13) = 0x12; /* SYN|ACK */
    tcp->window = bpf_htons(s->c->wnd);
    tcp->check = 0;
    tcp->urg_ptr = 0;
    synck_put_opts((__u8 *)(tcp + 1), olen, v6 ? s->c->mss6 : s->c->mss4,
                   &s->so, tsval, s->c->wscale);
}

/* The options a SYN-ACK to so has: 4 (MSS only: a cookie without
 * timestamps keeps nothing else), 16 (with timestamps) or 20 (and
 * window scale). */
static __always_inline __u32
synck_olen(const struct synck_opts *so)
{
    if (!so->ts)
        return 4;
    return so->wscale == 0xff ? 16 : 20;
}

/* A plain SYN (no ACK, RST, FIN) to a port in accel_synck before its
 * deadline, its header hl bytes: the answer's ingredients in s, 0; or -1
 * (not this program's to answer). */
static __always_inline int
synck_take(struct xdp_md *ctx, const struct tcphdr *tcp, __u32 tcpoff,
           __u32 l4len, struct synck_in *s)
{
    __u16 port = tcp->dest;
    __u32 hl = (__u32)tcp->doff * 4;

    if (!tcp->syn || tcp->ack || tcp->rst || tcp->fin || hl < sizeof(*tcp) ||
        hl > l4len)
        return -1;
    s->c = bpf_map_lookup_elem(&accel_synck, &port);
    if (s->c == NULL)
        return -1;
    s->now = bpf_ktime_get_ns();
    if (s->now > s->c->until_ns)
        return -1;
    s->seq = bpf_ntohl(tcp->seq);
    s->sport = bpf_ntohs(tcp->source);
    s->dport = bpf_ntohs(port);
    synck_opts(ctx, tcpoff + sizeof(*tcp), hl - sizeof(*tcp), &s->so);
    return 0;
}

static __always_inline void
synck_count(void)
{
    __u32 k = 0;
    __u64 *n = bpf_map_lookup_elem(&accel_synck_n, &k);

    if (n != NULL)
        (*n)++;
}

/* The frame resized to size bytes: 0, or -1. */
static __always_inline int
synck_resize(struct xdp_md *ctx, __u32 size)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;

    return bpf_xdp_adjust_tail(ctx, (int)size - (int)(end - data)) == 0 ? 0
                                                                        : -1;
}

/* The IPv4 SYN-ACK with olen bytes of options (a constant where it is
 * inlined), in place of the SYN. */
static __always_inline int
synck_tx4(struct xdp_md *ctx, struct synck_in *s, __u32 iss, __u32 olen)
{
    __u32 tcplen = sizeof(struct tcphdr) + olen;
    struct ethhdr *eth;
    struct iphdr *ip;
    struct tcphdr *tcp;

    if (synck_resize(ctx, sizeof(*eth) + sizeof(*ip) + tcplen) != 0)
        return XDP_DROP;
    eth = (void *)(long)ctx->data;
    ip = (void *)(eth + 1);
    tcp = (void *)(ip + 1);
    if ((void *)tcp + tcplen > (void *)(long)ctx->data_end)
        return XDP_DROP;
    turn4(eth, ip, tcplen);
    synck_header(tcp, olen, s, iss, 0);
    tcp_csum4(ip, tcp, tcplen);
    synck_count();
    return XDP_TX;
}

/* A SYN to the stack's IPv4 address: XDP_TX with the cookie SYN-ACK when
 * its port is flooded (accel_synck), -1 otherwise. */
__noinline int
synck4(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    struct iphdr *ip = data + sizeof(struct ethhdr);
    struct tcphdr *tcp = (void *)(ip + 1);
    struct synck_in s;
    uint64_t m[3];
    __u32 iss, l4len;

    if ((void *)(tcp + 1) > end || ip->ihl != 5 ||
        ip->protocol != IPPROTO_TCP || (ip->frag_off & bpf_htons(0x3fff)) != 0)
        return -1;
    l4len = bpf_ntohs(ip->tot_len);
    if (l4len < sizeof(*ip) + sizeof(*tcp))
        return -1;
    l4len -= sizeof(*ip);
    if (synck_take(ctx, tcp, sizeof(struct ethhdr) + sizeof(*ip), l4len, &s) !=
        0)
        return -1;
    /* stack/isn.c's words: local and remote address, as in memory */
    m[0] = ((uint64_t)ip->daddr << 32) | ip->saddr;
    m[1] = ((uint64_t)s.dport << 16) | s.sport;
    iss = synck_cookie(&s, m, 3, 0);
    switch (synck_olen(&s.so)) {
    case 4:
        return synck_tx4(ctx, &s, iss, 4);
    case 16:
        return synck_tx4(ctx, &s, iss, 16);
    default:
        return synck_tx4(ctx, &s, iss, 20);
    }
}

/* synck_tx4 for IPv6. */
static __always_inline int
synck_tx6(struct xdp_md *ctx, struct synck_in *s, __u32 iss, __u32 olen)
{
    __u32 tcplen = sizeof(struct tcphdr) + olen;
    struct ethhdr *eth;
    struct ipv6hdr *ip6;
    struct tcphdr *tcp;

    if (synck_resize(ctx, sizeof(*eth) + sizeof(*ip6) + tcplen) != 0)
        return XDP_DROP;
    eth = (void *)(long)ctx->data;
    ip6 = (void *)(eth + 1);
    tcp = (void *)(ip6 + 1);
    if ((void *)tcp + tcplen > (void *)(long)ctx->data_end)
        return XDP_DROP;
    turn6(eth, ip6, tcplen);
    synck_header(tcp, olen, s, iss, 1);
    tcp_csum6(ip6, tcp, tcplen);
    synck_count();
    return XDP_TX;
}

/* synck4 for a SYN to one of the stack's IPv6 addresses (no extension
 * headers: the stack sees the others). */
__noinline int
synck6(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);
    struct tcphdr *tcp = (void *)(ip6 + 1);
    struct synck_in s;
    uint64_t m[6];
    __u32 iss;

    if ((void *)(tcp + 1) > end || ip6->nexthdr != IPPROTO_TCP ||
        ip6->saddr.in6_u.u6_addr8[0] == 0xff)
        return -1;
    if (synck_take(ctx, tcp, sizeof(struct ethhdr) + sizeof(*ip6),
                   bpf_ntohs(ip6->payload_len), &s) != 0)
        return -1;
    __builtin_memcpy(&m[0], &ip6->daddr, 16);
    __builtin_memcpy(&m[2], &ip6->saddr, 16);
    m[4] = ((uint64_t)s.dport << 16) | s.sport;
    iss = synck_cookie(&s, m, 6, 1);
    switch (synck_olen(&s.so)) {
    case 4:
        return synck_tx6(ctx, &s, iss, 4);
    case 16:
        return synck_tx6(ctx, &s, iss, 16);
    default:
        return synck_tx6(ctx, &s, iss, 20);
    }
}

#endif /* ACCEL_XDP_SYNCK_BPF_H */
