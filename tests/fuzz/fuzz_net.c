/*
 * The stack fixture of the frame and socket-call fuzzers: see fuzz_net.h.
 * It reaches into lwIP (the lists of pcbs, the ARP and neighbour caches)
 * only to reset them between inputs, as a process restart would.
 */
#include "fuzz_net.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/nd6.h"
#include "lwip/netif.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "log.h"
#include "stk_test.h"

const uint8_t fn_stack_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
const uint8_t fn_peer_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
const uint8_t fn_stack_ip6[16] = {0xfd, 0, 2, 0, 0, 0, 0, 0,
                                  0,    0, 0, 0, 0, 0, 0, 2};
const uint8_t fn_peer_ip6[16] = {0xfd, 0, 2, 0, 0, 0, 0, 0,
                                 0,    0, 0, 0, 0, 0, 0, 1};
const uint8_t fn_stack_ll6[16] = {0xfe, 0x80, 0, 0,    0,    0, 0, 0,
                                  0,    0,    0, 0xff, 0xfe, 0, 0, 2};
const uint8_t fn_peer_ll6[16] = {0xfe, 0x80, 0, 0,    0,    0, 0, 0,
                                 0,    0,    0, 0xff, 0xfe, 0, 0, 1};

struct fn_flow fn_flows[FN_FLOWS];
static unsigned flow_next;

static uint64_t now_ns = 1000000000ull;
static uint8_t txbuf[FN_FRAME_MAX + 64];
static long base_blocks;

/* Answers the peer owes the stack (ARP replies, neighbour adverts), sent
 * once the stack has returned: never from inside its output path. */
#define PENDING_MAX 8
static struct {
    bool v6;
    uint8_t target[16]; /* IPv4: 4 bytes */
    uint8_t dst6[16];   /* the solicitation's source */
} pending[PENDING_MAX];
static int npending;

static uint16_t
get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static uint32_t
get32(const uint8_t *p)
{
    return (uint32_t)get16(p) << 16 | get16(p + 2);
}
static void
put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void
put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

static uint32_t
sum16(const uint8_t *p, size_t n, uint32_t sum)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += get16(p + i);
    if (n & 1)
        sum += (uint32_t)p[n - 1] << 8;
    return sum;
}

static uint16_t
fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static bool
seq_gt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

/* ---- flows ------------------------------------------------------------ */

struct fn_flow *
fn_flow_find(bool v6, uint16_t sport, uint16_t pport)
{
    for (int i = 0; i < FN_FLOWS; i++)
        if (fn_flows[i].used && fn_flows[i].v6 == v6 &&
            fn_flows[i].sport == sport && fn_flows[i].pport == pport)
            return &fn_flows[i];
    return NULL;
}

struct fn_flow *
fn_flow_add(bool v6, uint16_t sport, uint16_t pport)
{
    struct fn_flow *f = fn_flow_find(v6, sport, pport);

    if (f == NULL) {
        f = &fn_flows[flow_next++ % FN_FLOWS];
        memset(f, 0, sizeof(*f));
        f->used = true;
        f->v6 = v6;
        f->sport = sport;
        f->pport = pport;
    }
    return f;
}

/* A TCP segment the stack sent (l4: n bytes from its header on). */
static void
note_tcp(bool v6, const uint8_t *l4, size_t n)
{
    uint16_t sport, pport;
    uint32_t seq, end;
    uint8_t flags;
    size_t hl;
    struct fn_flow *f;

    if (n < 20)
        return;
    sport = get16(l4);
    pport = get16(l4 + 2);
    seq = get32(l4 + 4);
    flags = l4[13];
    hl = (size_t)(l4[12] >> 4) * 4;
    if (hl < 20 || hl > n)
        return;
    f = fn_flow_find(v6, sport, pport);
    if (flags & 0x04) { /* RST: the connection is gone */
        if (f != NULL)
            f->used = false;
        return;
    }
    if (f == NULL && !(flags & 0x02))
        return;
    if (f == NULL || (flags & 0x02)) {
        f = fn_flow_add(v6, sport, pport);
        f->snd_nxt = seq;
        f->syn = !(flags & 0x10);
    }
    end = seq + (uint32_t)(n - hl) + ((flags & 0x02) ? 1 : 0) +
          ((flags & 0x01) ? 1 : 0);
    if (seq_gt(end, f->snd_nxt))
        f->snd_nxt = end;
    if (flags & 0x10) {
        f->rcv_nxt = get32(l4 + 8);
        if (!f->acked || seq_gt(f->rcv_nxt, f->peer_nxt))
            f->peer_nxt = f->rcv_nxt;
        f->acked = true;
    }
}

