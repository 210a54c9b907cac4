/*
 * Fuzzer: sequences of socket calls on the stack's socket layer (stk.h)
 * interleaved with a scripted peer's segments and clock steps. The input
 * is read as operations, each an opcode byte and its operands:
 *   socket / bind / listen / connect / accept / send / recv / shutdown /
 *   close / setsockopt / getsockopt (fuzzed values and lengths) / poll
 *   (readiness, FIONREAD, SIOCOUTQ, names, SO_ERROR of every socket);
 *   the peer: a TCP segment on a flow the stack's output showed (any
 *   flags; seq and ack at the flow's real position, near it, behind it
 *   or raw; data; raw TCP options), a SYN to a stack port, a UDP
 *   datagram, an ICMP error about a flow;
 *   the clock: a step of up to a minute.
 * Up to 8 sockets are open at once. Nothing here blocks; every socket is
 * closed at the end and fn_end() checks nothing was left behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_net.h"

#define NSLOTS 8

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n);

static struct stk_sock *slot[NSLOTS];
static const uint8_t *cur;
static size_t left;
static uint8_t frame[FN_FRAME_MAX], data[20000], rbuf[20000];

static uint8_t
get8(void)
{
    if (left == 0)
        return 0;
    left--;
    return *cur++;
}

static uint16_t
get16(void)
{
    return (uint16_t)(get8() << 8 | get8());
}

static uint32_t
get32(void)
{
    return (uint32_t)get16() << 16 | get16();
}

/* Up to max bytes of the input (fewer when it ends); *len gets how many. */
static const uint8_t *
getbuf(size_t max, size_t *len)
{
    const uint8_t *p = cur;

    *len = max < left ? max : left;
    cur += *len;
    left -= *len;
    return p;
}

static struct stk_sock **
pick(void)
{
    return &slot[get8() % NSLOTS];
}

static uint16_t
port(void)
{
    static const uint16_t ports[] = {0, 80, 8080, 53, 5000, 40000, 1};
    uint8_t c = get8() % 8;

    return c < 7 ? ports[c] : get16();
}

/* An address for bind or connect: the stack's, the peer's, the other
 * family's, wildcards, mapped, multicast, broadcast, loopback, off-link,
 * AF_UNSPEC, or a short length. */
static socklen_t
addr(struct sockaddr_storage *ss)
{
    static const uint8_t any6[16],
        lo6[16] = {[15] = 1}, mc6[16] = {0xff, 2, [15] = 1},
        mapped[16] = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 2},
        mapped_peer[16] = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 1},
        off6[16] = {0x20, 1, 0xd, 0xb8, [15] = 9};
    uint8_t c = get8();
    uint16_t p = port();
    socklen_t len;

    switch (c % 20) {
    case 0:
        len = fn_sin(ss, 0, p);
        break;
    case 1:
        len = fn_sin(ss, FN_STACK_IP, p);
        break;
    case 2:
        len = fn_sin(ss, FN_PEER_IP, p);
        break;
    case 3:
        len = fn_sin(ss, 0x0a000009u, p);
        break;
    case 4:
        len = fn_sin(ss, 0x7f000001u, p);
        break;
    case 5:
        len = fn_sin(ss, 0xe0000001u, p);
        break;
    case 6:
        len = fn_sin(ss, 0xffffffffu, p);
        break;
    case 7:
        len = fn_sin(ss, 0xc0a80101u, p);
        break;
    case 8:
        len = fn_sin6(ss, any6, p);
        break;
    case 9:
        len = fn_sin6(ss, fn_stack_ip6, p);
        break;
    case 10:
        len = fn_sin6(ss, fn_peer_ip6, p);
        break;
    case 11:
        len = fn_sin6(ss, fn_peer_ll6, p);
        ((struct sockaddr_in6 *)ss)->sin6_scope_id = get8() & 3;
        break;
    case 12:
        len = fn_sin6(ss, fn_stack_ll6, p);
        break;
    case 13:
        len = fn_sin6(ss, mapped, p);
        break;
    case 14:
        len = fn_sin6(ss, mapped_peer, p);
        break;
    case 15:
        len = fn_sin6(ss, lo6, p);
        break;
    case 16:
        len = fn_sin6(ss, mc6, p);
        break;
    case 17:
        len = fn_sin6(ss, off6, p);
        break;
    case 18:
        memset(ss, 0, sizeof(*ss));
        ss->ss_family = AF_UNSPEC;
        len = sizeof(struct sockaddr_in);
        break;
    default:
        len = fn_sin(ss, get32(), p);
        ss->ss_family = get8();
        break;
    }
    if (c & 0x80)
        len = get8() % (len + 1); /* a short (or empty) address */
    return len;
}

