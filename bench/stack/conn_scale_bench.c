/*
 * What N idle connections cost the stack (issue 24: a million of them):
 * the stack (lwIP + our socket layer) on a fake netif with a virtual clock,
 * no DPDK. A scripted peer opens N connections to a listener on port 80
 * from many source addresses (172.16.0.0/12, off-link: through the stack's
 * gateway, 32768 ports each), sends a 64-byte request on each, which the
 * application reads and answers with 128 bytes, and ACKs the answer; then
 * the connections stay idle. Measured, each part timed natively:
 *
 *   setup_ns      handshake + accept per connection (stack input, SYN-ACK,
 *                 the accept queue), request and answer not included
 *   bytes_per_conn  malloc'd bytes in use (mallinfo2) per idle connection
 *                 after the exchange, minus what was in use before the
 *                 first: every structure the stack keeps for it (lwIP's
 *                 pcb with our TCP state, the socket, the demux table's
 *                 share, queues); the preload's per-fd objects are not in
 *                 this process
 *   tick_ns       wall time of the stack's timer turns (stk_timers every
 *                 virtual millisecond) per virtual second, connections
 *                 idle: lwIP's 100 ms and 200 ms TCP timers included
 *   tick_listed   connections those timers still walk once idle
 *   segment_ns    one 64-byte data segment to a random connection (lookup,
 *                 receive, queueing; read back outside the timing)
 *   close_ns      per connection: the peer's FIN, the application's read
 *                 of EOF and close, the stack's FIN, the peer's last ACK
 *   bytes_left    malloc'd bytes still in use after every close, minus the
 *                 start (what a leak or a table that did not shrink keeps)
 *
 * Each connection is checked: the answer arrives with the right length,
 * the EOF is seen, the close completes; and once idle, none is left on
 * the timers' walk (tcp_tick.c). Any failure exits 1.
 *
 * Usage: conn_scale_bench [-s segments] N
 * Prints one line of key=value pairs.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench_stack.h"
#include "stk.h"
#include "stk_test.h"

#define PORT 80
#define REQ 64
#define RESP 128
#define PORTS_PER_SRC 32768u
#define SRC_BASE 0xac100000u /* 172.16.0.0 */
#define FRAME_MAX (14 + 20 + 20 + 256)

struct conn {
    struct stk_sock *s;
    uint32_t snd; /* peer's next sequence number */
    uint32_t ack; /* stack's next sequence number */
};

static struct {
    uint32_t dst, seq, ack;
    uint16_t dport, paylen;
    uint8_t flags;
    unsigned long frames;
} last; /* the frame the stack sent last */

static void
tx_send(void *ctx, void *handle, uint16_t len)
{
    const uint8_t *ip = bench_txbuf + 14, *t = ip + 20;

    (void)ctx;
    (void)handle;
    last.frames++;
    if (len < 14 + 20 + 20 || bench_txbuf[12] != 0x08 || ip[9] != 6)
        return;
    last.dst = bench_get32(ip + 16);
    last.dport = (uint16_t)(t[2] << 8 | t[3]);
    last.seq = bench_get32(t + 4);
    last.ack = bench_get32(t + 8);
    last.flags = t[13];
    last.paylen = (uint16_t)(((ip[2] << 8) | ip[3]) - 20 - (t[12] >> 4) * 4);
}

static uint32_t
src_of(uint32_t i)
{
    return SRC_BASE + i / PORTS_PER_SRC;
}

static uint16_t
port_of(uint32_t i)
{
    return (uint16_t)(1024u + i % PORTS_PER_SRC);
}

static void
send_seg(uint32_t i, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t paylen)
{
    uint8_t f[FRAME_MAX];
    uint8_t *ip = f + 14, *t = ip + 20;
    uint16_t tlen = (uint16_t)(20 + paylen);

    bench_tcp_header_from(f, tlen, src_of(i), port_of(i), PORT);
    bench_put32(t + 4, seq);
    bench_put32(t + 8, ack);
    t[12] = 5 << 4;
    t[13] = flags;
    bench_put16(t + 14, 65535);
    memset(t + 20, 'q', paylen);
    bench_tcp_csums(ip, tlen);
    stk_input(f, (uint16_t)(14 + 20 + tlen));
}

static size_t
in_use(void)
{
    return mallinfo2().uordblks;
}

static ssize_t
read_all(struct stk_sock *s)
{
    static uint8_t buf[4096];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

    return stk_sock_recvmsg(s, &msg, 0);
}

