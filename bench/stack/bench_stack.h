/*
 * What the stack micro-benchmarks share: the stack brought up on a fake
 * netif with a virtual clock (frames it sends land in bench_txbuf and go
 * to the benchmark's tx_send), the scripted peer's addresses, and the
 * byte-order, checksum, random and clock helpers of the peer's frames.
 */
#ifndef BENCH_STACK_H
#define BENCH_STACK_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_STACK_IP 0x0a000002u /* 10.0.0.2, host order */
#define BENCH_PEER_IP 0x0a000001u  /* 10.0.0.1 */

extern const uint8_t bench_stack_mac[6], bench_peer_mac[6];
extern uint8_t bench_txbuf[2048]; /* the frame the stack sent last */
extern uint64_t bench_now_ns; /* the stack's clock: the benchmark moves it */

/** stk_init on the fake netif (rx checksum offload claimed, tx computed),
 *  bench_now_ns as the stack's clock, tx_send told of every frame sent;
 *  the peer then announces itself (ARP), so the stack knows its MAC. 0, or
 *  the stack's error (printed). */
int bench_stack_up(void (*tx_send)(void *ctx, void *handle, uint16_t len));

struct stk_sock;
/** A TCP listener on port (host order) of every address, backlog 4096. */
int bench_listen(uint16_t port, struct stk_sock **out);

void bench_put16(uint8_t *p, uint16_t v);
void bench_put32(uint8_t *p, uint32_t v);
uint32_t bench_get32(const uint8_t *p);
/** The Internet checksum of p[0..n) over a partial sum (host order). */
uint16_t bench_csum(const uint8_t *p, size_t n, uint32_t sum);
/** The Ethernet and IPv4 headers of a peer -> stack frame of tcp_len TCP
 *  bytes, and the TCP header's ports (the rest of it zero). */
void bench_tcp_header(uint8_t *frame, uint16_t tcp_len, uint16_t sport,
                      uint16_t dport);
/** The same from the peer address src (host order; off-link addresses
 *  are routed through the peer, the stack's gateway). */
void bench_tcp_header_from(uint8_t *frame, uint16_t tcp_len, uint32_t src,
                           uint16_t sport, uint16_t dport);
/** IPv4 + TCP header checksums of a peer -> stack frame of tcp_len TCP
 *  bytes, filled in place (ip: the IPv4 header, 20 bytes). */
void bench_tcp_csums(uint8_t *ip, uint16_t tcp_len);
/** xorshift64: the same sequence in every run. */
uint32_t bench_rnd(void);
uint64_t bench_mono_ns(void);

#endif
