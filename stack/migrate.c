/*
 * Moving a connection nobody accepted yet to another process's stack.
 *
 * Each process sharing a port has its own accept queues (runtime/share.c).
 * Linux has one per listening socket, shared by every process holding it,
 * so a connection waiting there is taken by whichever process accepts
 * next. Two cases need that here: a process that stops watching a
 * listener while connections wait on its copy (nginx's accept_mutex moves
 * listeners in and out of the workers' epoll sets), and a process that
 * closes its copy while others keep theirs (an nginx worker leaving after
 * a reload). Their queued connections are exported and imported by a
 * process that accepts.
 *
 * A queued connection is simple: established (or closed by the peer), the
 * application never saw it, nothing was sent but the SYN-ACK (acknowledged)
 * and the data received so far sits in the socket's queue. Only such
 * connections move (nothing unsent, unacknowledged, out of order or
 * refused; received data up to the caller's room): the pcb is copied as a
 * whole (every process runs this same library, so the layout is the same)
 * and its pointers are rebuilt in the importing stack; the received data
 * travels next to it. The exporting stack drops its copy silently; the
 * runtime holds the connection's segments meanwhile and replays them to
 * the importer.
 *
 * Stack lock held throughout.
 */
#include <errno.h>
#include <string.h>

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "stk.h"
#include "stk_hooks.h"
#include "stk_priv.h"

_Static_assert(sizeof(struct tcp_pcb) <= STK_CONN_IMAGE_BYTES,
               "STK_CONN_IMAGE_BYTES is too small for lwIP's tcp_pcb");

static bool
exportable(const struct stk_sock *c, uint32_t cap)
{
    const struct tcp_pcb *p = c->pcb.tcp;

    return p != NULL && !c->frozen && c->rx_off == 0 && c->rx_bytes <= cap &&
           (p->state == ESTABLISHED || p->state == CLOSE_WAIT) &&
           p->unsent == NULL && p->unacked == NULL && p->ooseq == NULL &&
           p->refused_data == NULL;
}

static void
unqueue(struct stk_sock *l, struct stk_sock *c, struct stk_sock *prev)
{
    if (prev != NULL)
        prev->acc_next = c->acc_next;
    else
        l->accq_head = c->acc_next;
    if (l->accq_tail == c)
        l->accq_tail = prev;
    c->acc_next = NULL;
    c->listener = NULL;
    l->accq_len--;
}

/* A handshake in progress on l's lwIP listener (SYN-RCVD: no socket yet),
 * when l is its last socket: it would end on a closed listener and be
 * reset. Its SYN-ACK is not copied (the peer's SYN retransmission makes
 * the importer answer again). */
static int
export_half(struct stk_sock *l, struct stk_conn_image *img)
{
    struct tcp_pcb *p;

    if (l->lgrp == NULL || l->lgrp->n != 1)
        return 0;
    for (p = tcp_active_pcbs; p != NULL; p = p->next)
        if (p->state == SYN_RCVD &&
            p->listener == (struct tcp_pcb_listen *)l->lgrp->lpcb)
            break;
    if (p == NULL)
        return 0;
    memcpy(img->pcb, p, sizeof(*p));
    stk__flow_set(&img->f, &p->local_ip, p->local_port, &p->remote_ip,
                  p->remote_port);
    img->len = 0;
    img->fin = false;
    img->half = true;
    stk__flow_mute(true);
    tcp_arg(p, NULL);
    tcp_err(p, NULL);
    tcp_clear_flags(p, TF_ACK_DELAY | TF_ACK_NOW);
    tcp_abandon(p, 0);
    stk__flow_mute(false);
    return 1;
}

