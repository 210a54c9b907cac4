/*
 * The stack micro-benchmarks' shared part (bench_stack.h).
 */
#include "bench_stack.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "stk.h"
#include "stk_test.h"

const uint8_t bench_stack_mac[6] = {2, 0, 0, 0, 0, 2};
const uint8_t bench_peer_mac[6] = {2, 0, 0, 0, 0, 1};
uint8_t bench_txbuf[2048];
uint64_t bench_now_ns = 1000000000ull;

static uint64_t
clock_fn(void)
{
    return bench_now_ns;
}

static uint8_t *
tx_alloc(void *ctx, uint16_t len, void **handle)
{
    (void)ctx;
    *handle = NULL;
    return len <= sizeof(bench_txbuf) ? bench_txbuf : NULL;
}

void
bench_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

void
bench_put32(uint8_t *p, uint32_t v)
{
    bench_put16(p, (uint16_t)(v >> 16));
    bench_put16(p + 2, (uint16_t)v);
}

uint32_t
bench_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

uint16_t
bench_csum(const uint8_t *p, size_t n, uint32_t sum)
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

void
bench_tcp_header(uint8_t *frame, uint16_t tcp_len, uint16_t sport,
                 uint16_t dport)
{
    bench_tcp_header_from(frame, tcp_len, BENCH_PEER_IP, sport, dport);
}

void
bench_tcp_header_from(uint8_t *frame, uint16_t tcp_len, uint32_t src,
                      uint16_t sport, uint16_t dport)
{
    uint8_t *ip = frame + 14, *t = ip + 20;

    memcpy(frame, bench_stack_mac, 6);
    memcpy(frame + 6, bench_peer_mac, 6);
    bench_put16(frame + 12, 0x0800);
    memset(ip, 0, 20);
    ip[0] = 0x45;
    bench_put16(ip + 2, (uint16_t)(20 + tcp_len));
    ip[8] = 64;
    ip[9] = 6;
    bench_put32(ip + 12, src);
    bench_put32(ip + 16, BENCH_STACK_IP);
    memset(t, 0, 20);
    bench_put16(t, sport);
    bench_put16(t + 2, dport);
}

void
bench_tcp_csums(uint8_t *ip, uint16_t tcp_len)
{
    uint8_t *t = ip + 20;
    uint32_t src = bench_get32(ip + 12);
    uint32_t ps = (src >> 16) + (src & 0xffff) + (BENCH_STACK_IP >> 16) +
                  (BENCH_STACK_IP & 0xffff) + 6 + tcp_len;

    bench_put16(ip + 10, 0);
    bench_put16(ip + 10, bench_csum(ip, 20, 0));
    bench_put16(t + 16, 0);
    bench_put16(t + 16, bench_csum(t, tcp_len, ps));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

uint32_t
bench_rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

uint64_t
bench_mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The peer announces itself: an ARP request for the stack's address. */
static void
arp_hello(void)
{
    uint8_t f[42];

    memset(f, 0, sizeof(f));
    memcpy(f, bench_stack_mac, 6);
    memcpy(f + 6, bench_peer_mac, 6);
    bench_put16(f + 12, 0x0806);
    bench_put16(f + 14, 1);
    bench_put16(f + 16, 0x0800);
    f[18] = 6;
    f[19] = 4;
    bench_put16(f + 20, 1);
    memcpy(f + 22, bench_peer_mac, 6);
    bench_put32(f + 28, BENCH_PEER_IP);
    bench_put32(f + 38, BENCH_STACK_IP);
    stk_input(f, sizeof(f));
}

int
bench_stack_up(void (*tx_send)(void *ctx, void *handle, uint16_t len))
{
    struct stk_netif_cfg cfg;
    int rc;

    stk_test_set_clock(clock_fn);
    memset(&cfg, 0, sizeof(cfg));
    cfg.ip = htonl(BENCH_STACK_IP);
    cfg.netmask = htonl(0xffffff00);
    cfg.gateway = htonl(BENCH_PEER_IP); /* off-link peers: the same MAC */
    memcpy(cfg.mac, bench_stack_mac, 6);
    cfg.mtu = 1500;
    cfg.csum_flags = STK_CSUM_RX_IP | STK_CSUM_RX_L4;
    cfg.link.tx_alloc = tx_alloc;
    cfg.link.tx_send = tx_send;
    if ((rc = stk_init(&cfg)) != 0) {
        fprintf(stderr, "stk_init: %d\n", rc);
        return rc;
    }
    arp_hello();
    return 0;
}

int
bench_listen(uint16_t port, struct stk_sock **out)
{
    struct sockaddr_in a;
    int rc;

    if ((rc = stk_sock_create(SOCK_STREAM, out)) != 0)
        return rc;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if ((rc = stk_sock_bind(*out, (struct sockaddr *)&a, sizeof(a))) != 0)
        return rc;
    return stk_sock_listen(*out, 4096);
}
