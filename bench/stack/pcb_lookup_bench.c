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

#include "bench_stack.h"
#include "stk.h"

#define PORT 80
#define PAYLOAD 64
#define FRAME_MAX (14 + 20 + 20 + PAYLOAD)

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

/* The peer only needs the stack's ISN from its SYN-ACKs. */
static void
tx_send(void *ctx, void *handle, uint16_t len)
{
    const uint8_t *t = bench_txbuf + 14 + 20;

    (void)ctx;
    (void)handle;
    tx_frames++;
    if (len >= 14 + 20 + 20 && bench_txbuf[12] == 0x08 &&
        bench_txbuf[13] == 0 && bench_txbuf[14 + 9] == 6 &&
        (t[13] & 0x12) == 0x12)
        last_synack_seq = bench_get32(t + 4);
}

/* A TCP segment from the peer to the stack, Ethernet framed. */
static void
build(struct frame *f, uint16_t sport, uint32_t seq, uint32_t ack,
      uint8_t flags, uint16_t paylen)
{
    uint8_t *ip = f->b + 14, *t = ip + 20;
    uint16_t tlen = (uint16_t)(20 + paylen);
    uint16_t i;

    bench_tcp_header(f->b, tlen, sport, PORT);
    bench_put32(t + 4, seq);
    bench_put32(t + 8, ack);
    t[12] = 5 << 4;
    t[13] = flags;
    bench_put16(t + 14, 65535);
    for (i = 0; i < paylen; i++)
        t[20 + i] = (uint8_t)(seq + i);
    bench_tcp_csums(ip, tlen);
    f->len = (uint16_t)(14 + 20 + tlen);
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

/* The measured part: hand the batch to the stack. */
__attribute__((noinline)) void
deliver_batch(const struct frame *fr, int n)
{
    int i;

    for (i = 0; i < n; i++)
        stk_input(fr[i].b, fr[i].len);
}

static int
run(int n, long segments, int batch)
{
    struct stk_sock *l = NULL;
    struct conn *cs = calloc((size_t)n, sizeof(*cs));
    struct frame *fr = calloc((size_t)batch, sizeof(*fr));
    int *which = calloc((size_t)batch, sizeof(*which));
    uint8_t rbuf[4096];
    uint64_t ns = 0, t0;
    long done = 0, bytes = 0;
    int i, k, rc;

    if (cs == NULL || fr == NULL || which == NULL)
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

    while (done < segments) {
        int m = segments - done < batch ? (int)(segments - done) : batch;

        for (i = 0; i < m; i++) {
            struct conn *c = &cs[bench_rnd() % (uint32_t)n];

            which[i] = (int)(c - cs);
            build(&fr[i], c->pport, c->snd, c->ack, 0x18 /* PSH|ACK */,
                  PAYLOAD);
            c->snd += PAYLOAD;
        }
        t0 = bench_mono_ns();
        deliver_batch(fr, m);
        ns += bench_mono_ns() - t0;
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

    if (bench_stack_up(tx_send) != 0)
        return 1;
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
