/*
 * The socket table of the live state region (base/statreg.h): every
 * accelerated socket of the fd table with its addresses, state, queues
 * and TCP_INFO, for accel-stat -t/-u. Called by the progress thread at a
 * snapshot while a reader asks for sockets, with no lock held; each
 * socket is read under the stack lock, one at a time, so the application
 * waits at most for one socket's worth.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "fdtable.h"
#include "rt.h"
#include "sock.h"
#include "statreg.h"
#include "stk.h"

struct fill {
    struct base_sr_sock *out;
    uint32_t max, n, total;
};

static void
put_addr(const struct sockaddr_storage *ss, uint8_t addr[16], uint16_t *port)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *sin = (const void *)ss;

        memcpy(addr, &sin->sin_addr, 4);
        *port = sin->sin_port;
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const void *)ss;

        memcpy(addr, &s6->sin6_addr, 16);
        *port = s6->sin6_port;
    }
}

/* r from the stack socket st (stack lock held). */
static void
read_sock(struct stk_sock *st, struct base_sr_sock *r)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    bool tcp = stk_sock_type(st) == SOCK_STREAM;
    int v;

    r->proto = tcp ? IPPROTO_TCP : IPPROTO_UDP;
    memset(&ss, 0, sizeof(ss));
    if (stk_sock_getname(st, (struct sockaddr *)&ss, &len, false) == 0)
        put_addr(&ss, r->laddr, &r->lport);
    len = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    if (stk_sock_getname(st, (struct sockaddr *)&ss, &len, true) == 0)
        put_addr(&ss, r->raddr, &r->rport);
    v = stk_sock_inq(st);
    r->rcvq = v > 0 ? (uint32_t)v : 0;
    v = stk_sock_outq(st);
    r->sndq = v > 0 ? (uint32_t)v : 0;
    if (tcp) {
        struct stk_tcp_info tl;
        struct tcp_info tib, *ti = &tib;

        len = sizeof(tl);
        memset(&tl, 0, sizeof(tl));
        if (stk_sock_getsockopt(st, IPPROTO_TCP, TCP_INFO, &tl, &len) == 0) {
            memcpy(&tib, tl.base, sizeof(tib));
            r->state = ti->tcpi_state;
            r->retrans = ti->tcpi_total_retrans;
            r->srtt_us = ti->tcpi_rtt;
            r->rttvar_us = ti->tcpi_rttvar;
            r->cwnd = ti->tcpi_snd_cwnd;
            r->ssthresh = ti->tcpi_snd_ssthresh;
            r->mss = ti->tcpi_snd_mss;
            r->rto_us = ti->tcpi_rto;
            r->lost = ti->tcpi_lost;
            r->bytes_acked = tl.tcpi_bytes_acked;
            r->bytes_received = tl.tcpi_bytes_received;
        }
        if (stk_sock_is_listening(st))
            r->state = BASE_SR_TCP_LISTEN;
    } else {
        r->state = r->rport != 0 ? BASE_SR_TCP_ESTABLISHED : BASE_SR_TCP_CLOSE;
    }
}

static bool
one(int fd, struct pl_fd *f, void *arg)
{
    struct fill *c = arg;
    struct pl_sock *s = pl_sock_of(f);
    struct base_sr_sock *r;

    if (s == NULL || pl_sock_state(s) != PL_SOCK_ACCEL || atomic_load(&s->dead))
        return true;
    c->total++;
    if (c->n == c->max)
        return true;
    r = &c->out[c->n];
    memset(r, 0, sizeof(*r));
    r->fd = fd;
    r->family = (uint8_t)pl_sock_af(s);
    rt_lock();
    read_sock(s->stk, r);
    rt_unlock();
    c->n++;
    return true;
}

uint32_t
pl_sr_socks(struct base_sr_sock *out, uint32_t max, uint32_t *total)
{
    struct fill c = {.out = out, .max = max};

    pl_fdt_each_ref(one, &c);
    *total = c.total;
    return c.n;
}
