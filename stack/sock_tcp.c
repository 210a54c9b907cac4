/*
 * TCP sockets over lwIP's raw API, control path: creation, bind, connect,
 * shutdown, close, readiness, and the lwIP callbacks (connected, recv,
 * sent, err, pcb destroyed). Listening sockets and their accept queues are
 * in sock_tcp_listen.c, the data path (recvmsg/sendmsg, receive window) in
 * sock_tcp_io.c.
 *
 * Ownership: a stk_sock points at its pcb; the pcb points back through
 * callback_arg and through ext arg 0, whose destroy callback clears the
 * socket's pointer whenever lwIP frees the pcb (reset, timeout, TIME_WAIT
 * expiry, last ACK). Before the application releases a socket whose pcb
 * lives on (orderly close still sending, TIME_WAIT), every callback and
 * back pointer is cleared, so lwIP never reaches a freed stk_sock. A
 * listening socket has no pcb of its own: its listener group holds it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/epoll.h>

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "cfg.h"
#include "stats.h"
#include "stk_priv.h"

static u8_t ext_id;
static const struct tcp_ext_arg_callbacks ext_cbs;

static err_t cb_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err);
static err_t cb_sent(void *arg, struct tcp_pcb *pcb, u16_t len);
static void cb_err(void *arg, err_t err);
static err_t cb_connected(void *arg, struct tcp_pcb *pcb, err_t err);

void
stk__tcp_init(void)
{
    ext_id = tcp_ext_arg_alloc_id();
}

/* The connection leaves s: TCP_INFO's byte counts stay. */
static void
keep_counts(struct stk_sock *s, const struct tcp_pcb *pcb)
{
    if (pcb->state == LISTEN)
        return;
    s->bytes_acked = pcb->acc.bytes_acked;
    s->bytes_received = stk__tcp_bytes_received(pcb);
}

/* lwIP freed the pcb (any path: tcp_free / tcp_free_listen). */
static void
pcb_destroyed(u8_t id, void *data)
{
    struct stk_sock *s = data;

    (void)id;
    if (s == NULL)
        return;
    if (s->pcb.tcp != NULL)
        keep_counts(s, s->pcb.tcp);
    s->pcb.tcp = NULL;
    if (s->st != STK_TCP_LISTEN) {
        s->st = STK_TCP_CLOSED;
        s->shut_rd = s->shut_wr = true;
    }
    stk__changed(s, true);
}

static const struct tcp_ext_arg_callbacks ext_cbs = {
    .destroy = pcb_destroyed,
    .passive_open = NULL,
};

void
stk__tcp_attach(struct stk_sock *s, struct tcp_pcb *pcb)
{
    s->pcb.tcp = pcb;
    tcp_arg(pcb, s);
    tcp_ext_arg_set_callbacks(pcb, ext_id, &ext_cbs);
    tcp_ext_arg_set(pcb, ext_id, s);
    if (pcb->state != LISTEN) {
        tcp_recv(pcb, cb_recv);
        tcp_sent(pcb, cb_sent);
        tcp_err(pcb, cb_err);
    }
}

/* Cut every link from the pcb to s; the pcb stays with lwIP. */
struct tcp_pcb *
stk__tcp_detach(struct stk_sock *s)
{
    struct tcp_pcb *pcb = s->pcb.tcp;

    if (pcb == NULL)
        return NULL;
    keep_counts(s, pcb);
    tcp_ext_arg_set(pcb, ext_id, NULL);
    tcp_arg(pcb, NULL);
    if (pcb->state == LISTEN) {
        tcp_accept(pcb, NULL);
    } else {
        tcp_recv(pcb, NULL);
        tcp_sent(pcb, NULL);
        tcp_err(pcb, NULL);
    }
    s->pcb.tcp = NULL;
    return pcb;
}