/* Options the socket layer knows, and some it does not. */
static const struct {
    int level, name;
} opts[] = {
    {SOL_SOCKET, SO_REUSEADDR},
    {SOL_SOCKET, SO_REUSEPORT},
    {SOL_SOCKET, SO_KEEPALIVE},
    {SOL_SOCKET, SO_LINGER},
    {SOL_SOCKET, SO_RCVBUF},
    {SOL_SOCKET, SO_SNDBUF},
    {SOL_SOCKET, SO_ERROR},
    {SOL_SOCKET, SO_TYPE},
    {SOL_SOCKET, SO_BROADCAST},
    {SOL_SOCKET, SO_ACCEPTCONN},
    {SOL_SOCKET, SO_DOMAIN},
    {SOL_SOCKET, SO_PROTOCOL},
    {SOL_SOCKET, SO_RCVLOWAT},
    {SOL_SOCKET, SO_OOBINLINE},
    {IPPROTO_TCP, TCP_NODELAY},
    {IPPROTO_TCP, TCP_MAXSEG},
    {IPPROTO_TCP, TCP_KEEPIDLE},
    {IPPROTO_TCP, TCP_KEEPINTVL},
    {IPPROTO_TCP, TCP_KEEPCNT},
    {IPPROTO_TCP, TCP_INFO},
    {IPPROTO_TCP, TCP_CONGESTION},
    {IPPROTO_TCP, TCP_CORK},
    {IPPROTO_TCP, TCP_QUICKACK},
    {IPPROTO_TCP, TCP_USER_TIMEOUT},
    {IPPROTO_IP, IP_TOS},
    {IPPROTO_IP, IP_TTL},
    {IPPROTO_IP, IP_PKTINFO},
    {IPPROTO_IP, IP_RECVTOS},
    {IPPROTO_IP, IP_RECVTTL},
    {IPPROTO_IP, IP_MULTICAST_IF},
    {IPPROTO_IP, IP_MULTICAST_TTL},
    {IPPROTO_IP, IP_MULTICAST_LOOP},
    {IPPROTO_IP, IP_MULTICAST_ALL},
    {IPPROTO_IP, IP_ADD_MEMBERSHIP},
    {IPPROTO_IP, IP_DROP_MEMBERSHIP},
    {IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP},
    {IPPROTO_IP, IP_DROP_SOURCE_MEMBERSHIP},
    {IPPROTO_IP, IP_BLOCK_SOURCE},
    {IPPROTO_IP, IP_UNBLOCK_SOURCE},
    {IPPROTO_IP, MCAST_JOIN_GROUP},
    {IPPROTO_IP, MCAST_LEAVE_GROUP},
    {IPPROTO_IP, MCAST_JOIN_SOURCE_GROUP},
    {IPPROTO_IP, MCAST_LEAVE_SOURCE_GROUP},
    {IPPROTO_IP, MCAST_BLOCK_SOURCE},
    {IPPROTO_IP, MCAST_UNBLOCK_SOURCE},
    {IPPROTO_IPV6, IPV6_V6ONLY},
    {IPPROTO_IPV6, IPV6_UNICAST_HOPS},
    {IPPROTO_IPV6, IPV6_MULTICAST_HOPS},
    {IPPROTO_IPV6, IPV6_MULTICAST_IF},
    {IPPROTO_IPV6, IPV6_MULTICAST_LOOP},
    {IPPROTO_IPV6, IPV6_JOIN_GROUP},
    {IPPROTO_IPV6, IPV6_LEAVE_GROUP},
    {IPPROTO_IPV6, IPV6_RECVPKTINFO},
    {IPPROTO_IPV6, IPV6_RECVHOPLIMIT},
    {IPPROTO_IPV6, IPV6_RECVTCLASS},
    {IPPROTO_IPV6, IPV6_TCLASS},
    {IPPROTO_IPV6, IPV6_2292PKTINFO},
    {IPPROTO_IPV6, IPV6_2292HOPLIMIT},
    {IPPROTO_IPV6, MCAST_JOIN_GROUP},
    {IPPROTO_IPV6, MCAST_LEAVE_GROUP},
    {IPPROTO_UDP, 1},
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static void
opt_pick(int *level, int *name)
{
    uint8_t c = get8();

    if (c < 240) {
        *level = opts[c % NOPTS].level;
        *name = opts[c % NOPTS].name;
    } else {
        *level = (int)get16() - 1; /* -1 .. 65534 */
        *name = (int)get16() - 1;
    }
}

static void
op_socket(void)
{
    uint8_t t = get8();
    struct stk_sock **s = pick(), *n = NULL;

    if (*s != NULL)
        return;
    if (stk_sock_create(t & 1 ? SOCK_DGRAM : SOCK_STREAM, &n) != 0)
        return;
    if ((t >> 1) % 3 != 0 && stk_sock_set_inet6(n, (t >> 1) % 3 == 2) != 0)
        abort();
    *s = n;
}

static void
op_setsockopt(struct stk_sock *s)
{
    int level, name;
    uint8_t mode;
    union {
        int i;
        uint8_t b[256];
    } v;
    size_t len;
    const uint8_t *p;

    opt_pick(&level, &name);
    mode = get8();
    memset(&v, 0, sizeof(v));
    if (mode < 128) { /* an int (0, 1, small, big, negative) */
        v.i = mode < 64 ? (int)(mode & 3) : (int)get32();
        len = mode & 1 ? sizeof(int) : (mode >> 1) % 9;
    } else { /* raw bytes of any length */
        p = getbuf(mode - 128u, &len);
        memcpy(v.b, p, len);
        if (mode & 1 && name == TCP_CONGESTION && level == IPPROTO_TCP)
            len = get8();
    }
    (void)stk_sock_setsockopt(s, level, name, &v, (socklen_t)len);
}

static void
op_getsockopt(struct stk_sock *s)
{
    int level, name;
    uint8_t v[256];
    socklen_t len;

    opt_pick(&level, &name);
    len = get8();
    memset(v, 0, sizeof(v));
    if (stk_sock_getsockopt(s, level, name, v, &len) == 0 && len > sizeof(v))
        abort(); /* claims more than the room given */
}

static int
msg_flags(uint8_t c)
{
    static const int f[] = {MSG_DONTWAIT, MSG_MORE,  MSG_NOSIGNAL, MSG_OOB,
                            MSG_PEEK,     MSG_TRUNC, MSG_WAITALL,  MSG_EOR};
    int r = 0;

    for (int i = 0; i < 8; i++)
        if (c & (1u << i))
            r |= f[i];
    return r;
}

static void
op_send(struct stk_sock *s)
{
    uint8_t c = get8();
    size_t len = get16() % sizeof(data);
    struct iovec iov[3];
    struct sockaddr_storage to;
    struct msghdr m;
    int niov = 1 + c % 3;

    memset(&m, 0, sizeof(m));
    for (int i = 0; i < niov; i++) {
        iov[i].iov_base = data + i * len / niov;
        iov[i].iov_len = len / niov;
    }
    m.msg_iov = iov;
    m.msg_iovlen = (size_t)niov;
    if (c & 4) {
        m.msg_name = &to;
        m.msg_namelen = addr(&to);
    }
    ssize_t r = stk_sock_sendmsg(s, &m, msg_flags(get8()));
    if (r > (ssize_t)len)
        abort();
}

static void
op_recv(struct stk_sock *s)
{
    uint8_t c = get8();
    size_t len = get16() % sizeof(rbuf), clen = get8();
    struct sockaddr_storage from;
    uint8_t ctl[256];
    struct iovec iov[2] = {{rbuf, len / 2}, {rbuf + len / 2, len - len / 2}};
    struct msghdr m;
    ssize_t r;

    memset(&m, 0, sizeof(m));
    m.msg_iov = iov;
    m.msg_iovlen = c & 1 ? 2 : 1;
    if (!(c & 1))
        iov[0].iov_len = len;
    if (c & 2) {
        m.msg_name = &from;
        m.msg_namelen = get8() % (sizeof(from) + 1);
    }
    if (c & 4) {
        m.msg_control = ctl;
        m.msg_controllen = clen;
    }
    r = stk_sock_recvmsg(s, &m, msg_flags(get8()));
    if (r >= 0 && (m.msg_controllen > clen || m.msg_namelen > sizeof(from)))
        abort();
    if (r > (ssize_t)len && stk_sock_type(s) == SOCK_STREAM)
        abort();
}

static void
op_poll(void)
{
    for (int i = 0; i < NSLOTS; i++) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);

        if (slot[i] == NULL)
            continue;
        (void)stk_sock_events(slot[i], NULL);
        (void)stk_sock_inq(slot[i]);
        (void)stk_sock_outq(slot[i]);
        (void)stk_sock_getname(slot[i], (struct sockaddr *)&ss, &len, false);
        len = sizeof(ss);
        (void)stk_sock_getname(slot[i], (struct sockaddr *)&ss, &len, true);
        if (get8() & 1)
            (void)stk_sock_take_error(slot[i]);
    }
}

