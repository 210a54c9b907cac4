/*
 * Control messages on receive for UDP sockets, as Linux gives them
 * (net/ipv4/ip_sockglue.c ip_cmsg_recv_offset, net/ipv6/datagram.c
 * ip6_datagram_recv_common_ctl and ip6_datagram_recv_specific_ctl,
 * net/core/scm.c put_cmsg).
 *
 * What a message tells about a datagram is recorded when the datagram is
 * queued (stk__cmsg_note, from lwIP's receive callback, where
 * ip_current_header() is the datagram's): its destination, TOS or traffic
 * class, TTL or hop limit, and the interface it came in on. The options
 * set when it is read choose the messages (stk__cmsg_put):
 *
 *  - any UDP socket with SO_TIMESTAMP: SCM_TIMESTAMP first, the arrival
 *    time noted when it was queued;
 *  - an AF_INET socket: IP_PKTINFO, IP_TTL, IP_TOS (options IP_PKTINFO,
 *    IP_RECVTTL, IP_RECVTOS), in that order;
 *  - an AF_INET6 socket, IPv6 datagram: IPV6_PKTINFO, IPV6_HOPLIMIT,
 *    IPV6_TCLASS, IPV6_2292PKTINFO, IPV6_2292HOPLIMIT;
 *  - an AF_INET6 socket, IPv4 datagram (dual stack): IPV6_PKTINFO with the
 *    destination as ::ffff:a.b.c.d, then the IPv4 messages its IP_
 *    options ask for (the IPv6 hop limit and class options give none).
 *
 * Linux notes the interface of an IPv4 datagram only when the socket asks
 * for IP_PKTINFO or IPV6_RECVPKTINFO as it is queued
 * (ipv4_pktinfo_prepare): one queued before reads with index 0 and
 * ipi_spec_dst 0.0.0.0. ipi_spec_dst is the address a reply would come
 * from: the destination when it is ours, else (broadcast, multicast) the
 * interface's address (fib_compute_spec_dst).
 */
#define _GNU_SOURCE /* struct in6_pktinfo */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "lwip/ip.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/ip6.h"

#include "stk_priv.h"

/* Options asking for a control message, by level and name. */
static const struct {
    int level, name;
    uint16_t bit;
} cmsg_opts[] = {
    {IPPROTO_IP, IP_PKTINFO, STK_CMSG_PKTINFO},
    {IPPROTO_IP, IP_RECVTTL, STK_CMSG_TTL},
    {IPPROTO_IP, IP_RECVTOS, STK_CMSG_TOS},
    {IPPROTO_IPV6, IPV6_RECVPKTINFO, STK_CMSG_PKTINFO6},
    {IPPROTO_IPV6, IPV6_RECVHOPLIMIT, STK_CMSG_HOPLIMIT6},
    {IPPROTO_IPV6, IPV6_RECVTCLASS, STK_CMSG_TCLASS6},
    {IPPROTO_IPV6, IPV6_2292PKTINFO, STK_CMSG_2292PKTINFO},
    {IPPROTO_IPV6, IPV6_2292HOPLIMIT, STK_CMSG_2292HOPLIMIT},
    {SOL_SOCKET, SO_TIMESTAMP, STK_CMSG_TIMESTAMP},
};

static int64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint16_t
stk__cmsg_bit(int level, int name)
{
    for (size_t i = 0; i < sizeof(cmsg_opts) / sizeof(cmsg_opts[0]); i++)
        if (cmsg_opts[i].level == level && cmsg_opts[i].name == name)
            return cmsg_opts[i].bit;
    return 0;
}

void
stk__cmsg_note(const struct stk_sock *s, struct stk_rx_item *it)
{
    ip_addr_copy(it->dst, *ip_current_dest_addr());
    it->ts_ns = (s->rxcmsg & STK_CMSG_TIMESTAMP) ? now_ns() : 0;
    if (ip_current_is_v6()) {
        const struct ip6_hdr *h = ip6_current_header();

        it->tos = (uint8_t)IP6H_TC(h);
        it->ttl = IP6H_HOPLIM(h);
        it->ifindex = stk_ifindex();
    } else {
        const struct ip_hdr *h = ip4_current_header();

        it->tos = IPH_TOS(h);
        it->ttl = IPH_TTL(h);
        it->ifindex = (s->rxcmsg & (STK_CMSG_PKTINFO | STK_CMSG_PKTINFO6))
                          ? stk_ifindex()
                          : -1;
    }
}

/* The control buffer being filled: msg's, used bytes so far. */
struct cbuf {
    struct msghdr *msg;
    size_t used;
};