/* Abort the connection with a RST (or silently when not synchronized). */
void
stk__tcp_abort(struct stk_sock *s)
{
    struct tcp_pcb *pcb = stk__tcp_detach(s);

    if (pcb == NULL)
        return;
    if (pcb->state == LISTEN) {
        tcp_close(pcb);
        return;
    }
    if (pcb->state != SYN_SENT && pcb->state != CLOSED &&
        pcb->state != TIME_WAIT)
        BASE_STAT_INC(tcp_rst_sent);
    tcp_abandon(pcb, pcb->state != SYN_SENT);
}

/* The pcb reached TIME_WAIT: the socket's connection is over (Linux
 * moves the socket to CLOSE there); leave the pcb to lwIP. */
static void
sync_state(struct stk_sock *s)
{
    struct tcp_pcb *pcb = s->pcb.tcp;

    if (pcb == NULL || s->st != STK_TCP_CONNECTED)
        return;
    if (pcb->state == TIME_WAIT) {
        stk__tcp_detach(s);
        s->st = STK_TCP_CLOSED;
        s->shut_rd = s->shut_wr = true;
    }
}

void
stk__tcp_apply_opts(struct stk_sock *s)
{
    struct tcp_pcb *pcb = s->pcb.tcp;
    bool reuse = s->reuseaddr || s->reuseport;

    if (s->lgrp != NULL) {
        /* A listener: the group's pcb lets lwIP share the port while any
         * member allows it (lwIP's own tcp_bind check). */
        const struct stk_sock *m;

        for (m = s->lgrp->head; m != NULL; m = m->lg_next)
            reuse |= m->reuseaddr || m->reuseport;
        pcb = s->lgrp->lpcb;
    }
    if (pcb == NULL)
        return;
    if (reuse)
        ip_set_option(pcb, SOF_REUSEADDR);
    else
        ip_reset_option(pcb, SOF_REUSEADDR);
    /* For the next SYN or SYN-ACK (a listener's accepted pcbs inherit it);
     * an established connection keeps its MSS, as Linux. */
    pcb->user_mss = s->user_mss;
    if (pcb->state == LISTEN)
        return;
    if (s->keepalive)
        ip_set_option(pcb, SOF_KEEPALIVE);
    else
        ip_reset_option(pcb, SOF_KEEPALIVE);
    pcb->keep_idle = (u32_t)s->keepidle * 1000u;
    pcb->keep_intvl = (u32_t)s->keepintvl * 1000u;
    pcb->keep_cnt = (u32_t)s->keepcnt;
    stk__tick_touch(pcb); /* a keepalive to park, or one no longer wanted */
    if (s->nodelay)
        tcp_nagle_disable(pcb);
    else
        tcp_nagle_enable(pcb);
    pcb->acc.corked = s->cork;
    if (!s->cork)
        pcb->acc.hold_ns = 0;
    if (s->cc >= 0)
        stk__tcp_set_cc(pcb, s->cc);
    stk__tcp_ip6_opts(s, IP_IS_V6_VAL(pcb->remote_ip));
}

/* IPV6_UNICAST_HOPS and IPV6_TCLASS on an IPv6 connection (an IPv4 one
 * of an AF_INET6 socket keeps IPv4's defaults). */
void
stk__tcp_ip6_opts(struct stk_sock *s, bool v6)
{
    struct tcp_pcb *pcb = s->pcb.tcp;

    if (pcb == NULL || pcb->state == LISTEN || !s->inet6 || !v6)
        return;
    pcb->ttl = stk__hops6(s);
    pcb->tos = s->tclass;
}

/* A fresh CLOSED pcb, bound again to the application's explicit port. */
/* The lwIP address type of s's pcbs while unbound: IPv4 for AF_INET,
 * both families for a dual AF_INET6 socket, IPv6 when v6only. */
u8_t
stk__sock_iptype(const struct stk_sock *s)
{
    if (!s->inet6)
        return IPADDR_TYPE_V4;
    return s->v6only ? IPADDR_TYPE_V6 : IPADDR_TYPE_ANY;
}

/* The wildcard address of s's family (what an unbound socket names). */
void
stk__sock_any(const struct stk_sock *s, ip_addr_t *ip)
{
    ip_addr_set_zero(ip);
    IP_SET_TYPE_VAL(*ip, stk__sock_iptype(s));
}

