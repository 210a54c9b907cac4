/*
 * UDP sockets over lwIP's raw API: bind, connect (default peer; AF_UNSPEC
 * dissolves it), sendmsg to msg_name or the default peer, and a receive
 * queue of datagrams with their source, bounded by SO_RCVBUF (drops are
 * counted in udp_rx_drop_full). A connected socket only receives from its
 * peer (lwIP's pcb matching does that filtering, as Linux does), and gets
 * the ICMP errors its datagrams caused (icmp_err.c) as a pending error
 * that the next recv or send returns. A datagram to a multicast group
 * goes to every socket on the port that takes it (deliver_mcast), as on
 * Linux; memberships and filters are in sock_mcast.c.
 * Ephemeral ports come from lwIP (random start in 32768-60999).
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/epoll.h>

#include "lwip/udp.h"

#include "stats.h"
#include "stk_priv.h"

/* Queue datagram p (this reference is taken) on s. */
static void
enqueue(struct stk_sock *s, struct pbuf *p, uint32_t addr, u16_t port)
{
    size_t cost = (size_t)p->tot_len + STK_UDP_OVERHEAD;

    /* Linux admits a datagram while the queue is below the limit. */
    if (s->rx_bytes >= (size_t)(s->rcvbuf ? s->rcvbuf : STK_UDP_BUF_DEFAULT) ||
        stk__ring_push(&s->rxq, p, addr, port) < 0) {
        BASE_STAT_INC(udp_rx_drop_full);
        pbuf_free(p);
        return;
    }
    s->rx_bytes += cost;
    stk__changed(s, true);
}

static void cb_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p,
                    const ip_addr_t *addr, u16_t port);

/* The interface's source filter (Linux ip_check_mc_rcu): a source is
 * taken when some socket's membership of the group takes it. Frames to
 * groups the interface did not join never get here (lwIP's IGMP). */
static bool
iface_takes(uint32_t group, uint32_t src)
{
    if (group == PP_HTONL(0xe0000001UL))
        return true; /* all-hosts: the interface is always a member */
    for (struct udp_pcb *u = udp_pcbs; u != NULL; u = u->next)
        if (u->recv == cb_recv && u->recv_arg != NULL &&
            stk__mc_filter(u->recv_arg, group, src) == 1)
            return true;
    return false;
}

/* A datagram to a multicast group: lwIP hands it to one pcb, Linux
 * (__udp4_lib_mcast_deliver) to every socket bound to the port on ANY or
 * on the group, connected sockets only from their peer, each through its
 * source filter (ip_mc_sf_allow), or the interface's for a socket that
 * did not join the group (IP_MULTICAST_ALL). The copies share the pbuf:
 * queued datagrams are only read. */
static void
deliver_mcast(struct udp_pcb *pcb, struct pbuf *p, uint32_t src, u16_t sport)
{
    uint32_t dst = ip4_addr_get_u32(ip4_current_dest_addr());
    int iface = -1; /* the interface's filter, once asked */

    for (struct udp_pcb *u = udp_pcbs; u != NULL; u = u->next) {
        struct stk_sock *o = u->recv_arg;
        uint32_t lip = ip4_addr_get_u32(&u->local_ip);
        int take;

        if (u->recv != cb_recv || o == NULL ||
            u->local_port != pcb->local_port || (lip != 0 && lip != dst))
            continue;
        if ((u->flags & UDP_FLAGS_CONNECTED) &&
            (ip4_addr_get_u32(&u->remote_ip) != src || u->remote_port != sport))
            continue;
        take = stk__mc_filter(o, dst, src);
        if (take < 0 && stk__mc_all(o)) {
            if (iface < 0)
                iface = iface_takes(dst, src);
            take = iface;
        }
        if (take <= 0)
            continue;
        pbuf_ref(p);
        enqueue(o, p, src, sport);
    }
    pbuf_free(p);
}

static void
cb_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr,
        u16_t port)
{
    struct stk_sock *s = arg;

    if (s == NULL) {
        pbuf_free(p);
        return;
    }
    if (ip4_addr_ismulticast(ip4_current_dest_addr())) {
        deliver_mcast(pcb, p, ip4_addr_get_u32(addr), port);
        return;
    }
    enqueue(s, p, ip4_addr_get_u32(addr), port);
}

