/*
 * The stack across fork. fork() copies the process, lwIP included: parent
 * and child each hold the same connections, but the peer must talk to one
 * of them. The runtime (runtime/share.c) decides which process receives a
 * connection's segments; this file keeps the copies from acting on their
 * own until that is decided:
 *
 *  - right after fork, in both processes, every connection a socket holds
 *    is frozen: its pcb leaves lwIP's lists (so no input reaches it, no
 *    timer fires and nothing is sent) but keeps all its state;
 *  - the first process that uses the socket claims the connection from the
 *    runtime and thaws it (the pcb goes back, with the segments that
 *    arrived meanwhile replayed by the runtime); the other copies are
 *    dropped silently when their process touches or closes them;
 *  - connections no socket holds (TIME-WAIT, half-open, closed by the
 *    application) stay with the parent; the child drops its copies.
 *
 * Listening pcbs are not frozen: every process keeps its copy, and the
 * runtime hands each new connection to one process that serves the
 * listener (stk_sock_service, stk_input_lid).
 *
 * The runtime learns which connections this stack holds through
 * stk_flow_ops, called from the demux hooks (pcb_hash.c) whenever a pcb
 * joins or leaves the active or TIME-WAIT list; freezing and dropping a
 * copy are not reported (the connection is not this copy's to give up).
 *
 * All of it runs under the stack lock.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "stk.h"
#include "stk_hooks.h"
#include "stk_priv.h"

static const struct stk_flow_ops *flow_ops;
static int mute; /* > 0: pcb list moves made here are not reported */
uint32_t stk__in_lid;

void
stk__flow_mute(bool on)
{
    mute += on ? 1 : -1;
}

bool
stk__flow_muted(void)
{
    return mute > 0;
}

void
stk_set_flow_ops(const struct stk_flow_ops *ops)
{
    flow_ops = ops;
}

/* A UDP socket's queue is one on Linux: a datagram queued at the fork is
 * read by whichever process reads first (socat UDP-RECVFROM,fork: the
 * parent peeks, forks, and the child reads). Each socket's untagged
 * datagrams get one tag; the copies of a later fork keep theirs. */
void
stk_fork_tag_udp(void)
{
    if (flow_ops == NULL || flow_ops->udp_tag == NULL)
        return;
    for (struct udp_pcb *u = udp_pcbs; u != NULL; u = u->next) {
        struct stk_sock *s = stk__udp_sock_of(u);
        uint32_t tag = 0;

        if (s == NULL)
            continue;
        for (uint32_t i = 0; i < s->rxq.count; i++) {
            struct stk_rx_item *it = stk__ring_at(&s->rxq, i);

            if (it->fork_tag != 0)
                continue;
            if (tag == 0 && (tag = flow_ops->udp_tag()) == 0)
                return; /* no shared tags: each process keeps its copy */
            it->fork_tag = tag;
        }
    }
}

int
stk__udp_claim(uint32_t tag, bool take)
{
    if (flow_ops == NULL || flow_ops->udp_claim == NULL)
        return 1;
    return flow_ops->udp_claim(tag, take);
}

static uint32_t
fold6(const ip_addr_t *a)
{
    const u32_t *w = ip_2_ip6(a)->addr;

    return w[0] ^ w[1] ^ w[2] ^ w[3];
}

void
stk__flow_set(struct stk_flow *f, const ip_addr_t *lip, uint16_t lport,
              const ip_addr_t *rip, uint16_t rport)
{
    memset(f, 0, sizeof(*f));
    if (IP_IS_V6(lip)) {
        f->v6 = true;
        memcpy(f->lip6, ip_2_ip6(lip)->addr, 16);
        memcpy(f->rip6, ip_2_ip6(rip)->addr, 16);
        f->lip = fold6(lip);
        f->rip = fold6(rip);
    } else {
        f->lip = ip4_addr_get_u32(ip_2_ip4(lip));
        f->rip = ip4_addr_get_u32(ip_2_ip4(rip));
    }
    f->lport = lport;
    f->rport = rport;
}