static struct fn_flow *
flow_pick(void)
{
    uint8_t c = get8();

    for (int i = 0; i < FN_FLOWS; i++) {
        struct fn_flow *f = &fn_flows[(c + i) % FN_FLOWS];

        if (f->used)
            return f;
    }
    return NULL;
}

/* A segment from the peer on a flow the stack's output showed. */
static void
op_peer_seg(void)
{
    struct fn_flow *f = flow_pick();
    uint8_t mode = get8(), optlen;
    struct fn_seg s;
    size_t len;

    if (f == NULL)
        return;
    memset(&s, 0, sizeof(s));
    s.sport = f->pport;
    s.dport = f->sport;
    s.flags = get8();
    if (!f->acked && f->peer_nxt == 0)
        f->peer_nxt = 5000; /* the peer's ISN, answering an active open */
    switch (mode & 3) {
    case 0:
        s.seq = f->peer_nxt;
        break;
    case 1:
        s.seq = f->peer_nxt + (uint32_t)(int8_t)get8();
        break;
    case 2:
        s.seq = f->peer_nxt - get16();
        break;
    default:
        s.seq = get32();
        break;
    }
    switch ((mode >> 2) & 3) {
    case 0:
        s.ack = f->snd_nxt;
        break;
    case 1:
        s.ack = f->snd_nxt + (uint32_t)(int8_t)get8();
        break;
    case 2:
        s.ack = f->snd_nxt - get16();
        break;
    default:
        s.ack = get32();
        break;
    }
    s.win = mode & 0x10 ? get16() : 65535;
    if (mode & 0x20)
        s.urp = get16();
    optlen = mode & 0x40 ? get8() % 41 : 0;
    s.opt = getbuf(optlen, &s.optlen);
    len = mode & 0x80 ? get16() % 3000 : 0;
    s.data = data;
    s.len = len;
    fn_input(frame, fn_tcp(frame, f->v6, &s));
    if ((mode & 3) == 0 && !(s.flags & 0x04))
        f->peer_nxt += (uint32_t)len + ((s.flags & 0x02) ? 1 : 0) +
                       ((s.flags & 0x01) ? 1 : 0);
}

