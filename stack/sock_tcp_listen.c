/*
 * TCP listening sockets: listen(), the per-socket accept queues, accept(),
 * and SO_REUSEPORT listener groups.
 *
 * lwIP serves one listening pcb per address:port, so the pcb belongs to a
 * listener group (struct stk_lgroup), never to a socket. Every listening
 * socket is a member of exactly one group; a plain listener is a group of
 * one. A second socket listening on the same address and port joins the
 * existing group when it and every member set SO_REUSEPORT (Linux's rule
 * for one uid; we serve one process), and its own bound pcb is released.
 * Each established connection goes to one member's accept queue: the one
 * the hash of the 4-tuple names, or the next member with room when that
 * queue is full (Linux picks by hash; skipping full members only avoids a
 * needless refusal). Each member keeps its own backlog, readiness and
 * accept. Closing a member resets the connections queued on it (Linux
 * without tcp_migrate_req) and leaves the others listening; the lwIP pcb
 * is closed with the last member.
 *
 * Accept queue limit: lwIP's 8-bit listen backlog is used as the room
 * left in the group's queues (each member: Linux's backlog+1 established
 * connections, counting those still in SYN_RCVD), so SYNs are refused, not
 * answered, while every queue is full and clients retry, as on Linux.
 *
 * The pcb's callback arg is the group, and lwIP copies it into the pcbs of
 * handshakes in progress; after the group's pcb is closed lwIP clears
 * their listener pointer and never calls accept with it again.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/random.h>

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "stats.h"
#include "stk_hooks.h"
#include "stk_priv.h"
#include "stk_test.h"

static long group_count;

long
stk_test_lgroups(void)
{
    return group_count;
}

void
stk_listen_overflow_hook(struct tcp_pcb_listen *lpcb)
{
    (void)lpcb;
    BASE_STAT_INC(tcp_listen_overflow);
}

static bool
queue_full(const struct stk_sock *m)
{
    return m->accq_len > m->backlog;
}

bool
stk__group_has_room(const struct stk_lgroup *g)
{
    for (const struct stk_sock *m = g->head; m != NULL; m = m->lg_next)
        if (!queue_full(m))
            return true;
    return false;
}

/* lwIP refuses a SYN when its pending handshakes reach lpcb->backlog: make
 * that the room left in the members' queues. */
static void
group_update_backlog(struct stk_lgroup *g)
{
    struct tcp_pcb_listen *lpcb = (struct tcp_pcb_listen *)g->lpcb;
    const struct stk_sock *m;
    long room = 0;

    for (m = g->head; m != NULL; m = m->lg_next) {
        if (!queue_full(m))
            room += m->backlog + 1 - m->accq_len;
    }
    lpcb->backlog = (u16_t)(room > 0xffff ? 0xffff : room); /* patch 0037 */
}

/* Linux's reuseport hash picks a member from the 4-tuple; this is a fixed
 * mix (murmur3's finaliser), so the spread is deterministic. */
static uint32_t
addr_word(const ip_addr_t *a)
{
    const u32_t *w = ip_2_ip6(a)->addr;

    return IP_IS_V6(a) ? w[0] ^ w[1] ^ w[2] ^ w[3]
                       : ip4_addr_get_u32(ip_2_ip4(a));
}