/* A fresh CLOSED pcb, bound again to the application's explicit port. */
int
stk__tcp_fresh_pcb(struct stk_sock *s)
{
    struct tcp_pcb *pcb = tcp_new_ip_type(stk__sock_iptype(s));
    err_t e;

    if (pcb == NULL)
        return -ENOMEM;
    stk__tcp_attach(s, pcb);
    stk__tcp_apply_opts(s);
    s->bound = false;
    s->syn_lost = false;
    if (s->port_explicit) {
        e = tcp_bind(pcb, &s->bind_ip, s->bind_port);
        if (e != ERR_OK)
            return stk_err_to_errno(e);
        s->bound = true;
    } else {
        stk__sock_any(s, &s->bind_ip);
        s->bind_port = 0;
    }
    return 0;
}

int
stk__tcp_create(struct stk_sock *s)
{
    s->nodelay = base_cfg.tcp_nodelay; /* ACCEL_TCP_NODELAY; accepted
                                        * sockets copy their listener's */
    return stk__tcp_fresh_pcb(s);
}

int
stk__tcp_bind(struct stk_sock *s, const ip_addr_t *ip, uint16_t port)
{
    err_t e;

    if (s->pcb.tcp == NULL || s->st != STK_TCP_CLOSED)
        return -EINVAL;
    if (port != 0 && stk__port_conflict(s, ip, port))
        return -EADDRINUSE;
    stk__tcp_apply_opts(s);
    e = tcp_bind(s->pcb.tcp, ip, port);
    if (e != ERR_OK)
        return stk_err_to_errno(e);
    s->bound = true;
    s->port_explicit = port != 0;
    s->addr_explicit = !ip_addr_isany(ip);
    ip_addr_copy(s->bind_ip, *ip);
    s->bind_port = s->pcb.tcp->local_port;
    return 0;
}

/* At establishment (nothing but the SYN or SYN-ACK sent yet), cap the
 * receive window to SO_RCVBUF's. lwIP recorded the full TCP_WND as
 * announced, but a SYN carries at most 65535 unscaled: restore that as the
 * announced edge, and never go below it (the peer may already use it). */
void
stk__tcp_window_clamp(struct stk_sock *s)
{
    struct tcp_pcb *pcb = s->pcb.tcp;
    uint32_t ann, want;

    if (pcb == NULL || s->rcv_limit >= TCP_WND)
        return;
    ann = pcb->rcv_ann_wnd > 0xffff ? 0xffff : pcb->rcv_ann_wnd;
    want =
        s->rcv_limit > s->rx_bytes ? (uint32_t)(s->rcv_limit - s->rx_bytes) : 0;
    if (want < ann)
        want = ann;
    pcb->rcv_ann_right_edge = pcb->rcv_nxt + ann;
    pcb->rcv_ann_wnd = ann;
    if (pcb->rcv_wnd > want)
        pcb->rcv_wnd = want;
    tcp_update_rcv_ann_wnd(pcb);
}

/* ---- connect
 * ------------------------------------------------------------------ */

static err_t
cb_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct stk_sock *s = arg;

    (void)err;
    if (s == NULL)
        return ERR_OK;
    s->st = STK_TCP_CONNECTED;
    s->ever_connected = true;
    ip_addr_copy(s->bind_ip, pcb->local_ip);
    s->bind_port = pcb->local_port;
    stk__tcp_window_clamp(s);
    stk__changed(s, true);
    return ERR_OK;
}

/* tcp_disconnect (connect AF_UNSPEC, shutdown(SHUT_RD) of a SYN_SENT
 * socket): aborting an attempt or a synchronized connection leaves
 * ECONNRESET pending, as Linux; a listener or a closed one leaves none. */
