/*
 * Request/response micro-benchmark: what one keep-alive HTTP-like exchange
 * costs the stack (lwIP + our socket layer + our TCP sender), on a fake
 * netif with a virtual clock, no DPDK. A scripted peer (options as Linux
 * sends them: MSS, SACK permitted, timestamps, window scale) opens N
 * connections to a listener; then, round after round, one connection
 * picked at random gets a request (REQ bytes, PSH|ACK, acking the stack's
 * last response, timestamps echoed), which the application reads and
 * answers (RSP bytes, one send). serve_one() is the measured part: the
 * request's input, the read and the send with its output, so
 *
 *   valgrind --tool=callgrind --toggle-collect=serve_one
 *
 * counts exactly that (bench/stack/run.sh --rr divides by the request
 * count: instructions per request, repeatable, where the timing of a VM
 * moves by 10-30 % from run to run). The clock moves on by the RTT (-r,
 * default 40 us) per request; the stack's timers run every 32 requests
 * (a poll turn's worth). Checksums: the netif claims rx offload (as
 * af_xdp and memif do not: their verification is the same in every build
 * and left out); tx checksums are computed.
 *
 * Usage: rr_bench [-n requests] [-r rtt_us] [-c cc] N   (cc: cubic, reno,
 * bbr; default cubic)
 * Prints: "N=<n> requests=<m> ns_per_request=<t> retransmissions=<k>".
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

#include "bench_stack.h"
#include "stk.h"

#define PORT 80
#define REQ 80  /* a short GET */
#define RSP 160 /* headers and a small body */
#define FRAME_MAX (14 + 20 + 40 + REQ)

/* What the peer learnt from the stack's last frame. */
static struct {
    uint16_t dport;    /* the peer's port it went to */
    uint32_t seq, len; /* sequence number, payload length */
    uint32_t tsval;    /* its timestamp (0: none) */
    uint8_t flags;
} last;
static unsigned long tx_frames, tx_retrans;

struct conn {
    struct stk_sock *s;
    uint16_t pport;
    uint32_t snd;   /* peer's next sequence number */
    uint32_t ack;   /* stack's next sequence number */
    uint32_t tsecr; /* the stack's last timestamp */
    uint32_t high;  /* the highest sequence the stack sent */
};

struct frame {
    uint8_t b[FRAME_MAX];
    uint16_t len;
};

static void
tx_send(void *ctx, void *handle, uint16_t len)
{
    const uint8_t *ip = bench_txbuf + 14, *t = ip + 20;
    uint16_t iplen, hl, i;

    (void)ctx;
    (void)handle;
    tx_frames++;
    if (len < 14 + 20 + 20 || bench_txbuf[12] != 0x08 || bench_txbuf[13] != 0 ||
        ip[9] != 6)
        return;
    iplen = (uint16_t)(ip[2] << 8 | ip[3]);
    hl = (uint16_t)((t[12] >> 4) * 4);
    last.dport = (uint16_t)(t[2] << 8 | t[3]);
    last.seq = bench_get32(t + 4);
    last.len = (uint32_t)(iplen - 20 - hl);
    last.flags = t[13];
    last.tsval = 0;
    for (i = 20; i + 1 < hl;) {
        if (t[i] == 0)
            break;
        if (t[i] == 1) {
            i++;
            continue;
        }
        if (t[i] == 8 && t[i + 1] == 10)
            last.tsval = bench_get32(t + i + 2);
        if (t[i + 1] < 2)
            break;
        i = (uint16_t)(i + t[i + 1]);
    }
}

static uint32_t
peer_ts(void)
{
    return (uint32_t)(bench_now_ns / 1000000u) +
           12345u; /* the peer's ms clock */
}

/* A TCP segment from the peer to the stack, Ethernet framed; a SYN
 * carries Linux's options, every other segment timestamps. */
static void
build(struct frame *f, const struct conn *c, uint8_t flags, uint16_t paylen)
{
    uint8_t *ip = f->b + 14, *t = ip + 20, *o = t + 20;
    uint16_t olen = (flags & 0x02) ? 20 : 12;
    uint16_t tlen = (uint16_t)(20 + olen + paylen);
    uint16_t i;

    bench_tcp_header(f->b, tlen, c->pport, PORT);
    bench_put32(t + 4, c->snd);
    bench_put32(t + 8, (flags & 0x10) ? c->ack : 0);
    t[12] = (uint8_t)((20 + olen) / 4 << 4);
    t[13] = flags;
    bench_put16(t + 14,
                (flags & 0x02) ? 65535 : 2048); /* x 2^7 after the SYN */
    if (flags & 0x02) {
        /* MSS 1460, SACK permitted, timestamps, NOP, window scale 7 */
        const uint8_t syn[8] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10};

        memcpy(o, syn, 8);
        bench_put32(o + 8, peer_ts());
        bench_put32(o + 12, 0);
        o[16] = 1;
        o[17] = 3;
        o[18] = 3;
        o[19] = 7;
    } else {
        o[0] = 1;
        o[1] = 1;
        o[2] = 8;
        o[3] = 10;
        bench_put32(o + 4, peer_ts());
        bench_put32(o + 8, c->tsecr);
    }
    for (i = 0; i < paylen; i++)
        t[20 + olen + i] = (uint8_t)('a' + i % 26);
    bench_tcp_csums(ip, tlen);
    f->len = (uint16_t)(14 + 20 + tlen);
}

