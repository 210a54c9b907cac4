/*
 * Socket objects common to TCP and UDP: creation and release, the entry
 * points of stk.h that dispatch to sock_tcp*.c / sock_udp.c, address
 * conversion, readiness (events, generation counter, notify callback), the
 * receive ring shared by both protocols, iovec copy helpers, and Linux's
 * bind conflict rule (SO_REUSEADDR / SO_REUSEPORT) over lwIP's pcb lists.
 *
 * Every function runs under the stack lock; nothing here touches errno.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "lwip/priv/tcp_priv.h"

#include "stk_priv.h"
#include "stk_test.h"

static long sock_count;

long
stk_test_socks(void)
{
    return sock_count;
}

/* ---- object lifetime ----------------------------------------------------- */

struct stk_sock *
stk__sock_alloc(int type)
{
    struct stk_sock *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return NULL;
    s->type = type;
    s->rcv_limit = TCP_WND;
    s->snd_limit = TCP_SND_BUF;
    s->keepidle = TCP_KEEPIDLE_DEFAULT / 1000;
    s->keepintvl = TCP_KEEPINTVL_DEFAULT / 1000;
    s->keepcnt = TCP_KEEPCNT_DEFAULT;
    s->backlog = -1;
    s->cc = -1;
    s->hops6 = -1;
    sock_count++;
    return s;
}

void
stk__sock_free(struct stk_sock *s)
{
    stk__output_forget(s);
    stk__ring_free(&s->rxq);
    sock_count--;
    free(s);
}