int
stk__udp_create(struct stk_sock *s)
{
    struct udp_pcb *pcb = udp_new_ip_type(IPADDR_TYPE_V4);

    if (pcb == NULL)
        return -ENOMEM;
    s->pcb.udp = pcb;
    udp_recv(pcb, cb_recv, s);
    stk__mc_apply_pcb(s);
    return 0;
}

static int
do_bind(struct stk_sock *s, uint32_t ip, uint16_t port)
{
    ip4_addr_t a;
    err_t e;

    if (port != 0 && stk__port_conflict(s, ip, port))
        return -EADDRINUSE;
    if (s->reuseaddr || s->reuseport)
        ip_set_option(s->pcb.udp, SOF_REUSEADDR);
    ip4_addr_set_u32(&a, ip);
    e = udp_bind(s->pcb.udp, &a, port);
    if (e != ERR_OK)
        return stk_err_to_errno(e);
    s->bound = true;
    s->bind_ip = ip;
    s->bind_port = s->pcb.udp->local_port;
    return 0;
}

int
stk__udp_bind(struct stk_sock *s, uint32_t ip, uint16_t port)
{
    int rc = do_bind(s, ip, port);

    if (rc == 0)
        s->port_explicit = port != 0;
    return rc;
}

static int
autobind(struct stk_sock *s)
{
    return s->bound ? 0 : do_bind(s, 0, 0);
}

int
stk__udp_connect(struct stk_sock *s, const struct sockaddr *addr, socklen_t len)
{
    uint32_t ip;
    uint16_t port;
    ip4_addr_t a;
    err_t e;
    int rc;

    if (addr != NULL && len >= (socklen_t)sizeof(sa_family_t) &&
        addr->sa_family == AF_UNSPEC) {
        /* Dissolve the association; an automatic bind is released too. */
        udp_disconnect(s->pcb.udp);
        s->udp_connected = false;
        s->peer_ip = 0;
        s->peer_port = 0;
        if (s->bound && !s->port_explicit) {
            ip4_addr_set_any(&s->pcb.udp->local_ip);
            udp_remove(s->pcb.udp);
            s->pcb.udp = NULL;
            s->bound = false;
            s->bind_ip = 0;
            s->bind_port = 0;
            rc = stk__udp_create(s);
            if (rc < 0)
                return rc;
            if (s->broadcast)
                ip_set_option(s->pcb.udp, SOF_BROADCAST);
        }
        stk__changed(s, false);
        return 0;
    }
    rc = stk__addr_in(addr, len, &ip, &port);
    if (rc < 0)
        return rc;
    ip4_addr_set_u32(&a, ip);
    if (!stk_route_ok(ip) && !stk__is_local_ip(ip) && !ip4_addr_ismulticast(&a))
        return -ENETUNREACH;
    if (ip == 0xffffffffu && !s->broadcast)
        return -EACCES;
    if ((rc = autobind(s)) < 0)
        return rc;
    ip4_addr_set_u32(&a, ip);
    e = udp_connect(s->pcb.udp, &a, port);
    if (e != ERR_OK)
        return stk_err_to_errno(e);
    s->udp_connected = true;
    s->peer_ip = ip;
    s->peer_port = port;
    stk__changed(s, false);
    return 0;
}

ssize_t
stk__udp_recvmsg(struct stk_sock *s, struct msghdr *msg, int flags)
{
    struct stk_rx_item *it = stk__ring_head(&s->rxq);
    size_t cap, len, n;

    msg->msg_flags = 0;
    if (flags & MSG_OOB)
        return -EOPNOTSUPP;
    /* __skb_recv_udp: a pending error (ICMP) comes before queued data. */
    if (s->err != 0) {
        int e = s->err;

        s->err = 0;
        stk__changed(s, false);
        return -e;
    }
    if (it == NULL)
        return s->shut_rd ? 0 : -EAGAIN;
    len = it->p->tot_len;
    cap = stk__iov_len(msg);
    n = len < cap ? len : cap;
    stk__iov_copy_from_pbuf(msg, 0, it->p, 0, n);
    if (n < len)
        msg->msg_flags |= MSG_TRUNC;
    if (msg->msg_name != NULL) {
        socklen_t nl = msg->msg_namelen;

        stk__addr_out(it->addr, it->port, msg->msg_name, &nl);
        msg->msg_namelen = nl;
    } else {
        msg->msg_namelen = 0;
    }
    if (!(flags & MSG_PEEK)) {
        s->rx_bytes -= len + STK_UDP_OVERHEAD;
        stk__ring_pop(&s->rxq);
        stk__changed(s, false);
    }
    return (ssize_t)((flags & MSG_TRUNC) ? len : n);
}