/* ---- the fake netif's output -------------------------------------------- */

static uint8_t *
tx_alloc(void *ctx, uint16_t len, void **handle)
{
    (void)ctx;
    *handle = NULL;
    return len <= sizeof(txbuf) ? txbuf : NULL;
}

static void
want_reply(bool v6, const uint8_t *target, const uint8_t *dst6)
{
    if (npending == PENDING_MAX)
        return;
    pending[npending].v6 = v6;
    memcpy(pending[npending].target, target, v6 ? 16 : 4);
    if (v6)
        memcpy(pending[npending].dst6, dst6, 16);
    npending++;
}

static void
tx_send(void *ctx, void *handle, uint16_t len)
{
    const uint8_t *f = txbuf, *p = txbuf + 14;
    size_t n = len > 14 ? len - 14u : 0;
    uint16_t type;

    (void)ctx;
    (void)handle;
    if (len < 14)
        abort(); /* the stack never sends a runt */
    type = get16(f + 12);
    if (type == 0x0806 && n >= 28) {
        if (get16(p + 6) == 1 && get32(p + 24) == FN_PEER_IP)
            want_reply(false, p + 24, NULL);
    } else if (type == 0x0800 && n >= 20) {
        size_t ihl = (size_t)(p[0] & 0xf) * 4, tot = get16(p + 2);

        if (ihl >= 20 && tot <= n && tot >= ihl && p[9] == 6 &&
            (get16(p + 6) & 0x3fff) == 0 && get32(p + 16) == FN_PEER_IP)
            note_tcp(false, p + ihl, tot - ihl);
    } else if (type == 0x86dd && n >= 40) {
        size_t plen = get16(p + 4);

        if (plen > n - 40)
            return;
        if (p[6] == 58 && plen >= 24 && p[40] == 135 &&
            (memcmp(p + 48, fn_peer_ip6, 16) == 0 ||
             memcmp(p + 48, fn_peer_ll6, 16) == 0))
            want_reply(true, p + 48, p + 8);
        else if (p[6] == 6 && memcmp(p + 24, fn_peer_ip6, 16) == 0)
            note_tcp(true, p + 40, plen);
    }
}

static void
notify(void *ctx, uint32_t ev)
{
    (void)ctx;
    (void)ev;
}

static uint64_t
clock_ns(void)
{
    return now_ns;
}

/* The peer's answers to what the stack asked. */
void
fn_pump(void)
{
    uint8_t f[14 + 72];

    for (int k = 0; k < npending; k++) {
        memcpy(f, fn_stack_mac, 6);
        memcpy(f + 6, fn_peer_mac, 6);
        if (!pending[k].v6) {
            uint8_t *a = f + 14;

            put16(f + 12, 0x0806);
            put16(a, 1);
            put16(a + 2, 0x0800);
            a[4] = 6;
            a[5] = 4;
            put16(a + 6, 2);
            memcpy(a + 8, fn_peer_mac, 6);
            memcpy(a + 14, pending[k].target, 4);
            memcpy(a + 18, fn_stack_mac, 6);
            put32(a + 24, FN_STACK_IP);
            stk_input(f, 14 + 28);
        } else {
            uint8_t *ip = f + 14, *na = ip + 40;

            put16(f + 12, 0x86dd);
            memset(ip, 0, 40);
            ip[0] = 0x60;
            put16(ip + 4, 32);
            ip[6] = 58;
            ip[7] = 255;
            memcpy(ip + 8, pending[k].target, 16);
            memcpy(ip + 24, pending[k].dst6, 16);
            memset(na, 0, 32);
            na[0] = 136;
            na[4] = 0x60; /* solicited, override */
            memcpy(na + 8, pending[k].target, 16);
            na[24] = 2; /* target link-layer address */
            na[25] = 1;
            memcpy(na + 26, fn_peer_mac, 6);
            fn_fix_csum(f, 14 + 72);
            stk_input(f, 14 + 72);
        }
    }
    npending = 0;
}