/* A SYN from the peer to a stack port, with a choice of options. */
static void
op_peer_syn(void)
{
    uint8_t c = get8(), opt[24];
    size_t o = 0;
    struct fn_seg s;

    memset(&s, 0, sizeof(s));
    s.sport = (uint16_t)(40000 + get8());
    s.dport = port();
    s.seq = get32();
    s.flags = 0x02;
    s.win = 65535;
    if (c & 2) {
        memcpy(opt + o, (const uint8_t[]){2, 4, 0x05, 0xb4}, 4);
        opt[o + 2] = get8(); /* any MSS */
        o += 4;
    }
    if (c & 4) {
        memcpy(opt + o, (const uint8_t[]){1, 3, 3, 7}, 4);
        opt[o + 3] = get8();
        o += 4;
    }
    if (c & 8) {
        memcpy(opt + o, (const uint8_t[]){1, 1, 4, 2}, 4);
        o += 4;
    }
    if (c & 16) {
        memcpy(opt + o, (const uint8_t[]){1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0},
               12);
        o += 12;
    }
    s.opt = opt;
    s.optlen = o;
    fn_input(frame, fn_tcp(frame, c & 1, &s));
}

static void
op_peer_udp(void)
{
    uint8_t c = get8();
    uint16_t dp = port();
    size_t len = get16() % 2000;

    fn_input(frame, fn_udp(frame, c & 1, 53000, dp, data, len));
}

/* An ICMP (IPv4) or ICMPv6 error quoting a packet of a flow, or of UDP
 * to a port. */
