/*
 * ICMP and ICMPv6 errors for TCP connections, as Linux's tcp_v4_err and
 * tcp_v6_err: the connection the quoted segment belongs to, found by the
 * hashed lookup (an error costs no walk of every connection), and the end
 * of a connect in SYN-SENT. icmp_err.c and icmp6_err.c parse the
 * messages; neigh_unres.c reports the packets of a neighbour nobody
 * answered for the same way.
 */
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "stats.h"
#include "stk_hooks.h"
#include "stk_priv.h"

struct tcp_pcb *
stk__icmp_tcp_find(const ip_addr_t *src, uint16_t sport, const ip_addr_t *dst,
                   uint16_t dport)
{
    struct tcp_pcb *p = NULL;

#ifdef STK_PCB_HASH_OFF
    for (p = tcp_active_pcbs; p != NULL; p = p->next)
#else
    while ((p = stk_pcb_hash_lookup(&tcp_active_pcbs, p, src, sport, dst,
                                    dport)) != NULL)
#endif
        if (p->local_port == sport && p->remote_port == dport &&
            ip_addr_cmp(&p->remote_ip, dst) && ip_addr_cmp(&p->local_ip, src))
            return p;
    return NULL;
}

void
stk__icmp_tcp_err(struct tcp_pcb *pcb, uint32_t seq, int err)
{
    struct stk_sock *s = pcb->callback_arg;

    /* Linux ends only a connect with it (SYN-SENT; once synchronized an
     * error is soft: the connection keeps trying until it times out). */
    if (pcb->state != SYN_SENT || s == NULL || s->pcb.tcp != pcb)
        return;
    if (seq != pcb->lastack) { /* only the SYN's own error */
        BASE_STAT_INC(rx_icmp_out_of_window);
        return;
    }
    stk__tcp_abort(s);
    s->err = err;
    s->st = STK_TCP_CLOSED;
    s->shut_rd = s->shut_wr = true;
    stk__changed(s, true);
}