/* ---- clock and input -------------------------------------------------- */

void
fn_check(void)
{
    if (stk_test_asserts() != 0) {
        fprintf(stderr, "fuzz: an lwIP assertion failed\n");
        abort();
    }
}

void
fn_advance(uint32_t ms)
{
    uint64_t end = now_ns + (uint64_t)ms * 1000000u;
    /* To the next timer, but 10 ms at least (a busy poll loop's pace, as
     * the stack tests step) and a 50th of the whole step: timers fire up
     * to that late, as in a process that was descheduled; a long step
     * stays a few dozen turns. */
    uint64_t min_step = (uint64_t)ms * 1000000u / 50;

    if (min_step < 10000000u)
        min_step = 10000000u;
    do {
        uint64_t step = (uint64_t)stk_next_timer_ms() * 1000000u;

        if (step < min_step)
            step = min_step;
        if (step > end - now_ns)
            step = end - now_ns;
        now_ns += step;
        stk_timers();
        fn_pump();
    } while (now_ns < end);
    fn_check();
}

void
fn_input(const uint8_t *frame, size_t len)
{
    if (len > FN_FRAME_MAX)
        len = FN_FRAME_MAX;
    stk_input(frame, (uint16_t)len);
    fn_pump();
    fn_check();
}

/* ---- frames ----------------------------------------------------------- */

static size_t
ip_frame(uint8_t *b, bool v6, uint8_t proto, size_t l4len)
{
    memcpy(b, fn_stack_mac, 6);
    memcpy(b + 6, fn_peer_mac, 6);
    if (v6) {
        uint8_t *ip = b + 14;

        put16(b + 12, 0x86dd);
        memset(ip, 0, 8);
        ip[0] = 0x60;
        put16(ip + 4, (uint16_t)l4len);
        ip[6] = proto;
        ip[7] = 64;
        memcpy(ip + 8, fn_peer_ip6, 16);
        memcpy(ip + 24, fn_stack_ip6, 16);
        return 14 + 40 + l4len;
    }
    uint8_t *ip = b + 14;

    put16(b + 12, 0x0800);
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20 + l4len));
    put16(ip + 4, 1);
    ip[8] = 64;
    ip[9] = proto;
    put32(ip + 12, FN_PEER_IP);
    put32(ip + 16, FN_STACK_IP);
    return 14 + 20 + l4len;
}

size_t
fn_tcp(uint8_t *buf, bool v6, const struct fn_seg *s)
{
    size_t optlen = s->optlen > 40 ? 40 : s->optlen;
    size_t hl = 20 + (optlen + 3) / 4 * 4;
    size_t room = FN_FRAME_MAX - 14 - (v6 ? 40 : 20) - hl;
    size_t len = s->len > room ? room : s->len;
    uint8_t *t = buf + 14 + (v6 ? 40 : 20);
    size_t n;

    put16(t, s->sport);
    put16(t + 2, s->dport);
    put32(t + 4, s->seq);
    put32(t + 8, s->ack);
    t[12] = (uint8_t)((hl / 4) << 4);
    t[13] = s->flags;
    put16(t + 14, s->win);
    put16(t + 16, 0);
    put16(t + 18, s->urp);
    memset(t + 20, 0, hl - 20);
    if (optlen > 0)
        memcpy(t + 20, s->opt, optlen);
    if (len > 0)
        memcpy(t + hl, s->data, len);
    n = ip_frame(buf, v6, 6, hl + len);
    fn_fix_csum(buf, n);
    return n;
}

size_t
fn_udp(uint8_t *buf, bool v6, uint16_t sport, uint16_t dport,
       const uint8_t *data, size_t len)
{
    size_t room = FN_FRAME_MAX - 14 - (v6 ? 40 : 20) - 8;
    uint8_t *u = buf + 14 + (v6 ? 40 : 20);
    size_t n;

    if (len > room)
        len = room;
    put16(u, sport);
    put16(u + 2, dport);
    put16(u + 4, (uint16_t)(8 + len));
    put16(u + 6, 0);
    if (len > 0)
        memcpy(u + 8, data, len);
    n = ip_frame(buf, v6, 17, 8 + len);
    fn_fix_csum(buf, n);
    return n;
}

