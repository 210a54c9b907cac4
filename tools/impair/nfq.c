/*
 * nfq: nfnetlink_queue over a raw NETLINK_NETFILTER socket (see nfq.h).
 *
 * Messages are built by hand: struct nlmsghdr, struct nfgenmsg (family
 * AF_UNSPEC, version 0, res_id = the queue number, big-endian), then
 * netlink attributes, each padded to 4 bytes. Configuration messages ask
 * for an acknowledgement and wait for it; verdicts do not (an error still
 * comes back as NLMSG_ERROR and is counted by nfq_recv).
 */
#define _GNU_SOURCE
#include "nfq.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define COPY_RANGE 0xffff       /* whole packets, as large as IPv4 allows */
#define SLOT_META 1024          /* a metadata-only message fits easily */
#define SLOT_PACKET (70 * 1024) /* headers + attributes + 64 KiB packet */
#define TX_CAP (160 * 1024)     /* verdicts pending before a forced send */
#define SNDBUF (1024 * 1024)    /* netlink refuses a send over its sndbuf */
#define VERDICT_MAX_MSG (NLMSG_HDRLEN + 64 + NLA_HDRLEN + COPY_RANGE + 4)

static void
put_attr(unsigned char *buf, size_t *len, uint16_t type, const void *data,
         size_t dlen)
{
    struct nlattr *a = (struct nlattr *)(buf + *len);

    a->nla_type = type;
    a->nla_len = (uint16_t)(NLA_HDRLEN + dlen);
    if (dlen > 0)
        memcpy(buf + *len + NLA_HDRLEN, data, dlen);
    /* Zero the padding: the kernel does not read it, valgrind would. */
    memset(buf + *len + NLA_HDRLEN + dlen, 0,
           NLA_ALIGN(NLA_HDRLEN + dlen) - (NLA_HDRLEN + dlen));
    *len += NLA_ALIGN(NLA_HDRLEN + dlen);
}

/* Start a message of type NFQNL_MSG_<msg> for queue num at buf. */
static size_t
begin_msg(unsigned char *buf, uint16_t msg, uint16_t flags, uint32_t seq,
          uint16_t num)
{
    struct nlmsghdr *nh = (struct nlmsghdr *)buf;
    struct nfgenmsg *g = (struct nfgenmsg *)(buf + NLMSG_HDRLEN);

    memset(buf, 0, NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*g)));
    nh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | msg;
    nh->nlmsg_flags = NLM_F_REQUEST | flags;
    nh->nlmsg_seq = seq;
    g->nfgen_family = AF_UNSPEC;
    g->version = NFNETLINK_V0;
    g->res_id = htons(num);
    return NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*g));
}