static int
disconnect(struct stk_sock *s)
{
    int err = 0;

    if (s->st == STK_TCP_SYN_SENT)
        err = ECONNRESET;
    else if (s->st == STK_TCP_CONNECTED && s->pcb.tcp != NULL) {
        enum tcp_state ps = s->pcb.tcp->state;

        if (ps == ESTABLISHED || ps == CLOSE_WAIT || ps == FIN_WAIT_1 ||
            ps == FIN_WAIT_2 || ps == SYN_RCVD)
            err = ECONNRESET;
    }
    if (s->st == STK_TCP_LISTEN)
        stk__tcp_unlisten(s);
    stk__tcp_abort(s);
    stk__ring_free(&s->rxq);
    s->rx_bytes = 0;
    s->rx_off = 0;
    s->st = STK_TCP_CLOSED;
    s->connecting = s->connect_reported = s->ever_connected = false;
    s->shut_rd = s->shut_wr = s->fin_rcvd = false;
    s->err = err;
    return stk__tcp_fresh_pcb(s);
}

int
stk__tcp_connect(struct stk_sock *s, const struct sockaddr *addr, socklen_t len)
{
    ip_addr_t ip;
    uint16_t port;
    uint32_t scope;
    err_t e;
    int rc;

    if (addr != NULL && len >= (socklen_t)sizeof(sa_family_t) &&
        addr->sa_family == AF_UNSPEC) {
        rc = disconnect(s);
        stk__changed(s, true);
        return rc;
    }
    rc = stk__addr_in(s, addr, len, STK_ADDR_CONNECT_TCP, &ip, &port, &scope);
    if (rc < 0)
        return rc;
    switch (s->st) {
    case STK_TCP_LISTEN:
        return -EISCONN;
    case STK_TCP_SYN_SENT:
        return -EALREADY;
    case STK_TCP_CONNECTED:
        if (s->connecting && !s->connect_reported) {
            s->connecting = false;
            s->connect_reported = true;
            return 0;
        }
        return -EISCONN;
    case STK_TCP_CLOSED:
        break;
    }
    if (s->connecting) {
        /* The attempt failed: report it once (SS_CONNECTING -> error).
         * Linux then disconnects: the port stays named, the address only
         * if bind() gave it. */
        int e2 = s->err ? s->err : ECONNABORTED;

        if (!s->addr_explicit)
            stk__sock_any(s, &s->bind_ip);
        s->err = 0;
        s->connecting = false;
        stk__changed(s, false);
        return -e2;
    }
    if (s->ever_connected)
        return -EISCONN;
    if (!stk__route_ok(&ip) && !stk__is_local(&ip))
        return -ENETUNREACH;
    if (s->pcb.tcp == NULL && (rc = stk__tcp_fresh_pcb(s)) < 0)
        return rc;
    /* A socket bound to one family cannot reach the other (Linux: an
     * AF_INET6 socket bound to ::ffff:a.b.c.d or to a native address). */
    if (!IP_IS_ANY_TYPE_VAL(s->pcb.tcp->local_ip) &&
        IP_GET_TYPE(&s->pcb.tcp->local_ip) != IP_GET_TYPE(&ip))
        return -ENETUNREACH;
    stk__tcp_apply_opts(s);
    stk__tcp_ip6_opts(s, IP_IS_V6(&ip));
    if (s->pcb.tcp->local_port == 0) {
        rc = stk__flow_bind_ephemeral(s->pcb.tcp, &ip, port);
        if (rc < 0)
            return rc;
    }
    s->err = 0; /* tcp_connect_init: a disconnect's ECONNRESET goes */
    e = tcp_connect(s->pcb.tcp, &ip, port, cb_connected);
    if (e != ERR_OK)
        return e == ERR_RTE ? -ENETUNREACH : stk_err_to_errno(e);
    BASE_STAT_INC(tcp_connect);
    s->st = STK_TCP_SYN_SENT;
    s->connecting = true;
    s->connect_reported = false;
    s->bound = true;
    ip_addr_copy(s->peer_ip, ip);
    s->peer_port = port;
    if (scope != 0)
        s->scope = scope;
    s->shut_rd = s->shut_wr = false;
    stk__changed(s, false);
    return -EINPROGRESS;
}

/* ---- lwIP callbacks
 * ------------------------------------------------------------ */

