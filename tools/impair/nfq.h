/*
 * nfq: the part of accel-impaird that speaks nfnetlink_queue directly over
 * a NETLINK_NETFILTER socket (linux/netfilter/nfnetlink_queue.h), without
 * libnetfilter_queue or libmnl (the project's dependencies are fixed).
 *
 * One socket serves every queue the daemon binds. Packets are received in
 * batches (recvmmsg); verdicts are appended to a buffer and sent several
 * messages per sendmsg by nfq_flush(). Verdicts may be given in any order:
 * the kernel finds a queued packet by its id.
 *
 * Return convention: 0 or a count on success, -errno on failure. Not
 * thread-safe: one thread owns a struct nfq.
 */
#ifndef ACCEL_IMPAIR_NFQ_H
#define ACCEL_IMPAIR_NFQ_H

#include <stddef.h>
#include <stdint.h>

#define NFQ_BATCH 32 /* packets per recvmmsg */

/* One packet handed to user space. */
struct nfq_pkt {
    uint16_t queue;         /* queue number it came from */
    uint32_t id;            /* the kernel's packet id, for the verdict */
    unsigned char *payload; /* the IP packet (copy mode packet), or NULL */
    uint32_t len;           /* bytes at payload (may be a truncated copy) */
    uint32_t orig_len;      /* length of the packet in the kernel */
};

struct nfq {
    int fd;
    size_t slot_size; /* receive buffer per message */
    unsigned char *rx;
    unsigned char *tx; /* pending verdict messages */
    size_t tx_len, tx_cap;
    uint32_t seq;
    uint64_t verdict_errors; /* NLMSG_ERROR answers to verdicts */
    uint64_t send_errors;    /* failed sendmsg of a verdict batch */
};

/**
 * Open the netlink socket with a receive buffer of rcvbuf bytes (forced
 * when the caller is privileged) and NETLINK_NO_ENOBUFS set.
 * @param copy_packet 0: metadata only; 1: the whole packet (up to 64 KiB).
 */
int nfq_open(struct nfq *q, int copy_packet, int rcvbuf);

/**
 * Bind queue number num: copy mode as given to nfq_open, the kernel's
 * queue limit maxlen, and fail-open (a packet the queue or the socket
 * cannot take is accepted, not dropped). -EBUSY when another process
 * holds the queue.
 */
int nfq_bind(struct nfq *q, uint16_t num, int copy_packet, uint32_t maxlen);

/**
 * Receive up to NFQ_BATCH packets without blocking. Fills pkts (their
 * payload pointers stay valid until the next nfq_recv). Returns the count,
 * 0 when nothing is waiting, or -errno.
 */
int nfq_recv(struct nfq *q, struct nfq_pkt *pkts, int max);

/**
 * Queue the verdict NF_ACCEPT for packet id of queue, with a replacement
 * payload when data is not NULL. Flushes by itself when the buffer fills.
 */
int nfq_accept(struct nfq *q, uint16_t queue, uint32_t id,
               const unsigned char *data, uint32_t len);

/** Send the queued verdicts. */
int nfq_flush(struct nfq *q);

void nfq_close(struct nfq *q);

#endif /* ACCEL_IMPAIR_NFQ_H */