static void
flow_of(const struct tcp_pcb *pcb, struct stk_flow *f)
{
    stk__flow_set(f, &pcb->local_ip, pcb->local_port, &pcb->remote_ip,
                  pcb->remote_port);
}

/* The addresses of f as lwIP's. */
static void
flow_addrs(const struct stk_flow *f, ip_addr_t *l, ip_addr_t *r)
{
    if (f->v6) {
        memset(l, 0, sizeof(*l));
        memset(r, 0, sizeof(*r));
        memcpy(ip_2_ip6(l)->addr, f->lip6, 16);
        memcpy(ip_2_ip6(r)->addr, f->rip6, 16);
        IP_SET_TYPE_VAL(*l, IPADDR_TYPE_V6);
        IP_SET_TYPE_VAL(*r, IPADDR_TYPE_V6);
    } else {
        ip_addr_set_ip4_u32_val(*l, f->lip);
        ip_addr_set_ip4_u32_val(*r, f->rip);
    }
}

bool
stk_flow_active(const struct stk_flow *f)
{
    ip_addr_t l, r;
    struct tcp_pcb *p = NULL;

    flow_addrs(f, &l, &r);
#ifdef STK_PCB_HASH_OFF
    for (p = tcp_active_pcbs; p != NULL; p = p->next)
#else
    while ((p = stk_pcb_hash_lookup(&tcp_active_pcbs, p, &l, f->lport, &r,
                                    f->rport)) != NULL)
#endif
        if (p->local_port == f->lport && p->remote_port == f->rport &&
            ip_addr_cmp(&p->remote_ip, &r) && ip_addr_cmp(&p->local_ip, &l))
            return true;
    return false;
}

void
stk__flow_note(const struct tcp_pcb *pcb, bool add, bool tw)
{
    struct stk_flow f;

    if (flow_ops == NULL || mute > 0 || pcb->state == LISTEN ||
        pcb->remote_port == 0)
        return;
    flow_of(pcb, &f);
    flow_ops->note(&f, add, tw);
}

/* Each process walks the ephemeral range from its own random start (a
 * fork child would otherwise follow its parent's sequence port for port)
 * and takes a port only once the runtime reserved its 4-tuple. */
int
stk__flow_bind_ephemeral(struct tcp_pcb *pcb, const ip_addr_t *ip,
                         uint16_t port)
{
    static uint16_t next;
    static pid_t next_pid;
    const uint32_t lo = TCP_LOCAL_PORT_RANGE_START,
                   n = TCP_LOCAL_PORT_RANGE_END - TCP_LOCAL_PORT_RANGE_START +
                       1;
    const ip_addr_t *lip = stk__local_for(ip);
    ip_addr_t any;
    struct stk_flow f;

    if (flow_ops == NULL || flow_ops->reserve == NULL)
        return 1;
    if (lip == NULL)
        return -ENETUNREACH;
    if (next_pid != getpid()) {
        uint32_t r = 0;
        if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
            r = (uint32_t)getpid() * 2654435761u;
        next = (uint16_t)(lo + r % n);
        next_pid = getpid();
    }
    /* The pcb keeps its wildcard of either family; the source is the
     * route's (tcp_connect fills it in). */
    ip_addr_copy(any, pcb->local_ip);
    for (uint32_t i = 0; i < n; i++) {
        stk__flow_set(&f, lip, next, ip, port);
        next = (uint16_t)(next >= TCP_LOCAL_PORT_RANGE_END ? lo : next + 1u);
        if (!flow_ops->reserve(&f, true))
            continue;
        if (tcp_bind(pcb, &any, f.lport) == ERR_OK)
            return 0;
        flow_ops->reserve(&f, false);
    }
    return -EADDRNOTAVAIL;
}

/* The socket holding pcb, if any (accepted or still queued). */
static struct stk_sock *
sock_of(struct tcp_pcb *pcb)
{
    struct stk_sock *s = pcb->callback_arg;

    return (s != NULL && s->pcb.tcp == pcb) ? s : NULL;
}

