/*
 * TCP demultiplexing micro-benchmark: the stack (lwIP + our socket layer)
 * on a fake netif with a frozen virtual clock, no DPDK. A scripted peer
 * opens N connections to a listener (SYN, SYN-ACK, ACK, accept), then
 * sends 64-byte data segments to connections picked at random; the time
 * and instructions spent in stk_input() for those segments, divided by
 * their number, is the cost of one segment: Ethernet/IP input, the PCB
 * lookup, TCP receive, queueing on the socket, and the ACK every second
 * segment. Frame building and the reads that empty the sockets happen
 * outside the measured function (deliver_batch), so
 *
 *   valgrind --tool=callgrind --toggle-collect=deliver_batch
 *
 * counts exactly the measured part (bench/stack/run.sh does that and
 * divides by the segment count). Checksums are correct but the netif
 * claims rx checksum offload, so their verification is not counted.
 *
 * Build it twice to compare: the default build (hashed lookup,
 * stack/pcb_hash.c) and -DACCEL_PCB_HASH=OFF (lwIP's list walk).
 *
 * Usage: pcb_lookup_bench [-s segments] [-b batch] N
 * Prints one line: "N=<n> segments=<m> ns_per_segment=<t>".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "stk.h"
#include "stk_test.h"

#define STACK_IP 0x0a000002u /* 10.0.0.2, host order */
#define PEER_IP 0x0a000001u  /* 10.0.0.1 */
#define PORT 80
#define PAYLOAD 64
#define FRAME_MAX (14 + 20 + 20 + PAYLOAD)

static const uint8_t stack_mac[6] = {2, 0, 0, 0, 0, 2};
static const uint8_t peer_mac[6] = {2, 0, 0, 0, 0, 1};

static uint64_t now_ns = 1000000000ull;
static uint8_t txbuf[2048];
static uint32_t last_synack_seq; /* ISN of the last SYN-ACK the stack sent */
static unsigned long tx_frames;

struct conn {
    struct stk_sock *s;
    uint16_t pport;
    uint32_t snd; /* peer's next sequence number */
    uint32_t ack; /* stack's next sequence number */
};

struct frame {
    uint8_t b[FRAME_MAX];
    uint16_t len;
};

static uint64_t
clock_fn(void)
{
    return now_ns;
}

static uint8_t *
tx_alloc(void *ctx, uint16_t len, void **handle)
{
    (void)ctx;
    *handle = NULL;
    return len <= sizeof(txbuf) ? txbuf : NULL;
}

