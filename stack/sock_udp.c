/*
 * UDP sockets over lwIP's raw API: bind, connect (default peer; AF_UNSPEC
 * dissolves it), sendmsg to msg_name or the default peer, and a receive
 * queue of datagrams with their source and what their control messages
 * tell (sock_cmsg.c: IP_PKTINFO, IPV6_PKTINFO, ...), bounded by SO_RCVBUF
 * (drops are counted in udp_rx_drop_full). A connected socket only
 * receives from its peer (lwIP's pcb matching does that filtering, as
 * Linux does), and gets the ICMP errors its datagrams caused (icmp_err.c)
 * as a pending error that the next recv or send returns. A datagram to a
 * multicast group goes to every socket on the port that takes it
 * (deliver_mcast), as on Linux; memberships and filters are in
 * sock_mcast.c.
 * Ephemeral ports come from lwIP (random start in 32768-60999).
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/epoll.h>

#include "lwip/netif.h"
#include "lwip/udp.h"

#include "stats.h"
#include "stk_priv.h"

/* Queue datagram p (this reference is taken) on s, with what its control
 * messages need: lwIP's receive callback runs (ip_current_*). */
static void
enqueue(struct stk_sock *s, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    size_t cost = (size_t)p->tot_len + STK_UDP_OVERHEAD;

    /* Linux admits a datagram while the queue is below the limit. */
    if (s->rx_bytes >= (size_t)(s->rcvbuf ? s->rcvbuf : STK_UDP_BUF_DEFAULT) ||
        stk__ring_push(&s->rxq, p, addr, port) < 0) {
        BASE_STAT_INC(udp_rx_drop_full);
        pbuf_free(p);
        return;
    }
    stk__cmsg_note(s, stk__ring_at(&s->rxq, s->rxq.count - 1));
    s->rx_bytes += cost;
    stk__changed(s, true);
}

static void cb_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p,
                    const ip_addr_t *addr, u16_t port);

/* The interface's source filter (Linux ip_check_mc_rcu): a source is
 * taken when some socket's membership of the group takes it. Frames to
 * groups the interface did not join never get here (lwIP's IGMP/MLD). */