void
stk_each_flow(void (*fn)(void *ctx, const struct stk_flow *f, bool has_sock),
              void *ctx)
{
    struct tcp_pcb *pcb;
    struct stk_flow f;

    for (pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
        flow_of(pcb, &f);
        fn(ctx, &f, sock_of(pcb) != NULL);
    }
    for (pcb = tcp_tw_pcbs; pcb != NULL; pcb = pcb->next) {
        flow_of(pcb, &f);
        fn(ctx, &f, false);
    }
}

/* Unlink pcb from lwIP's lists, and free it, without a frame: no delayed
 * ACK, no RST. */
static void
drop_silently(struct tcp_pcb *pcb)
{
    tcp_clear_flags(pcb, TF_ACK_DELAY | TF_ACK_NOW);
    tcp_abandon(pcb, 0);
}

void
stk_fork_freeze(bool child)
{
    struct tcp_pcb *pcb, *next;

    mute++;
    for (pcb = tcp_active_pcbs; pcb != NULL; pcb = next) {
        struct stk_sock *s = sock_of(pcb);

        next = pcb->next;
        if (s != NULL) {
            TCP_RMV_ACTIVE(pcb);
            s->frozen = true;
        } else if (child) {
            tcp_arg(pcb, NULL);
            tcp_err(pcb, NULL);
            drop_silently(pcb);
        }
    }
    if (child) {
        while (tcp_tw_pcbs != NULL)
            drop_silently(tcp_tw_pcbs);
    }
    mute--;
}

bool
stk_sock_frozen(const struct stk_sock *s, struct stk_flow *f)
{
    if (s == NULL || !s->frozen || s->type != SOCK_STREAM || s->pcb.tcp == NULL)
        return false;
    if (f != NULL)
        flow_of(s->pcb.tcp, f);
    return true;
}

bool
stk_sock_flow(const struct stk_sock *s, struct stk_flow *f)
{
    if (s == NULL || s->type != SOCK_STREAM || s->pcb.tcp == NULL ||
        s->pcb.tcp->state == LISTEN || s->pcb.tcp->remote_port == 0)
        return false;
    flow_of(s->pcb.tcp, f);
    return true;
}

void
stk_sock_thaw(struct stk_sock *s)
{
    if (!s->frozen)
        return;
    s->frozen = false;
    if (s->pcb.tcp == NULL)
        return;
    /* Reported as an add: the runtime's table now names this process. */
    TCP_REG_ACTIVE(s->pcb.tcp);
    stk__changed(s, true);
}

void
stk_sock_drop_frozen(struct stk_sock *s)
{
    struct tcp_pcb *pcb;

    if (!s->frozen)
        return;
    s->frozen = false;
    pcb = s->pcb.tcp;
    if (pcb == NULL)
        return;
    mute++;
    /* tcp_abandon unlinks from the active list: put it back first. */
    TCP_REG_ACTIVE(pcb);
    stk__tcp_detach(s);
    drop_silently(pcb);
    mute--;
    s->st = STK_TCP_CLOSED;
    s->shut_rd = s->shut_wr = true;
    s->err = 0;
    stk__changed(s, true);
}

bool
stk_sock_service(const struct stk_sock *s, int *proto, uint16_t *port,
                 uint32_t *lid)
{
    if (s->type == SOCK_STREAM) {
        if (s->st != STK_TCP_LISTEN)
            return false;
        *proto = IPPROTO_TCP;
        *port = s->bind_port;
        *lid = s->lid;
        return true;
    }
    if (s->pcb.udp == NULL || s->pcb.udp->local_port == 0)
        return false;
    *proto = IPPROTO_UDP;
    *port = s->pcb.udp->local_port;
    *lid = 0;
    return true;
}

void
stk_input_lid(const void *frame, uint16_t len, uint32_t lid)
{
    stk__in_lid = lid;
    stk_input(frame, len);
    stk__in_lid = 0;
}