/* The checksum of an upper-layer message at l4 (n bytes) whose checksum
 * field is at off, over the pseudo header sum ps. */
static void
fix_l4(uint8_t *l4, size_t n, size_t off, uint32_t ps, bool udp)
{
    uint16_t c;

    if (n < off + 2)
        return;
    put16(l4 + off, 0);
    c = fold(sum16(l4, n, ps));
    put16(l4 + off, udp && c == 0 ? 0xffff : c);
}

void
fn_fix_csum(uint8_t *f, size_t len)
{
    uint8_t *p = f + 14;
    size_t n = len > 14 ? len - 14 : 0;
    uint16_t type;

    if (len < 14)
        return;
    type = get16(f + 12);
    if (type == 0x0800 && n >= 20) {
        size_t ihl = (size_t)(p[0] & 0xf) * 4, tot = get16(p + 2);
        uint32_t ps;

        if (ihl < 20 || ihl > n)
            return;
        put16(p + 10, 0);
        put16(p + 10, fold(sum16(p, ihl, 0)));
        if (tot > n)
            tot = n;
        if (tot < ihl || (get16(p + 6) & 0x3fff) != 0)
            return;
        ps = sum16(p + 12, 8, 0) + p[9] + (uint32_t)(tot - ihl);
        if (p[9] == 6)
            fix_l4(p + ihl, tot - ihl, 16, ps, false);
        else if (p[9] == 17)
            fix_l4(p + ihl, tot - ihl, 6, ps, true);
        else if (p[9] == 1)
            fix_l4(p + ihl, tot - ihl, 2, 0, false);
    } else if (type == 0x86dd && n >= 40) {
        size_t plen = get16(p + 4);
        uint32_t ps;

        if (plen > n - 40)
            plen = n - 40;
        ps = sum16(p + 8, 32, 0) + p[6] + (uint32_t)plen;
        if (p[6] == 6)
            fix_l4(p + 40, plen, 16, ps, false);
        else if (p[6] == 17)
            fix_l4(p + 40, plen, 6, ps, true);
        else if (p[6] == 58)
            fix_l4(p + 40, plen, 2, ps, false);
    }
}

void
fn_readdress(uint8_t *f, size_t len)
{
    uint8_t *p = f + 14;
    size_t n = len > 14 ? len - 14 : 0;
    uint16_t type;

    if (len < 14)
        return;
    memcpy(f + 6, fn_peer_mac, 6);
    memcpy(f, fn_stack_mac, 6);
    type = get16(f + 12);
    if (type == 0x0806 && n >= 28) {
        memcpy(p + 8, fn_peer_mac, 6);
        put32(p + 14, FN_PEER_IP);
        put32(p + 24, FN_STACK_IP);
    } else if (type == 0x0800 && n >= 20) {
        uint32_t dst = get32(p + 16);

        put32(p + 12, FN_PEER_IP);
        if ((dst >> 28) == 0xe) { /* multicast: 01:00:5e + 23 bits */
            f[0] = 0x01;
            f[1] = 0x00;
            f[2] = 0x5e;
            f[3] = (uint8_t)((dst >> 16) & 0x7f);
            f[4] = (uint8_t)(dst >> 8);
            f[5] = (uint8_t)dst;
        } else if (dst == 0xffffffffu || (dst & 0xff) == 0xff) {
            memset(f, 0xff, 6);
        } else {
            put32(p + 16, FN_STACK_IP);
        }
    } else if (type == 0x86dd && n >= 40) {
        if (p[24] == 0xff) { /* multicast: 33:33 + the low 32 bits */
            f[0] = f[1] = 0x33;
            memcpy(f + 2, p + 36, 4);
            memcpy(p + 8, fn_peer_ll6, 16);
        } else if (p[24] == 0xfe && (p[25] & 0xc0) == 0x80) {
            memcpy(p + 8, fn_peer_ll6, 16);
            memcpy(p + 24, fn_stack_ll6, 16);
        } else {
            memcpy(p + 8, fn_peer_ip6, 16);
            memcpy(p + 24, fn_stack_ip6, 16);
        }
    }
}

/* ---- setup and the per-input reset ------------------------------------ */