static uint32_t
tuple_hash(const struct tcp_pcb *pcb)
{
    uint32_t h = addr_word(&pcb->remote_ip) * 0x9e3779b1u;

    h ^= ((uint32_t)pcb->remote_port << 16 | pcb->local_port) * 0x85ebca6bu;
    h ^= addr_word(&pcb->local_ip);
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* A listener's id (stk_sock_service): random, so that ids made in
 * different processes after a fork do not collide; never 0. */
static uint32_t
new_lid(void)
{
    static uint32_t fallback;
    uint32_t v = 0;

    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
        v = ++fallback * 0x9e3779b1u;
    return v != 0 ? v : 1;
}

/* Several processes (runtime/share.c): the runtime dispatches a SYN to a
 * listener of one process (stk_input_lid); the connection is queued when
 * the handshake ends, so the new pcb keeps that listener id meanwhile in
 * an ext arg, set when lwIP makes it from the listening pcb. */
static u8_t lid_ext_id = 0xff;

static err_t
remember_lid(u8_t id, struct tcp_pcb_listen *lpcb, struct tcp_pcb *cpcb)
{
    (void)lpcb;
    tcp_ext_arg_set(cpcb, id, (void *)(uintptr_t)stk__in_lid);
    return ERR_OK;
}

static const struct tcp_ext_arg_callbacks lid_cbs = {
    .destroy = NULL,
    .passive_open = remember_lid,
};

/* The member that takes the connection: the one the runtime dispatched
 * the SYN to if it has room, else the hashed one, or the next one with
 * room; NULL when every queue is full. */
static struct stk_sock *
group_pick(struct stk_lgroup *g, struct tcp_pcb *newpcb)
{
    struct stk_sock *m = g->head;
    uint32_t i, start, lid = 0;

    if (g->n == 0)
        return NULL;
    if (lid_ext_id != 0xff)
        lid = (uint32_t)(uintptr_t)tcp_ext_arg_get(newpcb, lid_ext_id);
    if (lid != 0) {
        for (struct stk_sock *x = g->head; x != NULL; x = x->lg_next)
            if (x->lid == lid && !queue_full(x))
                return x;
    }
    start = g->n > 1 ? tuple_hash(newpcb) % g->n : 0;
    for (i = 0; i < start; i++)
        m = m->lg_next;
    for (i = 0; i < g->n; i++) {
        if (!queue_full(m))
            return m;
        m = m->lg_next != NULL ? m->lg_next : g->head;
    }
    return NULL;
}

/* A new connection's socket, queued on listener l (options inherited). */
struct stk_sock *
stk__tcp_queue_new(struct stk_sock *l, struct tcp_pcb *newpcb)
{
    struct stk_sock *c = stk__sock_alloc(SOCK_STREAM);

    if (c == NULL)
        return NULL;
    c->st = STK_TCP_CONNECTED;
    c->ever_connected = c->connect_reported = c->bound = true;
    c->reuseaddr = l->reuseaddr;
    c->reuseport = l->reuseport;
    c->keepalive = l->keepalive;
    c->keepidle = l->keepidle;
    c->keepintvl = l->keepintvl;
    c->keepcnt = l->keepcnt;
    c->user_mss = l->user_mss;
    c->nodelay = l->nodelay;
    c->cork = l->cork;
    c->cc = l->cc;
    c->linger_on = l->linger_on;
    c->linger_sec = l->linger_sec;
    c->sndbuf = l->sndbuf;
    c->rcvbuf = l->rcvbuf;
    c->snd_limit = l->snd_limit;
    c->rcv_limit = l->rcv_limit;
    c->inet6 = l->inet6;
    c->v6only = l->v6only;
    c->scope = l->scope;
    ip_addr_copy(c->bind_ip, newpcb->local_ip);
    c->bind_port = newpcb->local_port;
    ip_addr_copy(c->peer_ip, newpcb->remote_ip);
    c->peer_port = newpcb->remote_port;
    stk__tcp_attach(c, newpcb);
    stk__tcp_apply_opts(c);
    c->listener = l;
    if (l->accq_tail != NULL)
        l->accq_tail->acc_next = c;
    else
        l->accq_head = c;
    l->accq_tail = c;
    l->accq_len++;
    group_update_backlog(l->lgrp);
    stk__changed(l, true);
    return c;
}

void
stk__tcp_group_backlog(struct stk_lgroup *g)
{
    group_update_backlog(g);
}

static err_t
cb_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
    struct stk_lgroup *g = arg;
    struct stk_sock *l, *c;

    if (g == NULL || err != ERR_OK || newpcb == NULL)
        return ERR_VAL; /* lwIP aborts newpcb */
    l = group_pick(g, newpcb);
    if (l == NULL) {
        BASE_STAT_INC(tcp_listen_overflow);
        return ERR_VAL;
    }
    c = stk__tcp_queue_new(l, newpcb);
    if (c == NULL)
        return ERR_MEM;
    stk__tcp_window_clamp(c);
    return ERR_OK;
}

/* The group s may join on its address and port (*out, NULL for a new
 * one), or -EADDRINUSE. Linux: listeners on overlapping addresses coexist
 * only when all of them set SO_REUSEPORT; those on the very same address
 * share the connections, a specific address beats the wildcard. */
static int
find_group(const struct stk_sock *s, uint16_t port, struct stk_lgroup **out)
{
    struct tcp_pcb *l;

    *out = NULL;
    for (l = tcp_listen_pcbs.pcbs; l != NULL; l = l->next) {
        struct stk_lgroup *g = l->callback_arg;
        const struct stk_sock *m;
        bool same;

        if (l->local_port != port ||
            !stk__addr_overlap(&l->local_ip, &s->bind_ip))
            continue;
        same =
            ip_addr_cmp(&l->local_ip, &s->bind_ip) ||
            (IP_IS_ANY_TYPE_VAL(l->local_ip) && IP_IS_ANY_TYPE_VAL(s->bind_ip));
        if (g == NULL || !s->reuseport)
            return -EADDRINUSE;
        for (m = g->head; m != NULL; m = m->lg_next) {
            if (!m->reuseport)
                return -EADDRINUSE;
        }
        if (same)
            *out = g;
    }
    return 0;
}

static void
group_add(struct stk_lgroup *g, struct stk_sock *s)
{
    struct stk_sock **pp = &g->head;

    while (*pp != NULL)
        pp = &(*pp)->lg_next;
    *pp = s;
    s->lg_next = NULL;
    s->lgrp = g;
    g->n++;
}