int
stk_sock_create(int type, struct stk_sock **out)
{
    struct stk_sock *s;
    int rc;

    if (type != SOCK_STREAM && type != SOCK_DGRAM)
        return -EPROTONOSUPPORT;
    s = stk__sock_alloc(type);
    if (s == NULL)
        return -ENOMEM;
    rc = type == SOCK_STREAM ? stk__tcp_create(s) : stk__udp_create(s);
    if (rc < 0) {
        stk__sock_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int
stk_sock_set_inet6(struct stk_sock *s, bool v6only)
{
    if (s->bound || s->st != STK_TCP_CLOSED || s->udp_connected ||
        s->ever_connected)
        return -EINVAL;
    s->inet6 = true;
    return stk_sock_set_v6only(s, v6only);
}

int
stk_sock_set_v6only(struct stk_sock *s, bool v6only)
{
    if (!s->inet6)
        return -ENOPROTOOPT;
    if (s->bound)
        return -EINVAL; /* do_ipv6_setsockopt: inet_sk(sk)->inet_num */
    s->v6only = v6only;
    stk__sock_any(s, &s->bind_ip);
    /* The unbound pcb takes the family (or both) from now on. */
    if (s->type == SOCK_STREAM && s->pcb.tcp != NULL) {
        IP_SET_TYPE_VAL(s->pcb.tcp->local_ip, stk__sock_iptype(s));
        IP_SET_TYPE_VAL(s->pcb.tcp->remote_ip, stk__sock_iptype(s));
    } else if (s->type == SOCK_DGRAM && s->pcb.udp != NULL) {
        IP_SET_TYPE_VAL(s->pcb.udp->local_ip, stk__sock_iptype(s));
        IP_SET_TYPE_VAL(s->pcb.udp->remote_ip, stk__sock_iptype(s));
    }
    return 0;
}

uint8_t
stk__hops6(const struct stk_sock *s)
{
    return s->hops6 < 0 ? 64 : (uint8_t)s->hops6; /* net.ipv6...hop_limit */
}

int
stk_sock_family(const struct stk_sock *s)
{
    return s->inet6 ? AF_INET6 : AF_INET;
}

static stk_notify_fn notify_fn;

void
stk_set_notify(stk_notify_fn fn)
{
    notify_fn = fn;
}

void
stk_sock_set_ctx(struct stk_sock *s, void *ctx)
{
    s->notify_ctx = ctx;
}

void
stk_sock_close(struct stk_sock *s)
{
    if (s == NULL)
        return;
    s->notify_ctx = NULL;
    stk__steer_port(s, false);
    if (s->type == SOCK_STREAM)
        stk__tcp_close(s);
    else
        stk__udp_close(s);
    stk__sock_free(s);
}

/* ---- readiness ------------------------------------------------------------
 */

uint32_t
stk_sock_events(struct stk_sock *s, uint32_t *gen)
{
    if (gen != NULL)
        *gen = s->gen;
    return s->type == SOCK_STREAM ? stk__tcp_events(s) : stk__udp_events(s);
}

void
stk__changed(struct stk_sock *s, bool ev_new)
{
    if (ev_new)
        s->gen++;
    if (s->notify_ctx != NULL && notify_fn != NULL)
        notify_fn(s->notify_ctx, stk_sock_events(s, NULL));
}

/* ---- addresses ------------------------------------------------------------
 */

/* inet_bind / inet6_bind: the address must be ours, a wildcard, or (UDP)
 * multicast or broadcast; a mapped address is checked as IPv4. */
static bool
bind_addr_ok(const ip_addr_t *ip)
{
    if (ip_addr_isany(ip) || stk__is_local(ip))
        return true;
    if (IP_IS_V6(ip))
        return ip6_addr_ismulticast(ip_2_ip6(ip));
    return ip4_addr_get_u32(ip_2_ip4(ip)) == 0xffffffffu ||
           ip4_addr_ismulticast(ip_2_ip4(ip));
}

int
stk_sock_bind(struct stk_sock *s, const struct sockaddr *addr, socklen_t len)
{
    ip_addr_t ip;
    uint16_t port;
    uint32_t scope;
    int rc = stk__addr_in(s, addr, len, STK_ADDR_BIND, &ip, &port, &scope);

    if (rc < 0)
        return rc;
    if (s->bound)
        return -EINVAL;
    if (!bind_addr_ok(&ip))
        return -EADDRNOTAVAIL;
    rc = s->type == SOCK_STREAM ? stk__tcp_bind(s, &ip, port)
                                : stk__udp_bind(s, &ip, port);
    if (rc == 0 && IP_IS_V6(&ip) && !ip_addr_isany(&ip)) {
        s->v6only = true; /* inet6_bind: a native address is IPv6 only */
        if (scope != 0)
            s->scope = scope;
    }
    return rc;
}

int
stk_sock_getname(struct stk_sock *s, struct sockaddr *addr, socklen_t *len,
                 bool peer)
{
    ip_addr_t ip = s->bind_ip;
    uint16_t port = s->bind_port;

    if (peer) {
        bool ok = s->type == SOCK_STREAM
                      ? (s->st == STK_TCP_CONNECTED && s->pcb.tcp != NULL)
                      : s->udp_connected;
        if (!ok)
            return -ENOTCONN;
        stk__addr_out(s, &s->peer_ip, s->peer_port, addr, len);
        return 0;
    }
    if (s->type == SOCK_STREAM && s->pcb.tcp != NULL) {
        ip_addr_copy(ip, s->pcb.tcp->local_ip);
        port = s->pcb.tcp->local_port;
    } else if (s->type == SOCK_DGRAM && s->pcb.udp != NULL) {
        ip_addr_copy(ip, s->pcb.udp->local_ip);
        port = s->pcb.udp->local_port;
        if (s->udp_connected && ip_addr_isany(&ip)) {
            /* The source the route gives: the netif's address of the
             * peer's family. */
            const ip_addr_t *src = stk__local_for(&s->peer_ip);

            if (src != NULL)
                ip_addr_copy(ip, *src);
        }
    }
    stk__addr_out(s, &ip, port, addr, len);
    return 0;
}

/* ---- dispatch ---------------------------------------------------------------
 */

int
stk_sock_listen(struct stk_sock *s, int backlog)
{
    if (s->type != SOCK_STREAM)
        return -EOPNOTSUPP;
    return stk__tcp_listen(s, backlog);
}

int
stk_sock_accept(struct stk_sock *s, struct stk_sock **out,
                struct sockaddr *addr, socklen_t *len)
{
    if (s->type != SOCK_STREAM)
        return -EOPNOTSUPP;
    return stk__tcp_accept(s, out, addr, len);
}

int
stk_sock_connect(struct stk_sock *s, const struct sockaddr *addr, socklen_t len)
{
    return s->type == SOCK_STREAM ? stk__tcp_connect(s, addr, len)
                                  : stk__udp_connect(s, addr, len);
}

ssize_t
stk_sock_recvmsg(struct stk_sock *s, struct msghdr *msg, int flags)
{
    return s->type == SOCK_STREAM ? stk__tcp_recvmsg(s, msg, flags)
                                  : stk__udp_recvmsg(s, msg, flags);
}

ssize_t
stk_sock_sendmsg(struct stk_sock *s, const struct msghdr *msg, int flags)
{
    return s->type == SOCK_STREAM ? stk__tcp_sendmsg(s, msg, flags)
                                  : stk__udp_sendmsg(s, msg, flags);
}

int
stk_sock_shutdown(struct stk_sock *s, int how)
{
    if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
        return -EINVAL;
    return s->type == SOCK_STREAM ? stk__tcp_shutdown(s, how)
                                  : stk__udp_shutdown(s, how);
}

int
stk_sock_setsockopt(struct stk_sock *s, int level, int name, const void *val,
                    socklen_t len)
{
    return stk__setsockopt(s, level, name, val, len);
}

int
stk_sock_getsockopt(struct stk_sock *s, int level, int name, void *val,
                    socklen_t *len)
{
    return stk__getsockopt(s, level, name, val, len);
}

int
stk_sock_inq(struct stk_sock *s)
{
    struct stk_rx_item *it;

    if (s->type == SOCK_STREAM) {
        if (s->st == STK_TCP_LISTEN)
            return -EINVAL;
        return (int)(s->rx_bytes > INT32_MAX ? INT32_MAX : s->rx_bytes);
    }
    /* UDP FIONREAD: size of the first datagram, as Linux. */
    it = stk__ring_head(&s->rxq);
    return it != NULL ? it->p->tot_len : 0;
}

int
stk_sock_outq(struct stk_sock *s)
{
    if (s->type == SOCK_STREAM && s->st == STK_TCP_LISTEN)
        return -EINVAL;
    return s->type == SOCK_STREAM ? stk__tcp_outq(s) : 0;
}

int
stk_sock_outq_notsent(struct stk_sock *s)
{
    if (s->type != SOCK_STREAM)
        return -ENOTTY; /* udp_ioctl does not know it */
    if (s->st == STK_TCP_LISTEN)
        return -EINVAL;
    return stk__tcp_notsent(s);
}

int
stk_sock_type(const struct stk_sock *s)
{
    return s->type;
}

bool
stk_sock_is_listening(const struct stk_sock *s)
{
    return s->type == SOCK_STREAM && s->st == STK_TCP_LISTEN;
}

int
stk_sock_take_error(struct stk_sock *s)
{
    int e = s->err;

    s->err = 0;
    if (e != 0)
        stk__changed(s, false);
    return e;
}

/* ---- receive ring
 * ------------------------------------------------------------- */

/* Make room for one more item of isz bytes (the ring's kind). */
static int
ring_grow(struct stk_ring *r, size_t isz)
{
    uint32_t ncap = r->cap ? r->cap * 2 : 8;
    unsigned char *nv = malloc(ncap * isz);
    const unsigned char *ov = r->v;

    if (nv == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < r->count; i++)
        memcpy(nv + i * isz, ov + ((r->head + i) % r->cap) * isz, isz);
    free(r->v);
    r->v = nv;
    r->cap = ncap;
    r->head = 0;
    return 0;
}

static size_t
ring_isz(const struct stk_ring *r)
{
    return r->dgram ? sizeof(struct stk_rx_item) : sizeof(struct pbuf *);
}

int
stk__ring_push_seg(struct stk_ring *r, struct pbuf *p)
{
    struct pbuf **v;

    if (r->count == 0 && r->cap == 0)
        r->dgram = false;
    if (r->count == r->cap && ring_grow(r, ring_isz(r)) != 0)
        return -ENOMEM;
    v = r->v;
    v[(r->head + r->count) % r->cap] = p;
    r->count++;
    return 0;
}

struct pbuf *
stk__ring_seg_at(const struct stk_ring *r, uint32_t i)
{
    struct pbuf *const *v = r->v;

    return i < r->count ? v[(r->head + i) % r->cap] : NULL;
}

int
stk__ring_push(struct stk_ring *r, struct pbuf *p, const ip_addr_t *addr,
               uint16_t port)
{
    struct stk_rx_item *it;

    if (r->count == 0 && r->cap == 0)
        r->dgram = true;
    if (r->count == r->cap && ring_grow(r, ring_isz(r)) != 0)
        return -ENOMEM;
    it = (struct stk_rx_item *)r->v + (r->head + r->count) % r->cap;
    memset(it, 0, sizeof(*it));
    it->p = p;
    if (addr != NULL)
        ip_addr_copy(it->addr, *addr);
    else
        ip_addr_set_zero(&it->addr);
    it->port = port;
    r->count++;
    return 0;
}

struct stk_rx_item *
stk__ring_head(struct stk_ring *r)
{
    return r->count ? (struct stk_rx_item *)r->v + r->head : NULL;
}

struct stk_rx_item *
stk__ring_at(struct stk_ring *r, uint32_t i)
{
    return i < r->count ? (struct stk_rx_item *)r->v + (r->head + i) % r->cap
                        : NULL;
}

void
stk__ring_pop(struct stk_ring *r)
{
    if (r->count == 0)
        return;
    pbuf_free(r->dgram ? ((struct stk_rx_item *)r->v)[r->head].p
                       : ((struct pbuf **)r->v)[r->head]);
    r->head = (r->head + 1) % r->cap;
    r->count--;
}

void
stk__ring_free(struct stk_ring *r)
{
    while (r->count)
        stk__ring_pop(r);
    free(r->v);
    r->v = NULL;
    r->cap = r->head = 0;
}

/* ---- iovec helpers
 * ----------------------------------------------------------- */

size_t
stk__iov_len(const struct msghdr *msg)
{
    size_t i, n = 0;

    for (i = 0; i < (size_t)msg->msg_iovlen; i++)
        n += msg->msg_iov[i].iov_len;
    return n;
}

size_t
stk__iov_copy_from_pbuf(const struct msghdr *msg, size_t iov_skip,
                        struct pbuf *p, uint32_t off, size_t n)
{
    size_t i, done = 0;

    for (i = 0; i < (size_t)msg->msg_iovlen && done < n; i++) {
        size_t l = msg->msg_iov[i].iov_len;
        size_t chunk;

        if (iov_skip >= l) {
            iov_skip -= l;
            continue;
        }
        chunk = l - iov_skip;
        if (chunk > n - done)
            chunk = n - done;
        pbuf_copy_partial(p, (uint8_t *)msg->msg_iov[i].iov_base + iov_skip,
                          (u16_t)chunk, (u16_t)(off + done));
        done += chunk;
        iov_skip = 0;
    }
    return done;
}

/* ---- bind conflicts
 * -------------------------------------------------------------- */

/* Linux (inet_csk_bind_conflict / udp_lib_lport_inuse): two sockets may
 * share a port when both set SO_REUSEPORT, or both set SO_REUSEADDR and,
 * for TCP, the existing one is not listening. TIME_WAIT leftovers only
 * block a socket without SO_REUSEADDR. */
static bool
conflicts_with(const struct stk_sock *s, bool tcp_listening, bool o_reuseaddr,
               bool o_reuseport, bool o_tw)
{
    if (o_tw)
        return !s->reuseaddr;
    if (s->reuseport && o_reuseport)
        return false;
    if (s->reuseaddr && o_reuseaddr && !tcp_listening)
        return false;
    return true;
}

/* A listening pcb belongs to a listener group: every member counts. */
static bool
group_conflict(const struct stk_sock *s, const struct stk_lgroup *g)
{
    const struct stk_sock *m;

    if (g == NULL)
        return true;
    for (m = g->head; m != NULL; m = m->lg_next) {
        if (m != s &&
            conflicts_with(s, true, m->reuseaddr, m->reuseport, false))
            return true;
    }
    return false;
}

static bool
tcp_list_conflict(const struct stk_sock *s, struct tcp_pcb *list,
                  const ip_addr_t *ip, uint16_t port, bool tw)
{
    struct tcp_pcb *p;

    for (p = list; p != NULL; p = p->next) {
        /* Handshaking children still carry their listener group. */
        const struct stk_sock *o =
            p->state == SYN_RCVD || p->state == LISTEN ? NULL : p->callback_arg;

        if (p->local_port != port || o == s ||
            !stk__addr_overlap(ip, &p->local_ip))
            continue;
        if (p->state == LISTEN) {
            if (group_conflict(s, p->callback_arg))
                return true;
            continue;
        }
        if (conflicts_with(s, p->state == LISTEN,
                           o ? o->reuseaddr : ip_get_option(p, SOF_REUSEADDR),
                           o ? o->reuseport : false, tw))
            return true;
    }
    return false;
}

bool
stk__port_conflict(const struct stk_sock *s, const ip_addr_t *ip, uint16_t port)
{
    if (s->type == SOCK_STREAM) {
        return tcp_list_conflict(s, tcp_listen_pcbs.pcbs, ip, port, false) ||
               tcp_list_conflict(s, tcp_bound_pcbs, ip, port, false) ||
               tcp_list_conflict(s, tcp_active_pcbs, ip, port, false) ||
               tcp_list_conflict(s, tcp_tw_pcbs, ip, port, true);
    }
    for (struct udp_pcb *u = udp_pcbs; u != NULL; u = u->next) {
        const struct stk_sock *o = u->recv_arg;

        if (u->local_port != port || o == s || o == NULL ||
            !stk__addr_overlap(ip, &u->local_ip))
            continue;
        if (conflicts_with(s, false, o->reuseaddr, o->reuseport, false))
            return true;
    }
    return false;
}