static err_t
cb_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct stk_sock *s = arg;

    (void)err;
    if (s == NULL) {
        if (p != NULL) {
            tcp_recved(pcb, p->tot_len);
            pbuf_free(p);
        }
        return ERR_OK;
    }
    if (p == NULL) {
        s->fin_rcvd = true;
        s->shut_rd = true;
        sync_state(s);
        stk__changed(s, true);
        return ERR_OK;
    }
    if (s->shut_rd && (pcb->state == FIN_WAIT_1 || pcb->state == FIN_WAIT_2)) {
        /* New data for a socket shut for reading after our FIN: Linux
         * resets the connection (tcp_rcv_state_process), and so do we,
         * with Linux's reply to that segment (a bare RST at its ACK), not
         * an active reset. */
        pbuf_free(p);
        BASE_STAT_INC(tcp_rst_sent);
        tcp_input_rst_reply(pcb);
        tcp_abandon(stk__tcp_detach(s), 0);
        s->err = ECONNRESET;
        s->st = STK_TCP_CLOSED;
        s->shut_wr = true;
        stk__changed(s, true);
        return ERR_ABRT;
    }
    if (stk__ring_push_seg(&s->rxq, p) < 0)
        return ERR_MEM; /* lwIP keeps it as refused data and retries */
    s->rx_bytes += p->tot_len;
    stk__changed(s, true);
    return ERR_OK;
}

static err_t
cb_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct stk_sock *s = arg;

    (void)pcb;
    (void)len;
    if (s != NULL) {
        /* An ACK that ends the connection (CLOSING -> TIME_WAIT) after the
         * peer's FIN was delivered. Without that FIN, the same segment
         * still carries it, and maybe data: lwIP reports the ACK first,
         * then the data and the FIN (cb_recv), which must find the socket
         * still on the pcb. */
        if (s->fin_rcvd)
            sync_state(s);
        stk__changed(s, true);
    }
    return ERR_OK;
}

/* The pcb is gone (lwIP frees it right before or after this call). */
static void
cb_err(void *arg, err_t err)
{
    struct stk_sock *s = arg;

    if (s == NULL)
        return;
    if (s->pcb.tcp != NULL && err == ERR_RST && s->st == STK_TCP_SYN_SENT) {
        /* Refused (the pcb lives until after this call): tcp_done keeps
         * the socket's name, and SIOCOUTQ counts the SYN. */
        ip_addr_copy(s->bind_ip, s->pcb.tcp->local_ip);
        s->bind_port = s->pcb.tcp->local_port;
        s->syn_lost = true;
    }
    if (s->pcb.tcp != NULL) {
        keep_counts(s, s->pcb.tcp);
        tcp_ext_arg_set(s->pcb.tcp, ext_id, NULL);
        s->pcb.tcp = NULL;
    }
    switch (err) {
    case ERR_RST:
        /* Linux's tcp_reset: refused in SYN-SENT, EPIPE in CLOSE-WAIT
         * (the peer's FIN came, ours did not go), reset otherwise. */
        s->err = s->st == STK_TCP_SYN_SENT    ? ECONNREFUSED
                 : s->fin_rcvd && !s->shut_wr ? EPIPE
                                              : ECONNRESET;
        break;
    case ERR_ABRT:
        s->err = ETIMEDOUT; /* retransmission/keepalive/SYN timeouts */
        break;
    case ERR_CLSD:
        break; /* orderly end after our shutdown(SHUT_WR) */
    default:
        s->err = -stk_err_to_errno(err);
        break;
    }
    s->st = STK_TCP_CLOSED;
    s->shut_rd = s->shut_wr = true;
    stk__changed(s, true);
}

/* ---- shutdown and close
 * --------------------------------------------------------- */