/* A new group around a fresh lwIP listening pcb made from s's bound pcb. */
static int
group_create(struct stk_sock *s, struct stk_lgroup **out)
{
    struct stk_lgroup *g = calloc(1, sizeof(*g));
    struct tcp_pcb *pcb, *lpcb;
    err_t e = ERR_OK;

    if (g == NULL)
        return -ENOMEM;
    /* tcp_listen frees the original pcb: unhook it first so the destroy
     * callback does not report the socket closed. */
    pcb = stk__tcp_detach(s);
    lpcb = tcp_listen_with_backlog_and_err(pcb, 255, &e);
    if (lpcb == NULL) {
        stk__tcp_attach(s, pcb);
        free(g);
        return stk_err_to_errno(e);
    }
    g->lpcb = lpcb;
    tcp_arg(lpcb, g);
    tcp_accept(lpcb, cb_accept);
    if (lid_ext_id == 0xff)
        lid_ext_id = tcp_ext_arg_alloc_id(); /* once per process */
    tcp_ext_arg_set_callbacks(lpcb, lid_ext_id, &lid_cbs);
    group_count++;
    *out = g;
    return 0;
}

int
stk__tcp_listen(struct stk_sock *s, int backlog)
{
    struct stk_lgroup *g;
    struct tcp_pcb *pcb;
    err_t e;
    int rc;

    if ((unsigned int)backlog > STK_SOMAXCONN)
        backlog = STK_SOMAXCONN;
    if (s->st == STK_TCP_LISTEN) {
        s->backlog = backlog;
        group_update_backlog(s->lgrp);
        return 0;
    }
    if (s->st != STK_TCP_CLOSED || s->connecting || s->ever_connected)
        return -EINVAL;
    if (s->pcb.tcp == NULL && (rc = stk__tcp_fresh_pcb(s)) < 0)
        return rc;
    pcb = s->pcb.tcp;
    if (!s->bound) {
        stk__tcp_apply_opts(s);
        stk__sock_any(s, &s->bind_ip);
        e = tcp_bind(pcb, &s->bind_ip, 0);
        if (e != ERR_OK)
            return stk_err_to_errno(e);
        s->bound = true;
        s->bind_port = pcb->local_port;
    }
    if ((rc = find_group(s, pcb->local_port, &g)) < 0)
        return rc;
    if (g == NULL) {
        if ((rc = group_create(s, &g)) < 0)
            return rc;
    } else {
        /* The group's pcb serves this socket too; its own bound pcb
         * (CLOSED, never connected) is freed at once by tcp_close. */
        tcp_close(stk__tcp_detach(s));
    }
    group_add(g, s);
    s->st = STK_TCP_LISTEN;
    s->backlog = backlog;
    s->lid = new_lid();
    group_update_backlog(g);
    stk__steer_port(s, true);
    stk__changed(s, false);
    return 0;
}

int
stk__tcp_accept(struct stk_sock *s, struct stk_sock **out,
                struct sockaddr *addr, socklen_t *len)
{
    struct stk_sock *c;

    if (s->st != STK_TCP_LISTEN)
        return -EINVAL;
    c = s->accq_head;
    if (c == NULL)
        return -EAGAIN;
    s->accq_head = c->acc_next;
    if (s->accq_head == NULL)
        s->accq_tail = NULL;
    s->accq_len--;
    c->acc_next = NULL;
    c->listener = NULL;
    group_update_backlog(s->lgrp);
    BASE_STAT_INC(tcp_accept);
    stk__addr_out(c, &c->peer_ip, c->peer_port, addr, len);
    *out = c;
    stk__changed(s, false);
    return 0;
}

void
stk__tcp_unlisten(struct stk_sock *s)
{
    struct stk_lgroup *g = s->lgrp;
    struct stk_sock *c, **pp;

    /* Linux resets the connections nobody accepted. Copies a fork froze
     * (stack/fork.c) are another process's to accept: dropped silently. */
    while ((c = s->accq_head) != NULL) {
        s->accq_head = c->acc_next;
        if (c->frozen)
            stk_sock_drop_frozen(c);
        else
            stk__tcp_abort(c);
        stk__sock_free(c);
    }
    s->accq_tail = NULL;
    s->accq_len = 0;
    if (g == NULL)
        return;
    for (pp = &g->head; *pp != NULL; pp = &(*pp)->lg_next) {
        if (*pp == s) {
            *pp = s->lg_next;
            g->n--;
            break;
        }
    }
    s->lg_next = NULL;
    s->lgrp = NULL;
    if (g->head != NULL) {
        group_update_backlog(g);
        return;
    }
    tcp_arg(g->lpcb, NULL);
    tcp_accept(g->lpcb, NULL);
    tcp_close(g->lpcb);
    free(g);
    group_count--;
}