static void
op_peer_icmp(void)
{
    uint8_t c = get8(), type = get8(), code = get8();
    struct fn_flow *f = flow_pick();
    bool v6 = f != NULL ? f->v6 : (c & 1);
    uint8_t *ip = frame + 14, *q;
    size_t ql = v6 ? 40 + 8 : 20 + 8, hl = v6 ? 40 : 20;

    memset(frame, 0, 14 + hl + 8 + ql);
    memcpy(frame, fn_stack_mac, 6);
    memcpy(frame + 6, fn_peer_mac, 6);
    frame[12] = v6 ? 0x86 : 0x08;
    frame[13] = v6 ? 0xdd : 0x00;
    q = ip + hl + 8; /* the quoted packet: stack -> peer */
    if (v6) {
        ip[0] = 0x60;
        ip[5] = (uint8_t)(8 + ql);
        ip[6] = 58;
        ip[7] = 255;
        memcpy(ip + 8, fn_peer_ip6, 16);
        memcpy(ip + 24, fn_stack_ip6, 16);
        q[0] = 0x60;
        q[5] = 8;
        q[6] = f != NULL ? 6 : 17;
        q[7] = 64;
        memcpy(q + 8, fn_stack_ip6, 16);
        memcpy(q + 24, fn_peer_ip6, 16);
    } else {
        ip[0] = 0x45;
        ip[3] = (uint8_t)(hl + 8 + ql);
        ip[8] = 64;
        ip[9] = 1;
        ip[12] = 10;
        ip[15] = 1;
        ip[16] = 10;
        ip[19] = 2;
        q[0] = 0x45;
        q[3] = 28 + 20;
        q[8] = 64;
        q[9] = f != NULL ? 6 : 17;
        q[12] = 10;
        q[15] = 2;
        q[16] = 10;
        q[19] = 1;
    }
    ip[hl] = type;
    ip[hl + 1] = code;
    if (c & 2) { /* a next-hop MTU / pointer */
        ip[hl + 6] = get8();
        ip[hl + 7] = get8();
    }
    q += v6 ? 40 : 20;
    if (f != NULL) {
        q[0] = (uint8_t)(f->sport >> 8);
        q[1] = (uint8_t)f->sport;
        q[2] = (uint8_t)(f->pport >> 8);
        q[3] = (uint8_t)f->pport;
        memcpy(q + 4,
               (uint8_t[]){(uint8_t)(f->snd_nxt >> 24),
                           (uint8_t)(f->snd_nxt >> 16),
                           (uint8_t)(f->snd_nxt >> 8), (uint8_t)f->snd_nxt},
               4);
    } else {
        uint16_t sp = port(), dp = port();

        q[0] = (uint8_t)(sp >> 8);
        q[1] = (uint8_t)sp;
        q[2] = (uint8_t)(dp >> 8);
        q[3] = (uint8_t)dp;
        q[5] = 8;
    }
    fn_fix_csum(frame, 14 + hl + 8 + ql);
    fn_input(frame, 14 + hl + 8 + ql);
}

static void
step(void)
{
    struct stk_sock **s;
    struct sockaddr_storage ss;
    socklen_t len;
    uint8_t op = get8();

    switch (op % 17) {
    case 0:
        op_socket();
        return;
    case 11:
        op_poll();
        return;
    case 12: {
        uint8_t dt = get8();
        fn_advance(dt < 200 ? dt : (dt - 199u) * 1000u);
        return;
    }
    case 13:
        op_peer_seg();
        return;
    case 14:
        op_peer_syn();
        return;
    case 15:
        op_peer_udp();
        return;
    case 16:
        op_peer_icmp();
        return;
    }
    s = pick();
    if (*s == NULL)
        return;
    switch (op % 17) {
    case 1:
        len = addr(&ss);
        (void)stk_sock_bind(*s, (struct sockaddr *)&ss, len);
        break;
    case 2:
        (void)stk_sock_listen(*s, (int8_t)get8());
        break;
    case 3:
        len = addr(&ss);
        (void)stk_sock_connect(*s, (struct sockaddr *)&ss, len);
        break;
    case 4: {
        struct stk_sock **d = pick(), *n = NULL;

        len = get8() % (sizeof(ss) + 1);
        if (*d == NULL &&
            stk_sock_accept(*s, &n, (struct sockaddr *)&ss, &len) == 0)
            *d = n;
        break;
    }
    case 5:
        op_send(*s);
        break;
    case 6:
        op_recv(*s);
        break;
    case 7:
        (void)stk_sock_shutdown(*s, get8() % 4);
        break;
    case 8:
        stk_sock_close(*s);
        *s = NULL;
        break;
    case 9:
        op_setsockopt(*s);
        break;
    default:
        op_getsockopt(*s);
        break;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *in, size_t n)
{
    if (data[1] == 0)
        for (size_t i = 0; i < sizeof(data); i++)
            data[i] = (uint8_t)(i * 7 + (i >> 8) + 1);
    fn_init();
    fn_begin();
    cur = in;
    left = n;
    for (int steps = 0; left > 0 && steps < 4096; steps++) {
        step();
        fn_pump();
        fn_check();
    }
    for (int i = 0; i < NSLOTS; i++) {
        if (slot[i] != NULL)
            stk_sock_close(slot[i]);
        slot[i] = NULL;
    }
    fn_end();
    return 0;
}