int
stk__tcp_shutdown(struct stk_sock *s, int how)
{
    bool rd = how == SHUT_RD || how == SHUT_RDWR;
    bool wr = how == SHUT_WR || how == SHUT_RDWR;
    int rc;

    sync_state(s);
    switch (s->st) {
    case STK_TCP_LISTEN:
        if (!rd)
            return 0;
        rc = disconnect(s);
        stk__changed(s, true);
        return rc;
    case STK_TCP_SYN_SENT:
        rc = disconnect(s);
        stk__changed(s, true);
        return rc;
    case STK_TCP_CLOSED:
        s->shut_rd |= rd;
        s->shut_wr |= wr;
        stk__changed(s, false);
        return -ENOTCONN;
    case STK_TCP_CONNECTED:
        break;
    }
    if (wr && !s->shut_wr && s->pcb.tcp != NULL) {
        tcp_shutdown(s->pcb.tcp, 0, 1);
        if (s->pcb.tcp != NULL)
            tcp_output(s->pcb.tcp); /* touches it (stk_tcp_output_begin) */
    }
    s->shut_rd |= rd;
    s->shut_wr |= wr;
    sync_state(s);
    stk__changed(s, true);
    return 0;
}

void
stk__tcp_close(struct stk_sock *s)
{
    struct tcp_pcb *pcb;

    if (s->st == STK_TCP_LISTEN) {
        stk__tcp_unlisten(s);
        return;
    }
    sync_state(s);
    if (s->pcb.tcp == NULL)
        return;
    if ((s->linger_on && s->linger_sec == 0) || s->rx_bytes > 0 ||
        s->pcb.tcp->state == SYN_SENT) {
        /* SO_LINGER 0 or unread data: RST, as Linux (RFC 2525 2.17). */
        stk__tcp_abort(s);
        return;
    }
    pcb = stk__tcp_detach(s);
    if (pcb->state == ESTABLISHED || pcb->state == CLOSE_WAIT ||
        pcb->state == SYN_RCVD) {
        /* Everything received was read: give lwIP the window back, or
         * tcp_close takes the shortfall for unread data and sends RST. */
        pcb->rcv_wnd = TCP_WND_MAX(pcb);
    }
    /* A FIN that does not fit now (TF_CLOSEPEND) waits for tcp_fasttmr.
     * Touched first: tcp_close may free the pcb (it leaves the list). */
    stk__tick_touch(pcb);
    if (tcp_close(pcb) != ERR_OK) {
        BASE_STAT_INC(tcp_rst_sent);
        tcp_abort(pcb);
    }
}

/* ---- readiness
 * --------------------------------------------------------------------- */

uint32_t
stk__tcp_events(struct stk_sock *s)
{
    uint32_t ev = 0;

    if (s->st == STK_TCP_LISTEN)
        return s->accq_len > 0 ? (EPOLLIN | EPOLLRDNORM) : 0;
    /* Linux tcp_poll(). */
    if ((s->shut_rd && s->shut_wr) || s->st == STK_TCP_CLOSED)
        ev |= EPOLLHUP;
    if (s->shut_rd)
        ev |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;
    if (s->st != STK_TCP_SYN_SENT) {
        if (s->rx_bytes > 0)
            ev |= EPOLLIN | EPOLLRDNORM;
        if (s->shut_wr || s->st == STK_TCP_CLOSED || s->pcb.tcp == NULL) {
            ev |= EPOLLOUT | EPOLLWRNORM;
        } else {
            uint32_t avail = stk__tcp_snd_avail(s);
            uint32_t queued = (uint32_t)stk__tcp_outq(s);

            if (avail > 0 && avail >= queued / 2 &&
                s->pcb.tcp->snd_queuelen < TCP_SNDQUEUELOWAT)
                ev |= EPOLLOUT | EPOLLWRNORM;
        }
    }
    if (s->err != 0)
        ev |= EPOLLERR;
    return ev;
}

int
stk__tcp_notsent(struct stk_sock *s)
{
    struct tcp_pcb *pcb = s->pcb.tcp;

    if (pcb == NULL || pcb->state == LISTEN)
        return 0;
    return (int)(pcb->snd_lbb - pcb->snd_nxt);
}

int
stk__tcp_outq(struct stk_sock *s)
{
    struct tcp_pcb *pcb = s->pcb.tcp;

    if (pcb == NULL)
        return s->syn_lost ? 1 : 0;
    if (pcb->state == LISTEN)
        return 0;
    return (int)(TCP_SND_BUF - pcb->snd_buf);
}