/* What the stack just sent to c: the peer takes note. */
static void
peer_saw(struct conn *c)
{
    uint32_t end;

    if (last.dport != c->pport)
        return;
    end = last.seq + last.len + ((last.flags & 0x03) ? 1 : 0);
    if (last.len > 0 && (int32_t)(end - c->high) <= 0)
        tx_retrans++;
    if ((int32_t)(end - c->high) > 0)
        c->high = end;
    if ((int32_t)(end - c->ack) > 0)
        c->ack = end;
    if (last.tsval != 0)
        c->tsecr = last.tsval;
}

static int
open_conn(struct stk_sock *l, struct conn *c, uint16_t pport)
{
    struct frame f;

    memset(c, 0, sizeof(*c));
    c->pport = pport;
    c->snd = 1000;
    build(&f, c, 0x02 /* SYN */, 0);
    c->snd++;
    stk_input(f.b, f.len);
    if (last.dport != pport || (last.flags & 0x12) != 0x12)
        return -EPROTO; /* no SYN-ACK */
    c->ack = c->high = last.seq + 1;
    c->tsecr = last.tsval;
    bench_now_ns += 40000;
    build(&f, c, 0x10 /* ACK */, 0);
    stk_input(f.b, f.len);
    return stk_sock_accept(l, &c->s, NULL, NULL);
}

/* The measured part: the request in, read, the response out. */
__attribute__((noinline)) ssize_t
serve_one(const struct frame *f, struct stk_sock *s, uint8_t *buf)
{
    static const char rsp[RSP] = "HTTP/1.1 200 OK\r\n";
    struct iovec riov = {buf, 4096}, siov = {(void *)rsp, RSP};
    struct msghdr rmsg = {.msg_iov = &riov, .msg_iovlen = 1};
    struct msghdr smsg = {.msg_iov = &siov, .msg_iovlen = 1};
    ssize_t got;

    stk_input(f->b, f->len);
    got = stk_sock_recvmsg(s, &rmsg, 0);
    if (got != REQ)
        return got < 0 ? got : -EIO;
    return stk_sock_sendmsg(s, &smsg, 0);
}

static int
run(int n, long requests, uint32_t rtt_us)
{
    struct stk_sock *l = NULL;
    struct conn *cs = calloc((size_t)n, sizeof(*cs));
    uint8_t buf[4096];
    uint64_t ns = 0, t0;
    long done;
    int i, rc;

    if (cs == NULL)
        return -ENOMEM;
    if ((rc = bench_listen(PORT, &l)) != 0)
        return rc;
    for (i = 0; i < n; i++) {
        rc = open_conn(l, &cs[i], (uint16_t)(10000 + i));
        if (rc != 0) {
            fprintf(stderr, "connection %d: accept failed (%d)\n", i, rc);
            return rc;
        }
    }
    for (done = 0; done < requests; done++) {
        struct conn *c = &cs[bench_rnd() % (uint32_t)n];
        struct frame f;
        ssize_t sent;

        build(&f, c, 0x18 /* PSH|ACK */, REQ);
        c->snd += REQ;
        t0 = bench_mono_ns();
        sent = serve_one(&f, c->s, buf);
        ns += bench_mono_ns() - t0;
        if (sent != RSP) {
            fprintf(stderr, "request %ld: the response went %zd\n", done, sent);
            return sent < 0 ? (int)sent : -EIO;
        }
        peer_saw(c);
        if (c->ack != c->high) {
            fprintf(stderr, "request %ld: no response segment\n", done);
            return -EIO;
        }
        bench_now_ns += (uint64_t)rtt_us * 1000u;
        if (done % 32 == 31)
            stk_timers();
    }
    if (tx_retrans != 0) {
        /* The path loses nothing and the peer answers within 40 us per
         * request in flight: a retransmission is a timer gone off early. */
        fprintf(stderr, "N=%d: %lu segments retransmitted on a lossless path\n",
                n, tx_retrans);
        return -EPROTO;
    }
    printf("N=%d requests=%ld ns_per_request=%.1f retransmissions=%lu\n", n,
           requests, (double)ns / (double)requests, tx_retrans);
    free(cs);
    return 0;
}

int
main(int argc, char **argv)
{
    long requests = 100000;
    uint32_t rtt_us = 40;
    const char *cc = "cubic";
    int opt, rc;

    while ((opt = getopt(argc, argv, "n:r:c:")) != -1) {
        if (opt == 'n')
            requests = atol(optarg);
        else if (opt == 'r')
            rtt_us = (uint32_t)atoi(optarg);
        else if (opt == 'c')
            cc = optarg;
        else
            goto usage;
    }
    if (optind != argc - 1 || atoi(argv[optind]) <= 0 || requests <= 0)
        goto usage;

#ifndef RR_NO_CC /* builds before the congestion controls */
    {
        struct stk_tcp_cfg tc = {.rto_min_ms = 200, .cc = stk_tcp_cc_find(cc)};

        if (tc.cc < 0 || stk_tcp_configure(&tc) != 0) {
            fprintf(stderr, "no congestion control called %s\n", cc);
            return 2;
        }
    }
#else
    (void)cc;
#endif
    if (bench_stack_up(tx_send) != 0)
        return 1;
    rc = run(atoi(argv[optind]), requests, rtt_us);
    if (rc != 0) {
        fprintf(stderr, "N=%s: failed (%d)\n", argv[optind], rc);
        return 1;
    }
    return 0;
usage:
    fprintf(stderr, "usage: %s [-n requests] [-r rtt_us] [-c cc] N\n", argv[0]);
    return 2;
}