static void
end_msg(unsigned char *buf, size_t len)
{
    ((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)len;
}

int
nfq_open(struct nfq *q, int copy_packet, int rcvbuf)
{
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    int one = 1;

    memset(q, 0, sizeof(*q));
    q->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (q->fd < 0)
        return -errno;
    if (bind(q->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        goto fail;
    /* A full socket buffer is a fail-open accept in the kernel (the queue
     * is bound with NFQA_CFG_F_FAIL_OPEN), never an ENOBUFS to handle. */
    if (setsockopt(q->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) <
            0 &&
        setsockopt(q->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0)
        goto fail;
    if (setsockopt(q->fd, SOL_SOCKET, SO_SNDBUFFORCE, &(int){SNDBUF},
                   sizeof(int)) < 0 &&
        setsockopt(q->fd, SOL_SOCKET, SO_SNDBUF, &(int){SNDBUF}, sizeof(int)) <
            0)
        goto fail;
    if (setsockopt(q->fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one)) <
        0)
        goto fail;
    q->slot_size = copy_packet ? SLOT_PACKET : SLOT_META;
    q->rx = malloc(q->slot_size * NFQ_BATCH);
    q->tx_cap = TX_CAP;
    q->tx = malloc(q->tx_cap);
    if (q->rx == NULL || q->tx == NULL) {
        errno = ENOMEM;
        goto fail;
    }
    return 0;
fail:;
    int err = errno;
    nfq_close(q);
    return -err;
}

/* The message at off in a buffer of len bytes, or NULL past the last one
 * (the kernel does not pad the last message to NLMSG_ALIGN). */
static struct nlmsghdr *
msg_at(unsigned char *buf, size_t len, size_t off)
{
    struct nlmsghdr *nh;

    if (off + NLMSG_HDRLEN > len)
        return NULL;
    nh = (struct nlmsghdr *)(buf + off);
    if (nh->nlmsg_len < NLMSG_HDRLEN || nh->nlmsg_len > len - off)
        return NULL;
    return nh;
}

static bool
is_packet_msg(const struct nlmsghdr *nh)
{
    return (nh->nlmsg_type >> 8) == NFNL_SUBSYS_QUEUE &&
           (nh->nlmsg_type & 0xff) == NFQNL_MSG_PACKET;
}

/* Fill p from one NFQNL_MSG_PACKET message; 0, or -EINVAL when it has no
 * packet header. */
static int
parse_packet(struct nlmsghdr *nh, struct nfq_pkt *p)
{
    struct nfgenmsg *g = NLMSG_DATA(nh);
    size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*g));
    int have_id = 0;

    memset(p, 0, sizeof(*p));
    p->queue = ntohs(g->res_id);
    while (off + NLA_HDRLEN <= nh->nlmsg_len) {
        struct nlattr *a = (struct nlattr *)((unsigned char *)nh + off);
        size_t alen = a->nla_len;
        unsigned char *data = (unsigned char *)a + NLA_HDRLEN;

        if (alen < NLA_HDRLEN || off + alen > nh->nlmsg_len)
            break;
        switch (a->nla_type & NLA_TYPE_MASK) {
        case NFQA_PACKET_HDR:
            if (alen >= NLA_HDRLEN + sizeof(struct nfqnl_msg_packet_hdr)) {
                struct nfqnl_msg_packet_hdr *ph = (void *)data;
                p->id = ntohl(ph->packet_id);
                have_id = 1;
            }
            break;
        case NFQA_PAYLOAD:
            p->payload = data;
            p->len = (uint32_t)(alen - NLA_HDRLEN);
            break;
        case NFQA_CAP_LEN:
            if (alen >= NLA_HDRLEN + 4) {
                uint32_t v;
                memcpy(&v, data, 4);
                p->orig_len = ntohl(v);
            }
            break;
        default:
            break;
        }
        off += NLA_ALIGN(alen);
    }
    if (p->orig_len == 0)
        p->orig_len = p->len; /* NFQA_CAP_LEN only comes with a cut copy */
    return have_id ? 0 : -EINVAL;
}

/* Send one configuration message and wait for its acknowledgement. A
 * packet message arriving meanwhile (another queue already bound) is
 * accepted at once so it is not left without a verdict. */
static int
config_roundtrip(struct nfq *q, unsigned char *msg, size_t len)
{
    uint32_t seq = ((struct nlmsghdr *)msg)->nlmsg_seq;
    unsigned char buf[SLOT_PACKET];

    if (send(q->fd, msg, len, 0) < 0)
        return -errno;
    for (;;) {
        ssize_t n = recv(q->fd, buf, sizeof(buf), 0);
        struct nlmsghdr *nh;
        struct nfq_pkt p;

        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        for (size_t off = 0; (nh = msg_at(buf, (size_t)n, off)) != NULL;
             off += NLMSG_ALIGN(nh->nlmsg_len)) {
            if (nh->nlmsg_type == NLMSG_ERROR && nh->nlmsg_seq == seq) {
                struct nlmsgerr *e = NLMSG_DATA(nh);
                return e->error; /* 0: the acknowledgement */
            }
            if (is_packet_msg(nh) && parse_packet(nh, &p) == 0)
                nfq_accept(q, p.queue, p.id, NULL, 0);
        }
        nfq_flush(q);
    }
}

int
nfq_bind(struct nfq *q, uint16_t num, int copy_packet, uint32_t maxlen)
{
    unsigned char msg[256];
    struct nfqnl_msg_config_cmd cmd = {.command = NFQNL_CFG_CMD_BIND};
    struct nfqnl_msg_config_params params = {
        .copy_range = htonl(COPY_RANGE),
        .copy_mode = copy_packet ? NFQNL_COPY_PACKET : NFQNL_COPY_META,
    };
    uint32_t be_maxlen = htonl(maxlen);
    uint32_t flags = htonl(NFQA_CFG_F_FAIL_OPEN);
    size_t len;
    int rc;

    len = begin_msg(msg, NFQNL_MSG_CONFIG, NLM_F_ACK, ++q->seq, num);
    put_attr(msg, &len, NFQA_CFG_CMD, &cmd, sizeof(cmd));
    end_msg(msg, len);
    rc = config_roundtrip(q, msg, len);
    if (rc < 0)
        return rc;

    len = begin_msg(msg, NFQNL_MSG_CONFIG, NLM_F_ACK, ++q->seq, num);
    /* The kernel reads 5 bytes (a packed struct); sizeof pads it to 8. */
    put_attr(msg, &len, NFQA_CFG_PARAMS, &params, 5);
    put_attr(msg, &len, NFQA_CFG_QUEUE_MAXLEN, &be_maxlen, 4);
    put_attr(msg, &len, NFQA_CFG_MASK, &flags, 4);
    put_attr(msg, &len, NFQA_CFG_FLAGS, &flags, 4);
    end_msg(msg, len);
    return config_roundtrip(q, msg, len);
}

int
nfq_recv(struct nfq *q, struct nfq_pkt *pkts, int max)
{
    struct mmsghdr mm[NFQ_BATCH];
    struct iovec iov[NFQ_BATCH];
    int n, got = 0;

    if (max > NFQ_BATCH)
        max = NFQ_BATCH;
    memset(mm, 0, sizeof(mm));
    for (int i = 0; i < max; i++) {
        iov[i].iov_base = q->rx + (size_t)i * q->slot_size;
        iov[i].iov_len = q->slot_size;
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
    }
    n = recvmmsg(q->fd, mm, (unsigned)max, MSG_DONTWAIT, NULL);
    if (n < 0)
        return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
    for (int i = 0; i < n; i++) {
        unsigned char *buf = iov[i].iov_base;
        size_t len = mm[i].msg_len;
        struct nlmsghdr *nh;

        if (mm[i].msg_hdr.msg_flags & MSG_TRUNC)
            continue; /* cannot happen: a slot holds a whole message */
        for (size_t off = 0; (nh = msg_at(buf, len, off)) != NULL;
             off += NLMSG_ALIGN(nh->nlmsg_len)) {
            if (nh->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *e = NLMSG_DATA(nh);
                if (e->error != 0)
                    q->verdict_errors++;
                continue;
            }
            if (is_packet_msg(nh) && parse_packet(nh, &pkts[got]) == 0)
                got++;
        }
    }
    return got;
}

int
nfq_flush(struct nfq *q)
{
    ssize_t n;

    if (q->tx_len == 0)
        return 0;
    do {
        n = send(q->fd, q->tx, q->tx_len, 0);
    } while (n < 0 && errno == EINTR);
    q->tx_len = 0;
    if (n < 0) {
        /* The packets stay queued in the kernel; they are dropped when the
         * daemon exits. Counted, shown by --show. */
        q->send_errors++;
        return -errno;
    }
    return 0;
}

int
nfq_accept(struct nfq *q, uint16_t queue, uint32_t id,
           const unsigned char *data, uint32_t len)
{
    struct nfqnl_msg_verdict_hdr vh = {
        .verdict = htonl(NF_ACCEPT),
        .id = htonl(id),
    };
    unsigned char *msg;
    size_t mlen;

    if (len > COPY_RANGE)
        return -EINVAL;
    if (q->tx_cap - q->tx_len < VERDICT_MAX_MSG) {
        int rc = nfq_flush(q);
        if (rc < 0)
            return rc;
    }
    msg = q->tx + q->tx_len;
    mlen = begin_msg(msg, NFQNL_MSG_VERDICT, 0, ++q->seq, queue);
    put_attr(msg, &mlen, NFQA_VERDICT_HDR, &vh, sizeof(vh));
    if (data != NULL)
        put_attr(msg, &mlen, NFQA_PAYLOAD, data, len);
    end_msg(msg, mlen);
    q->tx_len += NLMSG_ALIGN(mlen);
    return 0;
}

void
nfq_close(struct nfq *q)
{
    if (q->fd >= 0)
        close(q->fd);
    free(q->rx);
    free(q->tx);
    q->fd = -1;
    q->rx = q->tx = NULL;
}