int
stk_listener_export(struct stk_sock *l, struct stk_conn_image *img, void *data,
                    uint32_t cap)
{
    struct stk_sock *c, *prev = NULL;
    struct tcp_pcb *p;
    uint32_t n = 0;

    if (l->type != SOCK_STREAM || l->st != STK_TCP_LISTEN)
        return 0;
    for (c = l->accq_head; c != NULL; prev = c, c = c->acc_next)
        if (exportable(c, cap))
            break;
    if (c == NULL)
        return export_half(l, img);
    unqueue(l, c, prev);
    p = c->pcb.tcp;
    memcpy(img->pcb, p, sizeof(*p));
    stk__flow_set(&img->f, &p->local_ip, p->local_port, &p->remote_ip,
                  p->remote_port);
    img->fin = c->fin_rcvd;
    img->half = false;
    for (uint32_t i = 0; i < c->rxq.count; i++) {
        struct pbuf *seg = stk__ring_seg_at(&c->rxq, i);

        n +=
            pbuf_copy_partial(seg, (uint8_t *)data + n, (u16_t)seg->tot_len, 0);
    }
    img->len = n;
    /* This copy goes silently: the connection lives on elsewhere. */
    stk__flow_mute(true);
    stk__tcp_detach(c);
    tcp_clear_flags(p, TF_ACK_DELAY | TF_ACK_NOW);
    tcp_abandon(p, 0);
    stk__flow_mute(false);
    stk__sock_free(c);
    if (l->lgrp != NULL)
        stk__tcp_group_backlog(l->lgrp);
    stk__changed(l, false);
    return 1;
}

int
stk_listener_import(struct stk_sock *l, const struct stk_conn_image *img,
                    const void *data)
{
    struct tcp_pcb *p, *fresh;
    struct stk_sock *c;
    struct pbuf *q;

    if (l->type != SOCK_STREAM || l->st != STK_TCP_LISTEN)
        return -EINVAL;
    fresh = tcp_new();
    if (fresh == NULL)
        return -ENOMEM;
    p = fresh;
    memcpy(p, img->pcb, sizeof(*p));
    /* Pointers and timers are this stack's. */
    p->next = NULL;
    p->callback_arg = NULL;
    memset(p->ext_args, 0, sizeof(p->ext_args));
    p->unsent = p->unacked = p->ooseq = NULL;
    p->refused_data = NULL;
    p->listener = NULL;
    p->recv = NULL;
    p->sent = NULL;
    p->connected = NULL;
    p->poll = NULL;
    p->errf = NULL;
    tcp_clear_flags(p, TF_BACKLOGPEND | TF_ACK_DELAY | TF_ACK_NOW);
    p->tmr = tcp_ticks;
    p->polltmr = 0;
    p->rtime = -1;
    p->nrtx = 0;
    p->dupacks = 0;
    stk__tcp_ext_imported(p);
#if TCP_OVERSIZE
    p->unsent_oversize = 0;
#endif
    if (img->half) {
        /* The handshake ends here: lwIP then calls our listener's accept
         * callback, which queues the connection as usual. */
        p->snd_queuelen = 0; /* its SYN-ACK stayed behind */
        p->listener = (struct tcp_pcb_listen *)l->lgrp->lpcb;
        p->callback_arg = l->lgrp;
        TCP_REG_ACTIVE(p);
        return 0;
    }
    /* Reported to the runtime as this process's connection. */
    TCP_REG_ACTIVE(p);
    c = stk__tcp_queue_new(l, p);
    if (c == NULL) {
        tcp_abort(p);
        return -ENOMEM;
    }
    if (img->len > 0) {
        q = pbuf_alloc(PBUF_RAW, (u16_t)img->len, PBUF_RAM);
        if (q == NULL || stk__ring_push_seg(&c->rxq, q) < 0) {
            if (q != NULL)
                pbuf_free(q);
            /* The peer will get a RST; it is gone from this queue. */
            stk__tcp_abort(c);
            return -ENOMEM;
        }
        pbuf_take(q, data, (u16_t)img->len);
        c->rx_bytes = img->len;
    }
    if (img->fin) {
        c->fin_rcvd = true;
        c->shut_rd = true;
    }
    stk__changed(c, true);
    stk__changed(l, true);
    return 0;
}