/* The peer only needs the stack's ISN from its SYN-ACKs. */
static void
tx_send(void *ctx, void *handle, uint16_t len)
{
    const uint8_t *t = txbuf + 14 + 20;

    (void)ctx;
    (void)handle;
    tx_frames++;
    if (len >= 14 + 20 + 20 && txbuf[12] == 0x08 && txbuf[13] == 0 &&
        txbuf[14 + 9] == 6 && (t[13] & 0x12) == 0x12)
        last_synack_seq = (uint32_t)t[4] << 24 | (uint32_t)t[5] << 16 |
                          (uint32_t)t[6] << 8 | t[7];
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

static uint16_t
csum(const uint8_t *p, size_t n, uint32_t sum)
{
    size_t i;

    for (i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)p[i] << 8 | p[i + 1];
    if (n & 1)
        sum += (uint32_t)p[n - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* A TCP segment from the peer to the stack, Ethernet framed. */
static void
build(struct frame *f, uint16_t sport, uint32_t seq, uint32_t ack,
      uint8_t flags, uint16_t paylen)
{
    uint8_t *ip = f->b + 14, *t = ip + 20;
    uint16_t tlen = (uint16_t)(20 + paylen);
    uint32_t ps;
    uint16_t i;

    memcpy(f->b, stack_mac, 6);
    memcpy(f->b + 6, peer_mac, 6);
    put16(f->b + 12, 0x0800);
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20 + tlen));
    ip[8] = 64;
    ip[9] = 6;
    put32(ip + 12, PEER_IP);
    put32(ip + 16, STACK_IP);
    put16(ip + 10, csum(ip, 20, 0));
    memset(t, 0, 20);
    put16(t, sport);
    put16(t + 2, PORT);
    put32(t + 4, seq);
    put32(t + 8, ack);
    t[12] = 5 << 4;
    t[13] = flags;
    put16(t + 14, 65535);
    for (i = 0; i < paylen; i++)
        t[20 + i] = (uint8_t)(seq + i);
    ps = (PEER_IP >> 16) + (PEER_IP & 0xffff) + (STACK_IP >> 16) +
         (STACK_IP & 0xffff) + 6 + tlen;
    put16(t + 16, csum(t, tlen, ps));
    f->len = (uint16_t)(14 + 20 + tlen);
}

/* The peer announces itself (ARP request for the stack's address), so
 * the stack knows its MAC without asking. */
static void
arp_hello(void)
{
    uint8_t f[42];

    memset(f, 0, sizeof(f));
    memcpy(f, stack_mac, 6);
    memcpy(f + 6, peer_mac, 6);
    put16(f + 12, 0x0806);
    put16(f + 14, 1);
    put16(f + 16, 0x0800);
    f[18] = 6;
    f[19] = 4;
    put16(f + 20, 1);
    memcpy(f + 22, peer_mac, 6);
    put32(f + 28, PEER_IP);
    put32(f + 38, STACK_IP);
    stk_input(f, sizeof(f));
}

static int
open_conn(struct stk_sock *l, struct conn *c, uint16_t pport)
{
    struct frame f;

    c->pport = pport;
    c->snd = 1000;
    last_synack_seq = 0;
    build(&f, pport, c->snd++, 0, 0x02 /* SYN */, 0);
    stk_input(f.b, f.len);
    c->ack = last_synack_seq + 1;
    build(&f, pport, c->snd, c->ack, 0x10 /* ACK */, 0);
    stk_input(f.b, f.len);
    return stk_sock_accept(l, &c->s, NULL, NULL);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

/* The measured part: hand the batch to the stack. */
__attribute__((noinline)) void
deliver_batch(const struct frame *fr, int n)
{
    int i;

    for (i = 0; i < n; i++)
        stk_input(fr[i].b, fr[i].len);
}

static uint64_t
mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
run(int n, long segments, int batch)
{
    struct stk_sock *l = NULL;
    struct sockaddr_in a;
    struct conn *cs = calloc((size_t)n, sizeof(*cs));
    struct frame *fr = calloc((size_t)batch, sizeof(*fr));
    int *which = calloc((size_t)batch, sizeof(*which));
    uint8_t rbuf[4096];
    uint64_t ns = 0, t0;
    long done = 0, bytes = 0;
    int i, k, rc;

    if (cs == NULL || fr == NULL || which == NULL)
        return -ENOMEM;
    if ((rc = stk_sock_create(SOCK_STREAM, &l)) != 0)
        return rc;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(PORT);
    if ((rc = stk_sock_bind(l, (struct sockaddr *)&a, sizeof(a))) != 0 ||
        (rc = stk_sock_listen(l, 4096)) != 0)
        return rc;
    for (i = 0; i < n; i++) {
        rc = open_conn(l, &cs[i], (uint16_t)(10000 + i));
        if (rc != 0) {
            fprintf(stderr, "connection %d: accept failed (%d)\n", i, rc);
            return rc;
        }
    }

    while (done < segments) {
        int m = segments - done < batch ? (int)(segments - done) : batch;

        for (i = 0; i < m; i++) {
            struct conn *c = &cs[rnd() % (uint32_t)n];

            which[i] = (int)(c - cs);
            build(&fr[i], c->pport, c->snd, c->ack, 0x18 /* PSH|ACK */,
                  PAYLOAD);
            c->snd += PAYLOAD;
        }
        t0 = mono_ns();
        deliver_batch(fr, m);
        ns += mono_ns() - t0;
        for (i = 0; i < m; i++) {
            struct iovec iov = {rbuf, sizeof(rbuf)};
            struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
            ssize_t got;

            k = which[i];
            while ((got = stk_sock_recvmsg(cs[k].s, &msg, 0)) > 0)
                bytes += got;
        }
        done += m;
    }
    if (bytes != segments * PAYLOAD) {
        fprintf(stderr, "N=%d: %ld bytes received, %ld sent\n", n, bytes,
                segments * PAYLOAD);
        return -EIO;
    }
    printf("N=%d segments=%ld ns_per_segment=%.1f\n", n, segments,
           (double)ns / (double)segments);
    free(cs);
    free(fr);
    free(which);
    return 0;
}

int
main(int argc, char **argv)
{
    struct stk_netif_cfg cfg;
    long segments = 20000;
    int batch = 32, opt, rc;

    while ((opt = getopt(argc, argv, "s:b:")) != -1) {
        if (opt == 's')
            segments = atol(optarg);
        else if (opt == 'b')
            batch = atoi(optarg);
        else
            goto usage;
    }
    /* One N per process: lwIP's lists are global and the connections of
     * a previous run would linger on them. */
    if (optind != argc - 1 || atoi(argv[optind]) <= 0 || segments <= 0 ||
        batch <= 0)
        goto usage;

    stk_test_set_clock(clock_fn);
    memset(&cfg, 0, sizeof(cfg));
    cfg.ip = htonl(STACK_IP);
    cfg.netmask = htonl(0xffffff00);
    memcpy(cfg.mac, stack_mac, 6);
    cfg.mtu = 1500;
    cfg.csum_flags = STK_CSUM_RX_IP | STK_CSUM_RX_L4;
    cfg.link.tx_alloc = tx_alloc;
    cfg.link.tx_send = tx_send;
    if ((rc = stk_init(&cfg)) != 0) {
        fprintf(stderr, "stk_init: %d\n", rc);
        return 1;
    }
    arp_hello();
    rc = run(atoi(argv[optind]), segments, batch);
    if (rc != 0) {
        fprintf(stderr, "N=%s: failed (%d)\n", argv[optind], rc);
        return 1;
    }
    return 0;
usage:
    fprintf(stderr, "usage: %s [-s segments] [-b batch] N\n", argv[0]);
    return 2;
}