/* Linux's put_cmsg: the message, or what fits of it (header first; the
 * cmsg_len then says what fits) with MSG_CTRUNC; less room than a header
 * gives only MSG_CTRUNC. Padding bytes are left as they are. */
static void
put(struct cbuf *b, int level, int type, const void *data, size_t len)
{
    struct msghdr *msg = b->msg;
    size_t room = msg->msg_controllen - b->used;
    size_t cmlen = CMSG_LEN(len), space = CMSG_SPACE(len);
    struct cmsghdr cm;
    uint8_t *at;

    if (msg->msg_control == NULL || room < sizeof(cm)) {
        msg->msg_flags |= MSG_CTRUNC;
        return;
    }
    if (room < cmlen) {
        msg->msg_flags |= MSG_CTRUNC;
        cmlen = room;
    }
    at = (uint8_t *)msg->msg_control + b->used;
    memset(&cm, 0, sizeof(cm));
    cm.cmsg_len = cmlen;
    cm.cmsg_level = level;
    cm.cmsg_type = type;
    memcpy(at, &cm, sizeof(cm));
    memcpy(at + CMSG_LEN(0), data, cmlen - CMSG_LEN(0));
    b->used += space < room ? space : room;
}

static void
put_int(struct cbuf *b, int level, int type, int v)
{
    put(b, level, type, &v, sizeof(v));
}

static void
put_pktinfo6(struct cbuf *b, int type, const struct stk_rx_item *it)
{
    struct in6_pktinfo pi;

    memset(&pi, 0, sizeof(pi));
    stk__ip_to_in6(&it->dst, &pi.ipi6_addr);
    pi.ipi6_ifindex = it->ifindex > 0 ? (unsigned int)it->ifindex : 0;
    put(b, IPPROTO_IPV6, type, &pi, sizeof(pi));
}

/* ip_cmsg_recv_offset for the messages we keep. */
static void
put_ip(struct cbuf *b, uint16_t on, const struct stk_rx_item *it)
{
    if (on & STK_CMSG_PKTINFO) {
        struct in_pktinfo pi;

        memset(&pi, 0, sizeof(pi));
        pi.ipi_addr.s_addr = ip4_addr_get_u32(ip_2_ip4(&it->dst));
        if (it->ifindex >= 0) {
            pi.ipi_ifindex = it->ifindex;
            pi.ipi_spec_dst.s_addr =
                stk__is_local(&it->dst) ? pi.ipi_addr.s_addr : stk_local_ip();
        }
        put(b, IPPROTO_IP, IP_PKTINFO, &pi, sizeof(pi));
    }
    if (on & STK_CMSG_TTL)
        put_int(b, IPPROTO_IP, IP_TTL, it->ttl);
    if (on & STK_CMSG_TOS)
        put(b, IPPROTO_IP, IP_TOS, &it->tos, 1); /* one byte, as Linux */
}

void
stk__cmsg_put(const struct stk_sock *s, const struct stk_rx_item *it,
              struct msghdr *msg)
{
    struct cbuf b = {.msg = msg, .used = 0};
    uint16_t on = s->rxcmsg;

    if (on & STK_CMSG_TIMESTAMP) {
        /* sock_recv_timestamp, before the IP messages; a datagram queued
         * before the option was set is stamped when read (Linux's
         * __net_timestamp of an unstamped skb) */
        int64_t t = it->ts_ns != 0 ? it->ts_ns : now_ns();
        struct timeval tv = {.tv_sec = (time_t)(t / 1000000000),
                             .tv_usec = (suseconds_t)(t % 1000000000 / 1000)};

        put(&b, SOL_SOCKET, SO_TIMESTAMP, &tv, sizeof(tv));
    }
    if (on != 0) {
        if (s->inet6 && (on & STK_CMSG_PKTINFO6))
            put_pktinfo6(&b, IPV6_PKTINFO, it);
        if (IP_IS_V4_VAL(it->dst)) {
            put_ip(&b, on, it);
        } else {
            if (on & STK_CMSG_HOPLIMIT6)
                put_int(&b, IPPROTO_IPV6, IPV6_HOPLIMIT, it->ttl);
            if (on & STK_CMSG_TCLASS6)
                put_int(&b, IPPROTO_IPV6, IPV6_TCLASS, it->tos);
            if (on & STK_CMSG_2292PKTINFO)
                put_pktinfo6(&b, IPV6_2292PKTINFO, it);
            if (on & STK_CMSG_2292HOPLIMIT)
                put_int(&b, IPPROTO_IPV6, IPV6_2292HOPLIMIT, it->ttl);
        }
    }
    msg->msg_controllen = b.used;
}