static bool
iface_takes(const ip_addr_t *group, const ip_addr_t *src)
{
    if (IP_IS_V4(group) &&
        ip4_addr_get_u32(ip_2_ip4(group)) == PP_HTONL(0xe0000001UL))
        return true; /* all-hosts: the interface is always a member */
    if (IP_IS_V6(group) && ip6_addr_isallnodes_linklocal(ip_2_ip6(group)))
        return true;
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
deliver_mcast(struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *src,
              u16_t sport)
{
    ip_addr_t dst;
    int iface = -1; /* the interface's filter, once asked */

    ip_addr_copy(dst, *ip_current_dest_addr());
    for (struct udp_pcb *u = udp_pcbs; u != NULL; u = u->next) {
        struct stk_sock *o = u->recv_arg;
        int take;

        if (u->recv != cb_recv || o == NULL ||
            u->local_port != pcb->local_port ||
            !IP_ADDR_PCB_VERSION_MATCH(u, &dst) ||
            (!ip_addr_isany(&u->local_ip) && !ip_addr_cmp(&u->local_ip, &dst)))
            continue;
        if ((u->flags & UDP_FLAGS_CONNECTED) &&
            (!ip_addr_cmp(&u->remote_ip, src) || u->remote_port != sport))
            continue;
        take = stk__mc_filter(o, &dst, src);
        if (take < 0 && stk__mc_all(o)) {
            if (iface < 0)
                iface = iface_takes(&dst, src);
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
    if (ip_addr_ismulticast(ip_current_dest_addr())) {
        deliver_mcast(pcb, p, addr, port);
        return;
    }
    enqueue(s, p, addr, port);
}

struct stk_sock *
stk__udp_sock_of(struct udp_pcb *u)
{
    return u->recv == cb_recv ? u->recv_arg : NULL;
}

/* The head datagram is this process's to read: copies queued before a
 * fork that another process read first are dropped here (see
 * stk_fork_tag_udp). take: reading it, not peeking. */
static struct stk_rx_item *
udp_head(struct stk_sock *s, bool take)
{
    struct stk_rx_item *it;

    while ((it = stk__ring_head(&s->rxq)) != NULL && it->fork_tag != 0) {
        int r = stk__udp_claim(it->fork_tag, take);

        if (r >= 0) {
            if (r > 0)
                it->fork_tag = 0; /* ours from now on */
            break;
        }
        s->rx_bytes -= it->p->tot_len + STK_UDP_OVERHEAD;
        stk__ring_pop(&s->rxq);
        BASE_STAT_INC(rx_udp_fork_copy_dropped);
    }
    return it;
}

int
stk__udp_create(struct stk_sock *s)
{
    struct udp_pcb *pcb = udp_new_ip_type(stk__sock_iptype(s));

    if (pcb == NULL)
        return -ENOMEM;
    s->pcb.udp = pcb;
    udp_recv(pcb, cb_recv, s);
    stk__mc_apply_pcb(s);
    return 0;
}

static int
do_bind(struct stk_sock *s, const ip_addr_t *ip, uint16_t port)
{
    err_t e;

    if (port != 0 && stk__port_conflict(s, ip, port))
        return -EADDRINUSE;
    if (s->reuseaddr || s->reuseport)
        ip_set_option(s->pcb.udp, SOF_REUSEADDR);
    e = udp_bind(s->pcb.udp, ip, port);
    if (e != ERR_OK)
        return stk_err_to_errno(e);
    s->bound = true;
    ip_addr_copy(s->bind_ip, *ip);
    s->bind_port = s->pcb.udp->local_port;
    stk__steer_port(s, true);
    return 0;
}

int
stk__udp_bind(struct stk_sock *s, const ip_addr_t *ip, uint16_t port)
{
    int rc = do_bind(s, ip, port);

    if (rc == 0)
        s->port_explicit = port != 0;
    return rc;
}

static int
autobind(struct stk_sock *s)
{
    ip_addr_t any;

    if (s->bound)
        return 0;
    /* an address kept by a disconnect (bound explicitly, port 0) */
    if (!ip_addr_isany(&s->pcb.udp->local_ip))
        return do_bind(s, &s->pcb.udp->local_ip, 0);
    stk__sock_any(s, &any);
    return do_bind(s, &any, 0);
}

/* Where a datagram to ip may go from s (connect and sendto): routed or
 * ours or multicast, of a family s's bound address can send from, and
 * broadcast only with SO_BROADCAST. */
static int
dest_ok(const struct stk_sock *s, const ip_addr_t *ip)
{
    const ip_addr_t *l = &s->pcb.udp->local_ip;

    if (!stk__route_ok(ip) && !stk__is_local(ip) && !ip_addr_ismulticast(ip))
        return -ENETUNREACH;
    if (!IP_IS_ANY_TYPE_VAL(*l) && IP_GET_TYPE(l) != IP_GET_TYPE(ip))
        return -ENETUNREACH;
    /* the limited broadcast and the subnet's (ip_route_output: RTCF_BROADCAST)
     */
    if (IP_IS_V4(ip) && !s->broadcast &&
        (ip4_addr_get_u32(ip_2_ip4(ip)) == 0xffffffffu ||
         (netif_default != NULL &&
          ip4_addr_isbroadcast(ip_2_ip4(ip), netif_default))))
        return -EACCES;
    return 0;
}

int
stk__udp_connect(struct stk_sock *s, const struct sockaddr *addr, socklen_t len)
{
    ip_addr_t ip;
    uint16_t port;
    uint32_t scope;
    err_t e;
    int rc;

    if (addr != NULL && len >= (socklen_t)sizeof(sa_family_t) &&
        addr->sa_family == AF_UNSPEC) {
        /* Dissolve the association; an automatic bind is released too. */
        udp_disconnect(s->pcb.udp);
        s->udp_connected = false;
        ip_addr_set_zero(&s->peer_ip);
        s->peer_port = 0;
        if (s->bound && !s->port_explicit) {
            /* __udp_disconnect: the port is released, an address given
             * to bind() stays (SOCK_BINDADDR_LOCK). */
            ip_addr_t keep = s->pcb.udp->local_ip;

            stk__steer_port(s, false);
            udp_remove(s->pcb.udp);
            s->pcb.udp = NULL;
            s->bound = false;
            stk__sock_any(s, &s->bind_ip);
            s->bind_port = 0;
            rc = stk__udp_create(s);
            if (rc < 0)
                return rc;
            if (s->broadcast)
                ip_set_option(s->pcb.udp, SOF_BROADCAST);
            if (!ip_addr_isany(&keep)) {
                ip_addr_copy(s->pcb.udp->local_ip, keep);
                ip_addr_copy(s->bind_ip, keep);
            }
        }
        stk__changed(s, false);
        return 0;
    }
    rc = stk__addr_in(s, addr, len, STK_ADDR_CONNECT_UDP, &ip, &port, &scope);
    if (rc < 0)
        return rc;
    if ((rc = dest_ok(s, &ip)) < 0)
        return rc;
    if ((rc = autobind(s)) < 0)
        return rc;
    e = udp_connect(s->pcb.udp, &ip, port);
    if (e != ERR_OK)
        return stk_err_to_errno(e);
    s->udp_connected = true;
    ip_addr_copy(s->peer_ip, ip);
    s->peer_port = port;
    if (scope != 0)
        s->scope = scope;
    stk__changed(s, false);
    return 0;
}

ssize_t
stk__udp_recvmsg(struct stk_sock *s, struct msghdr *msg, int flags)
{
    struct stk_rx_item *it = udp_head(s, !(flags & MSG_PEEK));
    size_t cap, len, n;

    msg->msg_flags = 0;
    /* udp_recvmsg ignores MSG_OOB. __skb_recv_udp: a pending error (ICMP) comes
     * before queued data. */
    if (s->err != 0) {
        int e = s->err;

        s->err = 0;
        stk__changed(s, false);
        return -e;
    }
    /* __skb_wait_for_more_packets: shutdown ends a wait with 0, a call
     * that may not wait gets EAGAIN first. */
    if (it == NULL)
        return s->shut_rd && !(flags & MSG_DONTWAIT) ? 0 : -EAGAIN;
    len = it->p->tot_len;
    cap = stk__iov_len(msg);
    n = len < cap ? len : cap;
    stk__iov_copy_from_pbuf(msg, 0, it->p, 0, n);
    if (n < len)
        msg->msg_flags |= MSG_TRUNC;
    if (msg->msg_name != NULL) {
        socklen_t nl = msg->msg_namelen;

        stk__addr_out(s, &it->addr, it->port, msg->msg_name, &nl);
        msg->msg_namelen = nl;
    } else {
        msg->msg_namelen = 0;
    }
    stk__cmsg_put(s, it, msg);
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
    ip_addr_t ip;
    uint16_t port;
    uint32_t scope;
    size_t len, off = 0, i;
    struct pbuf *p;
    err_t e;
    int rc, named = 1;

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
        /* udp_sendmsg / udpv6_sendmsg (AF_UNSPEC: AF_INET there, no name
         * here). */
        named = stk__addr_in(s, msg->msg_name, msg->msg_namelen,
                             STK_ADDR_SENDTO, &ip, &port, &scope);
        if (named < 0)
            return named;
        if (named == 0 && port == 0)
            return -EINVAL;
    }
    if (named == 1) {
        if (!s->udp_connected)
            return -EDESTADDRREQ;
        ip_addr_copy(ip, s->peer_ip);
        port = s->peer_port;
    }
    if ((rc = dest_ok(s, &ip)) < 0)
        return rc;
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
    stk__mc_for_dest(s, &ip);
    e = udp_sendto(s->pcb.udp, p, &ip, port);
    pbuf_free(p);
    if (s->steer_port == 0)
        stk__steer_port(s, true); /* udp_sendto bound it */
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
    if (udp_head(s, false) != NULL)
        ev |= EPOLLIN | EPOLLRDNORM;
    if (s->err != 0)
        ev |= EPOLLERR;
    return ev;
}