void
fn_init(void)
{
    static bool done;
    struct stk_netif_cfg cfg;
    struct in6_addr a6;
    const uint64_t key[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};

    if (done)
        return;
    done = true;
    base_log_level = BASE_LOG_ERROR;
    stk_test_set_clock(clock_ns);
    stk_isn_set_key(key);
    memset(&cfg, 0, sizeof(cfg));
    cfg.ip = htonl(FN_STACK_IP);
    cfg.netmask = htonl(0xffffff00u);
    memcpy(cfg.mac, fn_stack_mac, 6);
    cfg.mtu = 1500;
    cfg.link.tx_alloc = tx_alloc;
    cfg.link.tx_send = tx_send;
    if (stk_init(&cfg) != 0)
        abort();
    memcpy(&a6, fn_stack_ip6, 16);
    if (stk_netif_set_ip6(&a6, 64) != 0)
        abort();
    stk_set_notify(notify);
    fn_advance(100);
    fn_end(); /* settles the caches; takes the baseline below */
    base_blocks = stk_test_mem_blocks();
}

void
fn_begin(void)
{
    memset(fn_flows, 0, sizeof(fn_flows));
    flow_next = 0;
}

static bool
settled(void)
{
    return stk_test_mem_blocks() == base_blocks && stk_test_socks() == 0 &&
           stk_test_lgroups() == 0 && stk_test_pcb_hash_entries() == 0;
}

void
fn_end(void)
{
    struct netif *nif = netif_default;

    /* Connections no socket holds any more (closing, TIME-WAIT, half
     * open), as the timers would end them minutes later. */
    while (tcp_active_pcbs != NULL)
        tcp_abort(tcp_active_pcbs);
    while (tcp_tw_pcbs != NULL)
        tcp_abort(tcp_tw_pcbs);
    fn_pump();
    /* What the frames taught the netif: neighbours, routers, prefixes,
     * the path MTU and hop limit of router advertisements. */
    etharp_cleanup_netif(nif);
    nd6_cleanup_netif(nif);
    nif->mtu6 = nif->mtu;
    npending = 0;
    /* Datagrams being reassembled expire (IPv6 after 60 s). */
    for (int i = 0; i < 70 && base_blocks != 0 && !settled(); i++)
        fn_advance(1000);
    fn_check();
    if (base_blocks != 0 && !settled()) {
        fprintf(stderr,
                "fuzz: the input left state behind: lwIP blocks %ld (base "
                "%ld), sockets %ld, listener groups %ld, lookup entries "
                "%ld\n",
                stk_test_mem_blocks(), base_blocks, stk_test_socks(),
                stk_test_lgroups(), stk_test_pcb_hash_entries());
        abort();
    }
    if (stk_test_pcb_hash_anomalies() != 0 || stk_test_pcb_hash_check() != 0) {
        fprintf(stderr, "fuzz: the PCB lookup table is out of step\n");
        abort();
    }
}

/* ---- sockets ---------------------------------------------------------- */

socklen_t
fn_sin(struct sockaddr_storage *ss, uint32_t ip, uint16_t port)
{
    struct sockaddr_in *a = (struct sockaddr_in *)ss;

    memset(ss, 0, sizeof(*ss));
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(ip);
    a->sin_port = htons(port);
    return sizeof(*a);
}

socklen_t
fn_sin6(struct sockaddr_storage *ss, const uint8_t *a6, uint16_t port)
{
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

    memset(ss, 0, sizeof(*ss));
    a->sin6_family = AF_INET6;
    memcpy(&a->sin6_addr, a6, 16);
    a->sin6_port = htons(port);
    return sizeof(*a);
}

struct stk_sock *
fn_socket(int type, bool v6)
{
    struct stk_sock *s = NULL;

    if (stk_sock_create(type, &s) != 0)
        return NULL;
    if (v6 && stk_sock_set_inet6(s, false) != 0)
        abort();
    return s;
}

void
fn_drain_sock(struct stk_sock *s)
{
    static uint8_t buf[16384];
    uint8_t ctl[256];
    struct sockaddr_storage from;

    for (int i = 0; i < 4; i++) {
        struct iovec iov = {buf, sizeof(buf)};
        struct msghdr m;

        memset(&m, 0, sizeof(m));
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_name = &from;
        m.msg_namelen = sizeof(from);
        m.msg_control = ctl;
        m.msg_controllen = sizeof(ctl);
        if (stk_sock_recvmsg(s, &m, 0) <= 0)
            break;
    }
}
