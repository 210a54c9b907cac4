/*
 * Fuzzer: Ethernet frames into the stack's input (stk_input), with the
 * stack holding an IPv4 and an IPv6 address and, at the start of every
 * input: a dual-stack TCP listener on port 80, a dual-stack UDP socket on
 * port 53 and an IPv4 one on 5000 asking for every control message, an
 * established IPv4 connection the peer opened (timestamps, SACK, window
 * scaling; 3000 bytes of the stack's in flight) and an IPv6 one the stack
 * opened (no options). Between frames the virtual clock moves and the
 * application reads what arrived and accepts what is queued.
 *
 * Input: records of a 4-byte header and a frame:
 *   len (2 bytes, big endian)  flags (1)  dt (1)  frame (len bytes)
 * flags: FIX recompute the checksums; READDR make it a frame from the
 * peer to the stack (MACs, IP addresses); CONN a TCP segment of the IPv4
 * (IPv4 frame) or IPv6 connection: ports replaced, seq and ack taken as
 * offsets from the peer's next sequence number and the stack's (so 0 is
 * in window); SEND after the frame the application writes 2896 bytes on
 * both connections; CLOSE it shuts the IPv4 connection's write side.
 * dt: the clock then moves dt ms (dt < 200) or (dt - 199) s.
 * tests/fuzz/pcap2seed.py turns captures into inputs.
 */
#define _GNU_SOURCE /* IPV6_RECVPKTINFO */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_net.h"

#define FR_FIX 0x01
#define FR_READDR 0x02
#define FR_CONN 0x04
#define FR_SEND 0x08
#define FR_CLOSE 0x10

#define NSOCKS 16

static struct stk_sock *socks[NSOCKS];
static int nsocks;
static struct stk_sock *listener, *conn4, *conn6;
static uint8_t frame[FN_FRAME_MAX];
static uint8_t data[4096];

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n);

static struct stk_sock *
keep(struct stk_sock *s)
{
    if (s == NULL || nsocks == NSOCKS)
        abort();
    socks[nsocks++] = s;
    return s;
}

/* The setup's calls cannot fail. */
#define must(rc, want) must_at((rc), (want), __LINE__)
static void
must_at(int rc, int want, int line)
{
    if (rc != want) {
        fprintf(stderr, "fuzz_frames.c:%d: %d, not %d\n", line, rc, want);
        abort();
    }
}

/* The peer opens a connection to port 80 from pport with timestamps,
 * SACK and window scaling; the stack's end, accepted. */
static struct stk_sock *
passive_open4(uint16_t pport)
{
    static const uint8_t opt[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0,
                                    0, 1, 0,    0,    0, 0, 1, 3,  3, 7};
    struct fn_seg s = {.sport = pport,
                       .dport = 80,
                       .seq = 7000,
                       .flags = 2,
                       .win = 65535,
                       .opt = opt,
                       .optlen = sizeof(opt)};
    struct stk_sock *c = NULL;
    struct fn_flow *f;
    size_t len = fn_tcp(frame, false, &s);

    fn_input(frame, len);
    f = fn_flow_find(false, 80, pport);
    if (f == NULL)
        abort();
    s.seq = 7001;
    s.ack = f->snd_nxt;
    s.flags = 0x10;
    s.optlen = 12; /* NOP NOP TS */
    s.opt = (const uint8_t[]){1, 1, 8, 10, 0, 0, 0, 2, 0, 0, 0, 0};
    fn_input(frame, fn_tcp(frame, false, &s));
    f->peer_nxt = 7001;
    must(stk_sock_accept(listener, &c, NULL, NULL), 0);
    return keep(c);
}

/* The stack connects to the peer's port 8080 over IPv6. */
static struct stk_sock *
active_open6(void)
{
    struct stk_sock *c = keep(fn_socket(SOCK_STREAM, true));
    struct sockaddr_storage ss;
    socklen_t sl = fn_sin6(&ss, fn_peer_ip6, 8080);
    struct fn_seg s = {.sport = 8080, .seq = 9000, .flags = 0x12, .win = 65535};
    struct fn_flow *f = NULL;

    must(stk_sock_connect(c, (struct sockaddr *)&ss, sl), -EINPROGRESS);
    fn_pump(); /* the neighbour's advert lets the SYN out */
    for (int i = 0; i < FN_FLOWS && f == NULL; i++)
        if (fn_flows[i].used && fn_flows[i].v6 && fn_flows[i].syn)
            f = &fn_flows[i];
    if (f == NULL)
        abort();
    s.dport = f->sport;
    s.ack = f->snd_nxt;
    fn_input(frame, fn_tcp(frame, true, &s));
    f->peer_nxt = 9001;
    must(stk_sock_connect(c, (struct sockaddr *)&ss, sl), 0); /* connected */
    return c;
}