static int
answer(struct stk_sock *s)
{
    static uint8_t resp[RESP];
    struct iovec iov = {resp, sizeof(resp)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

    return stk_sock_sendmsg(s, &msg, 0) == RESP ? 0 : -EIO;
}

/* The virtual clock moves ms milliseconds, the timers turning each one;
 * the wall time of those turns. */
static uint64_t
idle_for(uint32_t ms)
{
    uint64_t t0 = bench_mono_ns();

    for (uint32_t k = 0; k < ms; k++) {
        bench_now_ns += 1000000u;
        stk_timers();
    }
    return bench_mono_ns() - t0;
}

static int
open_all(struct stk_sock *l, struct conn *cs, uint32_t n, uint64_t *ns)
{
    uint64_t t = 0, t0;

    for (uint32_t i = 0; i < n; i++) {
        struct conn *c = &cs[i];
        int rc;

        c->snd = 1000;
        t0 = bench_mono_ns();
        send_seg(i, c->snd++, 0, 0x02 /* SYN */, 0);
        if (!(last.flags & 0x02) || last.dport != port_of(i)) {
            fprintf(stderr, "connection %u: no SYN-ACK\n", i);
            return -EIO;
        }
        c->ack = last.seq + 1;
        send_seg(i, c->snd, c->ack, 0x10 /* ACK */, 0);
        rc = stk_sock_accept(l, &c->s, NULL, NULL);
        t += bench_mono_ns() - t0;
        if (rc != 0) {
            fprintf(stderr, "connection %u: accept failed (%d)\n", i, rc);
            return rc;
        }
        /* The request, its answer, the peer's ACK of it. */
        send_seg(i, c->snd, c->ack, 0x18 /* PSH|ACK */, REQ);
        c->snd += REQ;
        if (read_all(c->s) != REQ || answer(c->s) != 0 || last.paylen != RESP ||
            last.dport != port_of(i)) {
            fprintf(stderr, "connection %u: request not answered\n", i);
            return -EIO;
        }
        c->ack += RESP;
        send_seg(i, c->snd, c->ack, 0x10, 0);
        /* Virtual time passes as it would: 1 ms per 1000 connections. */
        if (i % 1000 == 999) {
            bench_now_ns += 1000000u;
            stk_timers();
        }
    }
    *ns = t;
    return 0;
}

static uint64_t
segments(struct conn *cs, uint32_t n, long count)
{
    uint64_t t = 0, t0;

    for (long k = 0; k < count; k++) {
        uint32_t i = bench_rnd() % n;
        struct conn *c = &cs[i];

        t0 = bench_mono_ns();
        send_seg(i, c->snd, c->ack, 0x18, REQ);
        t += bench_mono_ns() - t0;
        c->snd += REQ;
        if (read_all(c->s) != REQ) {
            fprintf(stderr, "connection %u: segment lost\n", i);
            return 0;
        }
    }
    return t;
}

static int
close_all(struct conn *cs, uint32_t n, uint64_t *ns)
{
    uint64_t t = 0, t0;

    for (uint32_t i = 0; i < n; i++) {
        struct conn *c = &cs[i];

        t0 = bench_mono_ns();
        send_seg(i, c->snd++, c->ack, 0x11 /* FIN|ACK */, 0);
        if (read_all(c->s) != 0) {
            fprintf(stderr, "connection %u: no EOF\n", i);
            return -EIO;
        }
        stk_sock_close(c->s);
        if (!(last.flags & 0x01) || last.dport != port_of(i)) {
            fprintf(stderr, "connection %u: no FIN\n", i);
            return -EIO;
        }
        send_seg(i, c->snd, last.seq + 1, 0x10, 0);
        t += bench_mono_ns() - t0;
    }
    *ns = t;
    return 0;
}

int
main(int argc, char **argv)
{
    long nseg = 200000;
    uint32_t n;
    struct stk_sock *l = NULL;
    struct conn *cs;
    size_t base, idle, left;
    uint64_t setup, tick, seg, closing;
    uint32_t listed;
    int opt;

    while ((opt = getopt(argc, argv, "s:")) != -1) {
        if (opt != 's')
            goto usage;
        nseg = atol(optarg);
    }
    if (optind != argc - 1 || atol(argv[optind]) <= 0 ||
        atol(argv[optind]) > 16000000 || nseg <= 0)
        goto usage;
    n = (uint32_t)atol(argv[optind]);
    cs = calloc(n, sizeof(*cs));
    if (cs == NULL || bench_stack_up(tx_send) != 0 ||
        bench_listen(PORT, &l) != 0)
        return 1;
    /* One connection opened and closed first: what the stack allocates
     * once (the demux table's first slots, the timer wheels) is in base. */
    if (open_all(l, cs, 1, &setup) != 0 || close_all(cs, 1, &closing) != 0)
        return 1;
    idle_for(1000);
    base = in_use();
    if (open_all(l, cs, n, &setup) != 0)
        return 1;
    idle_for(1000); /* delayed ACKs out, every connection quiet */
    idle = in_use();
    listed = stk_test_tick_listed();
#ifndef STK_TICK_LIST_OFF
    if (listed != 0) {
        fprintf(stderr, "%u idle connections still walked by the timers\n",
                listed);
        return 1;
    }
#endif
    tick = idle_for(10000) / 10u;
    seg = segments(cs, n, nseg);
    if (seg == 0)
        return 1;
    idle_for(1000);
    if (close_all(cs, n, &closing) != 0)
        return 1;
    idle_for(1000);
    left = in_use();
    printf("N=%u setup_ns=%.0f bytes_per_conn=%.0f tick_ns=%llu "
           "tick_listed=%u segment_ns=%.0f close_ns=%.0f bytes_left=%lld\n",
           n, (double)setup / n, ((double)idle - (double)base) / n,
           (unsigned long long)tick, listed, (double)seg / (double)nseg,
           (double)closing / n, (long long)left - (long long)base);
    free(cs);
    return 0;
usage:
    fprintf(stderr, "usage: %s [-s segments] N (1 to 16000000)\n", argv[0]);
    return 2;
}
