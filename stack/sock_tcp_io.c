/*
 * TCP sockets, data path: recvmsg over the queue of received pbuf chains
 * (MSG_PEEK, MSG_TRUNC = discard, as Linux), the receive window given back
 * to lwIP with tcp_recved() only as the application reads (so the
 * advertised window is the back-pressure, capped by SO_RCVBUF), and
 * sendmsg copying into lwIP's send queue (TCP_WRITE_FLAG_COPY) up to the
 * room SO_SNDBUF and lwIP leave: partial writes, then -EAGAIN.
 *
 * Error order follows Linux's tcp_recvmsg / tcp_sendmsg: queued data
 * first, then a pending error (taken once), then end of stream (0) or
 * EPIPE.
 */
#include <errno.h>
#include <sys/socket.h>

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "stk_priv.h"

/* Window lwIP may advertise: the cap minus what waits in our queue. */
void
stk__tcp_window_update(struct stk_sock *s)
{
    struct tcp_pcb *pcb = s->pcb.tcp;
    uint32_t limit, want, delta, was;

    if (pcb == NULL || pcb->state == LISTEN || pcb->state == TIME_WAIT)
        return;
    limit = s->rcv_limit < TCP_WND_MAX(pcb) ? s->rcv_limit
                                            : (uint32_t)TCP_WND_MAX(pcb);
    want = limit > s->rx_bytes ? (uint32_t)(limit - s->rx_bytes) : 0;
    if (pcb->rcv_wnd >= want)
        return;
    was = pcb->rcv_wnd;
    delta = want - pcb->rcv_wnd;
    while (delta > 0) {
        u16_t chunk = delta > 0xffff ? 0xffff : (u16_t)delta;

        tcp_recved(pcb, chunk);
        delta -= chunk;
    }
    /* lwIP only announces growth past TCP_WND_UPDATE_THRESHOLD; a small
     * SO_RCVBUF never gets there. Reopening a (nearly) closed window must
     * be announced at once, or the sender waits for its persist timer. */
    if (was < pcb->mss && pcb->rcv_wnd >= LWIP_MIN(pcb->mss, limit / 2)) {
        tcp_ack_now(pcb);
        tcp_output(pcb);
    }
}

uint32_t
stk__tcp_snd_avail(struct stk_sock *s)
{
    struct tcp_pcb *pcb = s->pcb.tcp;
    uint32_t queued, room;

    if (pcb == NULL || pcb->state == LISTEN)
        return 0;
    if (pcb->snd_queuelen >= TCP_SND_QUEUELEN - 8)
        return 0;
    queued = TCP_SND_BUF - pcb->snd_buf;
    if (queued >= s->snd_limit)
        return 0;
    room = s->snd_limit - queued;
    return room < pcb->snd_buf ? room : pcb->snd_buf;
}

static ssize_t
no_data(struct stk_sock *s)
{
    int e = s->err;

    if (e != 0) {
        s->err = 0;
        stk__changed(s, false);
        return -e;
    }
    if (s->shut_rd)
        return 0;
    if (s->st == STK_TCP_CLOSED)
        return s->ever_connected ? 0 : -ENOTCONN;
    return -EAGAIN;
}

ssize_t
stk__tcp_recvmsg(struct stk_sock *s, struct msghdr *msg, int flags)
{
    size_t want, done = 0;
    uint32_t off, i;
    bool peek = flags & MSG_PEEK, discard = flags & MSG_TRUNC;

    msg->msg_flags = 0;
    msg->msg_namelen = 0;
    msg->msg_controllen = 0; /* no control messages on TCP */
    if (s->st == STK_TCP_LISTEN)
        return -ENOTCONN;
    if (flags & MSG_OOB)
        return -EINVAL;
    if (s->rx_bytes == 0)
        return no_data(s);
    want = stk__iov_len(msg);
    if (want == 0)
        return 0;
    off = s->rx_off;
    for (i = 0; done < want; i++) {
        struct pbuf *seg = stk__ring_seg_at(&s->rxq, i);
        size_t n;

        if (seg == NULL)
            break;
        n = seg->tot_len - off;
        if (n > want - done)
            n = want - done;
        if (!discard)
            stk__iov_copy_from_pbuf(msg, done, seg, off, n);
        done += n;
        off = 0;
    }
    if (peek)
        return (ssize_t)done;
    /* Consume what was copied. */
    s->rx_bytes -= done;
    {
        size_t left = done;

        while (left > 0) {
            size_t n = stk__ring_seg_at(&s->rxq, 0)->tot_len - s->rx_off;

            if (left < n) {
                s->rx_off += (uint32_t)left;
                break;
            }
            left -= n;
            s->rx_off = 0;
            stk__ring_pop(&s->rxq);
        }
    }
    stk__tcp_window_update(s);
    stk__changed(s, false);
    return (ssize_t)done;
}

static ssize_t
send_error(struct stk_sock *s)
{
    int e = s->err;

    if (e != 0) {
        s->err = 0;
        stk__changed(s, false);
        return -e;
    }
    return -EPIPE;
}

ssize_t
stk__tcp_sendmsg(struct stk_sock *s, const struct msghdr *msg, int flags)
{
    struct tcp_pcb *pcb = s->pcb.tcp;
    size_t total, sent = 0, i;
    uint32_t avail;
    u8_t wflags = TCP_WRITE_FLAG_COPY;

    if (flags & MSG_OOB)
        return -EOPNOTSUPP;
    if (s->st == STK_TCP_SYN_SENT)
        return s->err ? send_error(s) : -EAGAIN;
    if (s->st != STK_TCP_CONNECTED || pcb == NULL || s->err != 0 || s->shut_wr)
        return send_error(s);
    total = stk__iov_len(msg);
    if (total == 0)
        return 0;
    avail = stk__tcp_snd_avail(s);
    if (avail == 0)
        return -EAGAIN;
    stk__tcp_check_app_limited(pcb);
    /* MSG_MORE: the partial tail waits for the next write (tcp_recovery.c
     * cork_holds); a write without it sends what waited. */
    pcb->acc.more = (flags & MSG_MORE) != 0;
    if (!pcb->acc.more && !pcb->acc.corked)
        pcb->acc.hold_ns = 0;
    for (i = 0; i < (size_t)msg->msg_iovlen && avail > 0; i++) {
        const uint8_t *base = msg->msg_iov[i].iov_base;
        size_t len = msg->msg_iov[i].iov_len, off = 0;

        while (off < len && avail > 0) {
            size_t chunk = len - off;
            err_t e;

            bool last;

            if (chunk > avail)
                chunk = avail;
            if (chunk > 0xffff)
                chunk = 0xffff;
            /* PSH on the last segment of what this call queues, also when
             * the buffer cut the write short (Linux's tcp_push at the end
             * of tcp_sendmsg). */
            last = sent + chunk == total || chunk == avail;
            e = tcp_write(pcb, base + off, (u16_t)chunk,
                          (u8_t)(wflags | (last ? 0 : TCP_WRITE_FLAG_MORE)));
            if (e != ERR_OK) {
                if (sent == 0 && e != ERR_MEM)
                    return stk_err_to_errno(e);
                avail = 0;
                break;
            }
            off += chunk;
            sent += chunk;
            avail -= (uint32_t)chunk;
        }
    }
    if (sent == 0)
        return -EAGAIN;
    stk__tcp_output_soon(s);
    stk__changed(s, false);
    return (ssize_t)sent;
}