static void
app_send(struct stk_sock *s, size_t len)
{
    struct iovec iov = {data, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

    if (s != NULL)
        (void)stk_sock_sendmsg(s, &m, MSG_NOSIGNAL);
}

static void
setup(void)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    int one = 1;
    struct stk_sock *u;

    nsocks = 0;
    fn_begin();
    listener = keep(fn_socket(SOCK_STREAM, true));
    sl = fn_sin6(&ss, (const uint8_t[16]){0}, 80);
    must(stk_sock_bind(listener, (struct sockaddr *)&ss, sl), 0);
    must(stk_sock_listen(listener, 8), 0);
    u = keep(fn_socket(SOCK_DGRAM, true));
    must(stk_sock_bind(u, (struct sockaddr *)&ss,
                       fn_sin6(&ss, (const uint8_t[16]){0}, 53)),
         0);
    must(stk_sock_setsockopt(u, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one,
                             sizeof(one)),
         0);
    u = keep(fn_socket(SOCK_DGRAM, false));
    must(stk_sock_bind(u, (struct sockaddr *)&ss, fn_sin(&ss, 0, 5000)), 0);
    must(stk_sock_setsockopt(u, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)), 0);
    must(stk_sock_setsockopt(u, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one)), 0);
    must(stk_sock_setsockopt(u, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)), 0);
    conn4 = passive_open4(40000);
    conn6 = active_open6();
    app_send(conn4, 3000);
    app_send(conn6, 3000);
}

/* A TCP segment of a connection: ports and sequence numbers from its
 * flow (the header fields as offsets). */
static void
aim(uint8_t *f, size_t len)
{
    bool v6 = f[12] == 0x86 && f[13] == 0xdd;
    size_t l3 = v6 ? 40 : (size_t)(f[14] & 0xf) * 4;
    uint8_t *t = f + 14 + l3;
    struct fn_flow *fl = NULL;
    uint32_t seq, ack;

    if (len < 14 + l3 + 20 || (v6 ? f[20] : f[23]) != 6)
        return;
    for (int i = 0; i < FN_FLOWS && fl == NULL; i++)
        if (fn_flows[i].used && fn_flows[i].v6 == v6 && fn_flows[i].acked)
            fl = &fn_flows[i];
    if (fl == NULL)
        return;
    seq = (uint32_t)t[4] << 24 | (uint32_t)t[5] << 16 | (uint32_t)t[6] << 8 |
          t[7];
    ack = (uint32_t)t[8] << 24 | (uint32_t)t[9] << 16 | (uint32_t)t[10] << 8 |
          t[11];
    seq += fl->peer_nxt;
    ack += fl->snd_nxt;
    t[0] = (uint8_t)(fl->pport >> 8);
    t[1] = (uint8_t)fl->pport;
    t[2] = (uint8_t)(fl->sport >> 8);
    t[3] = (uint8_t)fl->sport;
    for (int i = 0; i < 4; i++) {
        t[4 + i] = (uint8_t)(seq >> (24 - 8 * i));
        t[8 + i] = (uint8_t)(ack >> (24 - 8 * i));
    }
}

/* The application's side after a frame: read, accept, poll. */
static void
app_turn(void)
{
    struct stk_sock *c;

    for (int i = 0; i < nsocks; i++) {
        if (socks[i] == listener)
            continue;
        (void)stk_sock_events(socks[i], NULL);
        fn_drain_sock(socks[i]);
    }
    while (nsocks < NSOCKS && stk_sock_accept(listener, &c, NULL, NULL) == 0)
        keep(c);
    fn_check();
}

int
LLVMFuzzerTestOneInput(const uint8_t *in, size_t n)
{
    fn_init();
    setup();
    while (n >= 4) {
        size_t len = (size_t)in[0] << 8 | in[1];
        uint8_t flags = in[2], dt = in[3];

        in += 4;
        n -= 4;
        if (len > n)
            len = n;
        if (len > sizeof(frame))
            len = sizeof(frame);
        memcpy(frame, in, len);
        in += len;
        n -= len;
        if (flags & (FR_READDR | FR_CONN))
            fn_readdress(frame, len);
        if (flags & FR_CONN)
            aim(frame, len);
        if (flags & FR_FIX)
            fn_fix_csum(frame, len);
        fn_input(frame, len);
        app_turn();
        if (flags & FR_SEND) {
            app_send(conn4, 2896);
            app_send(conn6, 2896);
        }
        fn_pump();
        if (flags & FR_CLOSE)
            (void)stk_sock_shutdown(conn4, SHUT_WR);
        if (dt > 0)
            fn_advance(dt < 200 ? dt : (dt - 199u) * 1000u);
        app_turn();
    }
    for (int i = 0; i < nsocks; i++)
        stk_sock_close(socks[i]);
    nsocks = 0;
    fn_end();
    return 0;
}
