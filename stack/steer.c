/*
 * What the stack tells the port about its ports and connections when it
 * shares the interface's IPv4 address with the kernel (the link ops
 * steer_port, steer_flow, arp_request; runtime/xdpsteer4.c keeps the XDP
 * program's maps). Without those ops (a separate address, memif, tests)
 * every call here is one test of a NULL pointer.
 *
 *  - a local port the stack serves: a TCP listener from listen() to its
 *    close, a UDP socket from the moment it has a port to its close;
 *  - a connection whose local port is not served: an active open, from
 *    the SYN to the pcb's end (TIME-WAIT included), and the connections a
 *    listener leaves behind when its port stops being served
 *    (stk_steer_adopt_port). The pcb carries a bit (acc.steered) so its
 *    end removes only what was added for it. Moves made while flow
 *    reports are muted (fork freeze, copies dropped silently, moved
 *    connections) change nothing: the connection lives on elsewhere;
 *  - the ARP requests and IPv6 neighbour solicitations the stack sends:
 *    their answer is steered to it.
 *
 * Stack lock held throughout.
 */
#include <netinet/in.h>
#include <string.h>

#include "lwip/icmp6.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/icmp6.h"
#include "lwip/prot/ip6.h"
#include "lwip/prot/etharp.h"
#include "lwip/prot/ethernet.h"
#include "lwip/tcp.h"

#include "stk.h"
#include "stk_priv.h"

void
stk__steer_port(struct stk_sock *s, bool on)
{
    const struct stk_link_ops *l = stk__link();
    int proto = s->type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP;

    if (l->steer_port == NULL)
        return;
    if (on) {
        uint16_t port = s->type == SOCK_STREAM ? s->bind_port
                        : s->pcb.udp != NULL   ? s->pcb.udp->local_port
                                               : 0;
        if (s->steer_port != 0 || port == 0)
            return;
        s->steer_port = port;
        l->steer_port(l->ctx, proto, port, true);
    } else if (s->steer_port != 0) {
        uint16_t port = s->steer_port;

        s->steer_port = 0;
        l->steer_port(l->ctx, proto, port, false);
    }
}

static void
flow_of(const struct tcp_pcb *pcb, struct stk_flow *f)
{
    stk__flow_set(f, &pcb->local_ip, pcb->local_port, &pcb->remote_ip,
                  pcb->remote_port);
}

void
stk__steer_pcb(struct tcp_pcb *pcb, bool on)
{
    const struct stk_link_ops *l = stk__link();
    struct stk_flow f;

    if (l->steer_flow == NULL || stk__flow_muted() || pcb->remote_port == 0)
        return;
    if (on == pcb->acc.steered)
        return;
    pcb->acc.steered = on;
    flow_of(pcb, &f);
    l->steer_flow(l->ctx, &f, on);
}

static void
adopt_list(struct tcp_pcb *list, uint16_t port)
{
    for (struct tcp_pcb *p = list; p != NULL; p = p->next)
        if (p->local_port == port && !p->acc.steered)
            stk__steer_pcb(p, true);
}

void
stk_steer_adopt_port(uint16_t port)
{
    adopt_list(tcp_active_pcbs, port);
    adopt_list(tcp_tw_pcbs, port);
}

/* A neighbour solicitation (no extension headers: lwIP sends none):
 * its target to nd_request. */
static void
steer_ns(const struct stk_link_ops *l, const uint8_t *frame, uint16_t len)
{
    const uint8_t *ip6 = frame + SIZEOF_ETH_HDR;
    const uint8_t *icmp = ip6 + 40;

    static const uint8_t unspec[16];

    if (l->nd_request == NULL || len < SIZEOF_ETH_HDR + 40 + 8 + 16 ||
        ip6[6] != IP6_NEXTH_ICMP6 || icmp[0] != ICMP6_TYPE_NS)
        return;
    /* Duplicate address detection (from ::): the kernel defends a shared
     * address, and that answer must not reach the stack. */
    if (memcmp(ip6 + 8, unspec, 16) == 0)
        return;
    l->nd_request(l->ctx, icmp + 8);
}

void
stk__steer_arp(const uint8_t *frame, uint16_t len)
{
    const struct stk_link_ops *l = stk__link();
    const struct eth_hdr *eth = (const void *)frame;
    const struct etharp_hdr *a = (const void *)(eth + 1);
    uint32_t tpa;

    if (len < SIZEOF_ETH_HDR)
        return;
    if (eth->type == PP_HTONS(ETHTYPE_IPV6)) {
        steer_ns(l, frame, len);
        return;
    }
    if (l->arp_request == NULL || len < SIZEOF_ETH_HDR + SIZEOF_ETHARP_HDR ||
        eth->type != PP_HTONS(ETHTYPE_ARP) ||
        a->opcode != PP_HTONS(ARP_REQUEST))
        return;
    memcpy(&tpa, &a->dipaddr, sizeof(tpa));
    /* A gratuitous request (its sender's address is its target: lwIP's
     * announcement at netif up) expects no reply; the kernel defends the
     * shared address. */
    if (memcmp(&a->sipaddr, &a->dipaddr, sizeof(tpa)) == 0)
        return;
    l->arp_request(l->ctx, tpa);
}