ssize_t
stk__udp_sendmsg(struct stk_sock *s, const struct msghdr *msg, int flags)
{
    uint32_t ip;
    uint16_t port;
    size_t len, off = 0, i;
    struct pbuf *p;
    ip4_addr_t a;
    err_t e;
    int rc;

    /* Linux binds an ephemeral port before anything else (inet_autobind
     * in inet_send_prepare), even when the send then fails. */
    if ((rc = autobind(s)) < 0)
        return rc;
    len = stk__iov_len(msg);
    if (len > 0xffff)
        return -EMSGSIZE;
    if (flags & MSG_OOB)
        return -EOPNOTSUPP;
    if (msg->msg_name != NULL && msg->msg_namelen != 0) {
        const struct sockaddr_in *sin = msg->msg_name;

        /* udp_sendmsg: AF_UNSPEC is taken as AF_INET. */
        if (msg->msg_namelen < sizeof(*sin))
            return -EINVAL;
        if (sin->sin_family != AF_INET && sin->sin_family != AF_UNSPEC)
            return -EAFNOSUPPORT;
        ip = sin->sin_addr.s_addr;
        port = ntohs(sin->sin_port);
        if (port == 0)
            return -EINVAL;
    } else if (s->udp_connected) {
        ip = s->peer_ip;
        port = s->peer_port;
    } else {
        return -EDESTADDRREQ;
    }
    ip4_addr_set_u32(&a, ip);
    if (!stk_route_ok(ip) && !stk__is_local_ip(ip) && !ip4_addr_ismulticast(&a))
        return -ENETUNREACH;
    if (ip == 0xffffffffu && !s->broadcast)
        return -EACCES;
    if (len > STK_UDP_MAX_PAYLOAD)
        return -EMSGSIZE;
    /* sock_alloc_send_skb: a pending error (ICMP), then shutdown. */
    if (s->err != 0) {
        int err = s->err;

        s->err = 0;
        stk__changed(s, false);
        return -err;
    }
    if (s->shut_wr)
        return -EPIPE;
    p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)len, PBUF_RAM);
    if (p == NULL)
        return -ENOBUFS;
    for (i = 0; i < (size_t)msg->msg_iovlen; i++) {
        size_t l = msg->msg_iov[i].iov_len;

        if (l == 0)
            continue;
        pbuf_take_at(p, msg->msg_iov[i].iov_base, (u16_t)l, (u16_t)off);
        off += l;
    }
    e = udp_sendto(s->pcb.udp, p, &a, port);
    pbuf_free(p);
    if (e != ERR_OK)
        return e == ERR_RTE ? -ENETUNREACH : stk_err_to_errno(e);
    return (ssize_t)len;
}

int
stk__udp_shutdown(struct stk_sock *s, int how)
{
    /* Linux sets the flags even on an unconnected socket, and then
     * reports ENOTCONN. */
    s->shut_rd |= how == SHUT_RD || how == SHUT_RDWR;
    s->shut_wr |= how == SHUT_WR || how == SHUT_RDWR;
    stk__changed(s, true);
    return s->udp_connected ? 0 : -ENOTCONN;
}

void
stk__udp_close(struct stk_sock *s)
{
    stk__mc_close(s); /* Linux ip_mc_drop_socket: leave every group */
    if (s->pcb.udp != NULL) {
        udp_recv(s->pcb.udp, NULL, NULL);
        udp_remove(s->pcb.udp);
        s->pcb.udp = NULL;
    }
}

uint32_t
stk__udp_events(struct stk_sock *s)
{
    uint32_t ev = EPOLLOUT | EPOLLWRNORM; /* Linux datagram_poll() */

    if (s->shut_rd && s->shut_wr)
        ev |= EPOLLHUP;
    if (s->shut_rd)
        ev |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;
    if (s->rxq.count > 0)
        ev |= EPOLLIN | EPOLLRDNORM;
    if (s->err != 0)
        ev |= EPOLLERR;
    return ev;
}
